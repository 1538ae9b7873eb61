package handlers

import (
	"context"
	"strings"

	"github.com/hookwire/hookwire/core"
)

// toolExecuteAfter records the task session a call created or resumed, and
// appends retry guidance to a delegate tool's returned error (4.1, 4.2).
// A failed call (input.status "error", OpenCode 2) carries its error text
// as output: the errored-part rule applies to it, and a child it names is
// remembered with its run failed.
func (s *Server) toolExecuteAfter(ctx context.Context, p *toolExecuteAfterParams) (PatchResult, error) {
	in, out := p.Input, p.Output
	failed := in.Status == "error"
	text, ok := stringValue(out.Output)
	if !ok {
		// Not a string: there is nothing to parse, but the pending call is
		// done all the same (an outcome with no id forgets nothing).
		if s.cfg.TaskSessions.Enabled && in.CallID != "" {
			s.store.Tasks().CompleteCall(ctx, in.CallID, core.TaskOutcome{})
		}
		return noChange(), nil
	}
	d := core.DelegationFor(in.Tool)
	// A call whose resume argument named an unknown alias ran fresh: the
	// model reads that after the tool's own output (issue 42 item 4).
	note := ""
	if alias, ok := s.unknownResumes.take(in.CallID); ok {
		note = unknownResumeNote(d.ResumeArg, alias)
	}
	var outcome core.TaskOutcome
	if s.cfg.TaskSessions.Enabled && in.CallID != "" {
		outcome = d.ParseOutput(text)
		if failed && outcome.TaskID != "" {
			outcome.Error = text
		}
		s.store.Tasks().CompleteCall(ctx, in.CallID, outcome)
		if s.cfg.IsTaskTool(in.Tool) {
			s.subagentTask(ctx, in.SessionID, outcome.TaskID, d.Generation == 2, failed, text)
		}
	}
	if d.Generation == 2 && s.cfg.IsTaskTool(in.Tool) {
		// The model the call ran on, for the child (4.7, 4.8).
		child := outcome.TaskID
		if child == "" {
			child = d.ParseOutput(text).TaskID
		}
		s.router.subagentDone(ctx, in, child, text, failed)
	}
	// reply is the output the model reads: out, then the note, if any.
	reply := func(out string) (PatchResult, error) {
		if note != "" {
			out += "\n\n" + note
		}
		if out == text {
			return noChange(), nil
		}
		return patch(Op{Op: "replace", Path: "/output", Value: out}), nil
	}
	if !s.cfg.DelegateRetry.Enabled || !s.cfg.IsTaskTool(in.Tool) {
		return reply(text)
	}
	opts := s.cfg.RetryOptionsFor(in.Tool)
	if outcome.TaskID != "" {
		// The example resumes the failed call's own child under its own
		// agent (issue 40: it named the first configured subagent and an
		// alias another agent held).
		opts.Resume, opts.Agent = s.store.Tasks().ResumeName(in.SessionID, outcome.TaskID)
	}
	det := core.DetectTaskError(text, failed, opts)
	if det == nil || (failed && strings.Contains(text, det.Guidance)) {
		return reply(text)
	}
	return reply(core.WithGuidance(text, det))
}
