package handlers

import (
	"context"
	"encoding/json"

	"github.com/hookwire/hookwire/sessions"
)

type sessionsListParams struct {
	SessionID string `json:"sessionID"`
}

// sessionsList answers sessions.list: remembered entries, newest first, of
// one parent session or of all.
func (s *Server) sessionsList(_ context.Context, raw json.RawMessage) (any, error) {
	var p sessionsListParams
	if len(raw) > 0 && string(raw) != "null" {
		if err := decodeParams(raw, &p); err != nil {
			return nil, err
		}
	}
	entries := s.store.List(p.SessionID)
	if entries == nil {
		entries = []sessions.Entry{}
	}
	return entries, nil
}
