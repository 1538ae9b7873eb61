package handlers

import (
	"context"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/hookwire/hookwire/contract"
	"github.com/hookwire/hookwire/core"
)

// event forgets a deleted session and everything remembered under it
// (4.2), counts an assistant message's usage (message.updated, 4.9) and
// sees a pending model switch applied (4.8).
// Other event types are accepted and ignored.
func (s *Server) event(ctx context.Context, p *eventParams) error {
	ev := p.Input.Event
	info := ev.Properties.Info
	id := rawString(info.ID)
	if ev.Type == contract.EventMessageUpdated {
		// An assistant message on a pending switch's model: the switch applied (4.8).
		if rawString(info.Role) == "assistant" && rawString(info.ProviderID) != "" && rawString(info.ModelID) != "" {
			s.router.switchApplied(ctx, rawString(info.SessionID), rawString(info.ProviderID)+"/"+rawString(info.ModelID))
		}
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
	if ev.Type == contract.EventSessionModelSelected {
		// OpenCode 2 set the session's model (switchModel): a pending
		// switch to it applied (4.8).
		if m, ok := selectedModel(ev.Properties.Model); ok {
			s.router.switchApplied(ctx, rawString(ev.Properties.SessionID), m.Name())
		}
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

// selectedModel is session.model.selected's model, OpenCode 2's Model.Ref
// {providerID, id, variant?} (or {providerID, modelID}).
func selectedModel(raw jsontext.Value) (core.ModelRef, bool) {
	if m, ok := parseMessageModel(raw); ok {
		return m, true
	}
	if raw.Kind() != '{' {
		return core.ModelRef{}, false
	}
	var v struct {
		ProviderID jsontext.Value `json:"providerID"`
		ID         jsontext.Value `json:"id"`
	}
	if jsonv2.Unmarshal(raw, &v) != nil {
		return core.ModelRef{}, false
	}
	m := core.ModelRef{ProviderID: rawString(v.ProviderID), ModelID: rawString(v.ID)}
	return m, m.ProviderID != "" && m.ModelID != ""
}
