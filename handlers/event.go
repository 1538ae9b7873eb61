package handlers

import (
	"context"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/hookwire/hookwire/contract"
	"github.com/hookwire/hookwire/sessions"
)

// event forgets a deleted session and everything remembered under it
// (4.2), and counts an assistant message's usage (message.updated, 4.9).
// Other event types are accepted and ignored.
func (s *Server) event(_ context.Context, p *eventParams) error {
	ev := p.Input.Event
	info := ev.Properties.Info
	id := rawString(info.ID)
	if ev.Type == contract.EventMessageUpdated {
		s.usage(rawString(info.SessionID), id, rawString(info.Role), rawString(info.ProviderID), rawString(info.ModelID), info.Tokens)
		return nil
	}
	if ev.Type == contract.EventSessionCreated {
		if id == "" {
			id = rawString(ev.Properties.SessionID)
		}
		s.sessionCreated(id, rawString(info.ParentID), rawString(info.Agent))
		return nil
	}
	if ev.Type != contract.EventSessionDeleted {
		return nil
	}
	if id == "" {
		id = rawString(ev.Properties.SessionID)
	}
	if id != "" {
		s.store.DeleteSession(id)
		s.log.Debug().Str("session", id).Msg("session deleted")
	}
	return nil
}

// tokens is an assistant message's info.tokens.
type tokens struct {
	Input  float64 `json:"input"`
	Output float64 `json:"output"`
	Cache  struct {
		Read  float64 `json:"read"`
		Write float64 `json:"write"`
	} `json:"cache"`
}

// usage counts an assistant message's usage for its session's cache
// figures (4.9). A message that is not an assistant's, has no tokens yet
// (OpenCode reports a message when it starts) or has tokens of the wrong
// shape is skipped.
func (s *Server) usage(session, message, role, provider, model string, raw jsontext.Value) {
	if role != "assistant" || raw.Kind() != '{' {
		return
	}
	var t tokens
	if err := jsonv2.Unmarshal(raw, &t); err != nil {
		s.log.Debug().Err(err).Str("session", session).Msg("message.updated: tokens not understood")
		return
	}
	n := []float64{t.Input, t.Output, t.Cache.Read, t.Cache.Write}
	sum := 0.0
	for _, v := range n {
		if !(v >= 0 && v <= 1<<53) {
			return
		}
		sum += v
	}
	if sum == 0 {
		return
	}
	if provider != "" || model != "" {
		model = provider + "/" + model
	}
	bust, inARow := s.store.CacheUsage(sessions.Usage{Session: session, Message: message, Model: model,
		Input: int64(t.Input), Output: int64(t.Output), CacheRead: int64(t.Cache.Read), CacheWrite: int64(t.Cache.Write)})
	if bust != nil {
		ev := s.log.Info()
		if inARow {
			ev = s.log.Warn()
		}
		ev.Str("session", session).Str("message", bust.Message).Int64("tokensLost", bust.TokensLost).
			Str("cause", bust.Cause).Bool("byHookwire", bust.ByHookwire).Bool("inARow", inARow).Msg("prompt cache bust")
	}
	if bust != nil && inARow {
		if sum, ok := cacheSummaryOf(s.store.CacheList(), session); ok {
			s.busts.tell(s.log, bust.Message, sum)
		}
	}
}
