package handlers

import (
	"context"
	"errors"

	"github.com/hookwire/hookwire/rpc"
	"github.com/hookwire/hookwire/sessions"

	"github.com/hookwire/hookwire/subagents"
)

// subagentsList answers subagents.list (PROTOCOL.md 4.10, 5): one page of
// a parent's subagents with the parent's figures.
func (s *Server) subagentsList(ctx context.Context, p *subagentsListParams) (subagents.Page, error) {
	limit, err := subagentsLimit(p.Limit)
	if err != nil {
		return subagents.Page{}, err
	}
	if s.subs.svc == nil {
		if p.Cursor != "" {
			if _, err := subagents.DecodeCursor(p.Cursor); err != nil {
				return subagents.Page{}, invalidParams("cursor: %v", err)
			}
		}
		return subagents.Page{Parent: subagents.Parent{SessionID: p.SessionID}, Subagents: []subagents.Row{}}, nil
	}
	page, err := s.subs.svc.SubagentsOf(ctx, p.SessionID, p.Cursor, limit)
	if err == nil {
		s.fromStore(page.Subagents)
	}
	return subagentsPage(page, err)
}

// fromStore fills a page's aliases and switches from the store where it
// holds them (a store in memory has none in the records' database): an
// alias the entries hold is resumable. What the store does not hold is
// left as the database said (another process's entries and switches).
func (s *Server) fromStore(rows []subagents.Row) {
	entries := map[string][]sessions.Entry{}
	for i := range rows {
		r := &rows[i]
		list, ok := entries[r.ParentID]
		if !ok {
			list = s.store.Tasks().List(r.ParentID)
			entries[r.ParentID] = list
		}
		for _, e := range list {
			if e.TaskID == r.SessionID {
				r.Alias, r.Resumable = e.Alias, true
				break
			}
		}
		if sw := s.store.Tracked().Switches(r.SessionID); len(sw) > 0 {
			recs := make([]subagents.SwitchRecord, 0, len(sw))
			for _, x := range sw {
				recs = append(recs, subagents.SwitchRecord{From: x.From, To: x.To, Reason: x.Reason, At: x.At})
			}
			r.Switches = subagents.Switches(recs)
		}
	}
}

// subagentsPage is a page read, or the error a client gets for it.
func subagentsPage(page subagents.Page, err error) (subagents.Page, error) {
	switch {
	case errors.Is(err, subagents.ErrBadCursor):
		return subagents.Page{}, invalidParams("cursor: %v", err)
	case err != nil:
		return subagents.Page{}, rpc.Errorf(rpc.CodeInternalError, "reading the subagents' records: %v", err)
	}
	return page, nil
}

// subagentsLimit is subagents.list's page size: absent or 0 the default,
// above the maximum the maximum, negative -32602.
func subagentsLimit(limit int) (int, error) {
	switch {
	case limit < 0:
		return 0, invalidParams("limit: must be 1 or more (absent: %d)", subagents.DefaultLimit)
	case limit == 0:
		return subagents.DefaultLimit, nil
	}
	return min(limit, subagents.MaxLimit), nil
}
