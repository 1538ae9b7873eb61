package handlers

import (
	"context"
	"fmt"
	"strings"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/hookwire/hookwire/core"
	"github.com/hookwire/hookwire/sessions"
)

// toolExecuteBefore remembers a task call from a managed session and turns
// an alias in its resume argument (1.x task_id, OpenCode 2 sessionID: the
// tool's core.Delegation row) into the real session id (PROTOCOL.md 4.2). A
// call without a callID still gets its resume argument resolved, trimmed or
// removed; only remembering the pending call needs the callID.
func (s *Server) toolExecuteBefore(ctx context.Context, p *toolExecuteBeforeParams) (PatchResult, error) {
	in, args := p.Input, p.Output.Args
	if !s.cfg.IsTaskTool(in.Tool) {
		return noChange(), nil
	}
	d := core.DelegationFor(in.Tool)
	agent, _ := stringArg(args, d.AgentArg)
	if strings.TrimSpace(agent) == "" {
		return noChange(), nil
	}
	ops := s.resumeOps(ctx, in, args, d, agent)
	if d.Generation == 2 {
		// OpenCode 2: the call names the child's model (4.7).
		ops = append(ops, s.router.subagentModel(in, args, agent)...)
	}
	return patch(ops...), nil
}

// resumeOps remembers the call and resolves its resume argument (4.2).
func (s *Server) resumeOps(ctx context.Context, in *toolInput, args map[string]jsontext.Value, d core.Delegation, agent string) []Op {
	if !s.cfg.TaskSessions.Enabled || !s.managed(in.SessionID) {
		return nil
	}
	description, _ := stringArg(args, "description")
	prompt, _ := stringArg(args, "prompt")
	requested, isString := stringArg(args, d.ResumeArg)
	label := core.TaskLabel(description, prompt, agent)

	action, id := s.store.Tasks().BeginCall(ctx, in.CallID, in.SessionID, agent, label, requested)
	switch action {
	case sessions.TaskIDReplace:
		if isString && id == requested {
			return nil
		}
		return []Op{{Op: "replace", Path: "/args/" + d.ResumeArg, Value: id}}
	case sessions.TaskIDRemove:
		s.unknownResumes.note(in.CallID, requested)
		return []Op{{Op: "remove", Path: "/args/" + d.ResumeArg}}
	}
	return nil
}

// maxUnknownResumes bounds the calls waiting for their unknown-alias note.
const maxUnknownResumes = 256

// unknownResumes are the calls whose resume argument named an alias no
// entry holds (forgotten, pruned, or never made), by call id: each runs as
// a fresh call, and its tool.execute.after says so (4.2). At most
// maxUnknownResumes wait; beyond, they are all dropped (a call whose after
// never came).
type unknownResumes map[string]string

// note remembers that callID's resume argument named alias.
func (u *unknownResumes) note(callID, alias string) {
	alias = strings.TrimSpace(alias)
	if callID == "" || alias == "" || len(alias) > sessions.MaxIDBytes {
		return
	}
	if *u == nil || len(*u) >= maxUnknownResumes {
		*u = unknownResumes{}
	}
	(*u)[callID] = alias
}

// take returns and forgets the alias noted for callID.
func (u unknownResumes) take(callID string) (string, bool) {
	alias, ok := u[callID]
	delete(u, callID)
	return alias, ok
}

// unknownResumeNote is what a call that named an unknown alias tells the
// model, after the tool's output.
func unknownResumeNote(arg, alias string) string {
	return fmt.Sprintf("[hookwire] %s %q named no session hookwire remembers (forgotten, or never made), so this call started a new session with no earlier history.", arg, alias)
}
