package handlers

import (
	"context"

	"github.com/hookwire/hookwire/core"
)

// toolExecuteAfter records the task session a call created or resumed, and
// appends retry guidance to a delegate tool's returned error (4.1, 4.2).
func (s *Server) toolExecuteAfter(_ context.Context, p *toolExecuteAfterParams) (PatchResult, error) {
	in, out := p.Input, p.Output
	text, ok := stringValue(out.Output)
	if !ok {
		// Not a string: there is nothing to parse, but the pending call is
		// done all the same (an outcome with no id forgets nothing).
		if s.cfg.TaskSessions.Enabled && in.CallID != "" {
			s.store.CompleteCall(in.CallID, core.TaskOutcome{})
		}
		return noChange(), nil
	}
	if s.cfg.TaskSessions.Enabled && in.CallID != "" {
		s.store.CompleteCall(in.CallID, core.ParseTaskOutput(text))
	}
	if !s.cfg.DelegateRetry.Enabled || !s.cfg.IsTaskTool(in.Tool) {
		return noChange(), nil
	}
	d := core.DetectTaskError(text, false, s.cfg.RetryOptions())
	if d == nil {
		return noChange(), nil
	}
	return patch(Op{Op: "replace", Path: "/output", Value: core.WithGuidance(text, d)}), nil
}
