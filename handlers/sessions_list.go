package handlers

import (
	"context"

	"github.com/hookwire/hookwire/rpc"
	"github.com/hookwire/hookwire/sessions"
)

type sessionsListParams struct {
	SessionID string `json:"sessionID"`
}

// sessionsList answers sessions.list: remembered entries, newest first, of
// one parent session or of all.
func (s *Server) sessionsList(_ context.Context, req rpc.Request) (any, error) {
	var p sessionsListParams
	if len(req.Params) > 0 && string(req.Params) != "null" {
		if err := decodeParams(req.Params, &p); err != nil {
			return nil, err
		}
	}
	entries := s.store.List(p.SessionID)
	if entries == nil {
		entries = []sessions.Entry{}
	}
	return entries, nil
}
