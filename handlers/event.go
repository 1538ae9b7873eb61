package handlers

import (
	"context"

	"github.com/hookwire/hookwire/contract"
)

// event forgets a deleted session and everything remembered under it
// (4.2), counts an assistant message's usage (message.updated, 4.9) and
// records subagents (4.10).
// Other event types are accepted and ignored.
func (s *Server) event(ctx context.Context, p *eventParams) error {
	ev := p.Input.Event
	info := ev.Properties.Info
	id := rawString(info.ID)
	s.subagentEvent(ctx, p)
	if ev.Type == contract.EventMessageUpdated {
		s.cache.usage(ctx, s.store.PromptCache(), s.log, rawString(info.SessionID), id, rawString(info.Role), rawString(info.ProviderID), rawString(info.ModelID), info.Tokens)
		return nil
	}
	if ev.Type == contract.EventSessionCreated {
		if id == "" {
			id = rawString(ev.Properties.SessionID)
		}
		s.router.sessionCreated(ctx, id, rawString(info.ParentID), rawString(info.Agent))
		return nil
	}
	if ev.Type != contract.EventSessionDeleted {
		return nil
	}
	if id == "" {
		id = rawString(ev.Properties.SessionID)
	}
	if id != "" {
		s.store.DeleteSession(ctx, id)
		s.log.Debug().Str("session", id).Msg("session deleted")
	}
	return nil
}
