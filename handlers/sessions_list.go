package handlers

import (
	"context"

	"github.com/hookwire/hookwire/sessions"
)

// sessionsList answers sessions.list: remembered entries, newest first, of
// one parent session or of all; of all, at most sessions.DefaultListLimit
// (the newest: sessions.page pages through the rest), read a page from
// the database without holding the store, so the hooks never wait for a
// listing (issue 30 item 13).
func (s *Server) sessionsList(ctx context.Context, p *sessionsListParams) ([]sessions.Entry, error) {
	if p.SessionID != "" {
		entries := s.store.Tasks().List(p.SessionID)
		if entries == nil {
			entries = []sessions.Entry{}
		}
		return entries, nil
	}
	page, err := s.store.Tasks().Page(ctx, "", "", sessions.DefaultListLimit)
	if err != nil {
		return nil, err
	}
	return page.Entries, nil
}
