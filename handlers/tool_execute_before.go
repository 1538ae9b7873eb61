package handlers

import (
	"context"
	"strings"

	"github.com/hookwire/hookwire/core"
	"github.com/hookwire/hookwire/sessions"
)

// toolExecuteBefore remembers a task call from a managed session and turns
// an alias in its resume argument (1.x task_id, OpenCode 2 sessionID: the
// tool's core.Delegation row) into the real session id (PROTOCOL.md 4.2). A
// call without a callID still gets its resume argument resolved, trimmed or
// removed; only remembering the pending call needs the callID.
func (s *Server) toolExecuteBefore(_ context.Context, p *toolExecuteBeforeParams) (PatchResult, error) {
	in, args := p.Input, p.Output.Args
	if !s.cfg.TaskSessions.Enabled || !s.cfg.IsTaskTool(in.Tool) || !s.managed(in.SessionID) {
		return noChange(), nil
	}
	d := core.DelegationFor(in.Tool)
	agent, _ := stringArg(args, d.AgentArg)
	if strings.TrimSpace(agent) == "" {
		return noChange(), nil
	}
	description, _ := stringArg(args, "description")
	prompt, _ := stringArg(args, "prompt")
	requested, isString := stringArg(args, d.ResumeArg)
	label := core.TaskLabel(description, prompt, agent)

	action, id := s.store.BeginCall(in.CallID, in.SessionID, agent, label, requested)
	switch action {
	case sessions.TaskIDReplace:
		if isString && id == requested {
			return noChange(), nil
		}
		return patch(Op{Op: "replace", Path: "/args/" + d.ResumeArg, Value: id}), nil
	case sessions.TaskIDRemove:
		return patch(Op{Op: "remove", Path: "/args/" + d.ResumeArg}), nil
	}
	return noChange(), nil
}
