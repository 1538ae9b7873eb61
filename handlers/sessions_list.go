package handlers

import (
	"context"

	"github.com/hookwire/hookwire/sessions"
)

// sessionsList answers sessions.list: remembered entries, newest first, of
// one parent session or of all.
func (s *Server) sessionsList(_ context.Context, p *sessionsListParams) ([]sessions.Entry, error) {
	entries := s.store.List(p.SessionID)
	if entries == nil {
		entries = []sessions.Entry{}
	}
	return entries, nil
}
