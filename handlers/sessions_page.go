package handlers

import (
	"context"
	"errors"

	"github.com/hookwire/hookwire/sessions"
)

// sessionsPage answers sessions.page: one page of sessions.list's
// entries, newest first, and the cursor of the next.
func (s *Server) sessionsPage(ctx context.Context, p *sessionsPageParams) (sessions.EntryPage, error) {
	if err := checkPageParams(p); err != nil {
		return sessions.EntryPage{}, err
	}
	page, err := s.store.Tasks().Page(ctx, p.SessionID, p.Cursor, p.Limit)
	if errors.Is(err, sessions.ErrBadCursor) {
		return sessions.EntryPage{}, invalidParams("cursor: %v", err)
	}
	return page, err
}

// checkPageParams refuses a negative limit (0 or absent is the default;
// one over sessions.MaxListLimit gives that many).
func checkPageParams(p *sessionsPageParams) error {
	if p.Limit < 0 {
		return invalidParams("limit: must be 1 or more (absent: %d)", sessions.DefaultListLimit)
	}
	return nil
}
