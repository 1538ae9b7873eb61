package handlers

import (
	"context"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/hookwire/hookwire/core"
	"github.com/hookwire/hookwire/rpc"
)

type systemInput struct {
	SessionID string `json:"sessionID"`
}

type systemOutput struct {
	System []jsontext.Value `json:"system"`
}

// chatSystemTransform appends the Resumable Sessions block to a managed
// session's system prompt (4.2). In cache-stable mode the block travels
// with the user messages instead (4.4), so nothing is added here.
func (s *Server) chatSystemTransform(_ context.Context, req rpc.Request) (any, error) {
	in, out, err := decodeHook[systemInput, systemOutput](req.Params)
	if err != nil {
		return nil, err
	}
	if !s.cfg.TaskSessions.Enabled || s.cfg.CacheStable || !s.managed(in.SessionID) {
		return noChange(), nil
	}
	block := core.ResumableSessionsBlock(s.store.ResumableSessions(in.SessionID))
	if block == "" {
		return noChange(), nil
	}
	if out.System == nil {
		// No array to append to (absent or null): make one.
		return patch(Op{Op: "add", Path: "/system", Value: []string{block}}), nil
	}
	for _, existing := range out.System {
		if rawString(existing) == block {
			return noChange(), nil // already there: never twice
		}
	}
	return patch(Op{Op: "add", Path: "/system/-", Value: block}), nil
}
