package handlers

import (
	"context"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/hookwire/hookwire/contract"
	"github.com/hookwire/hookwire/rpc"
)

type eventParams struct {
	Input *struct {
		Event *struct {
			Type       string `json:"type"`
			Properties struct {
				SessionID jsontext.Value `json:"sessionID"`
				Info      struct {
					ID       jsontext.Value `json:"id"`
					ParentID jsontext.Value `json:"parentID"`
					Agent    jsontext.Value `json:"agent"`
				} `json:"info"`
			} `json:"properties"`
		} `json:"event"`
	} `json:"input"`
}

// event forgets a deleted session and everything remembered under it (4.2).
// Other event types are accepted and ignored.
func (s *Server) event(_ context.Context, req rpc.Request) (any, error) {
	var p eventParams
	if err := decodeParams(req.Params, &p); err != nil {
		return nil, err
	}
	if p.Input == nil {
		return nil, missing("input")
	}
	if p.Input.Event == nil {
		return nil, missing("input.event")
	}
	ev := p.Input.Event
	info := ev.Properties.Info
	id := rawString(info.ID)
	if ev.Type == contract.EventSessionCreated {
		if id == "" {
			id = rawString(ev.Properties.SessionID)
		}
		s.sessionCreated(id, rawString(info.ParentID), rawString(info.Agent))
		return nil, nil
	}
	if ev.Type != contract.EventSessionDeleted {
		return nil, nil
	}
	if id == "" {
		id = rawString(ev.Properties.SessionID)
	}
	if id != "" {
		s.store.DeleteSession(id)
		s.log.Debug().Str("session", id).Msg("session deleted")
	}
	return nil, nil
}
