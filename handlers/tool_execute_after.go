package handlers

import (
	"context"
	"encoding/json"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/hookwire/hookwire/core"
	"github.com/hookwire/hookwire/rpc"
)

type toolAfterParams struct {
	Input  *toolInput `json:"input"`
	Output *struct {
		Output jsontext.Value `json:"output"`
	} `json:"output"`
}

// toolExecuteAfter records the task session a call created or resumed, and
// appends retry guidance to a delegate tool's returned error (4.1, 4.2).
func (s *Server) toolExecuteAfter(_ context.Context, raw json.RawMessage) (any, error) {
	var p toolAfterParams
	if err := decodeParams(raw, &p); err != nil {
		return nil, err
	}
	if p.Input == nil {
		return nil, missing("input")
	}
	if p.Output == nil {
		return nil, missing("output")
	}
	text, ok := stringValue(p.Output.Output)
	if !ok {
		// Not a string: there is nothing to parse, but the pending call is
		// done all the same (CompleteCall with no id forgets nothing).
		if s.cfg.TaskSessions.Enabled && p.Input.CallID != "" {
			s.store.CompleteCall(p.Input.CallID, "")
		}
		return noChange(), nil
	}
	if s.cfg.TaskSessions.Enabled && p.Input.CallID != "" {
		s.store.CompleteCall(p.Input.CallID, text)
	}
	if !s.cfg.DelegateRetry.Enabled || !s.cfg.isTaskTool(p.Input.Tool) {
		return noChange(), nil
	}
	d := core.DetectTaskError(text, false, s.cfg.retryOptions())
	if d == nil {
		return noChange(), nil
	}
	return patch(rpc.Op{Op: "replace", Path: "/output", Value: core.WithGuidance(text, d)}), nil
}
