package handlers

import (
	"context"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/hookwire/hookwire/core"
)

// chatSystemTransform appends the Resumable Sessions block to a managed
// session's system prompt (4.2). In cache-stable mode the block travels
// with the user messages instead (4.4), so nothing is added here.
func (s *Server) chatSystemTransform(ctx context.Context, p *chatSystemTransformParams) (PatchResult, error) {
	in, out := p.Input, p.Output
	// The model of the request, where the client says it as
	// {providerID, modelID} (OpenCode 2's bridge: v2 has no chat.message,
	// so this is where a session's running model is learned; 1.x's model
	// object has no modelID and chat.message says it). A subagent call
	// for an agent without an agentModels entry runs on the parent's model
	// (4.7), and a failure without a model is charged to it (4.8).
	if m, ok := parseMessageModel(in.Model); ok && in.SessionID != "" {
		if s.store.Tracked().Running(in.SessionID) != m.Name() {
			s.store.Tracked().SetRunning(ctx, in.SessionID, m.Name())
		}
		s.router.switchApplied(ctx, in.SessionID, m.Name())
	}
	block := ""
	if s.cfg.TaskSessions.Enabled && !s.cfg.CacheStable && s.managed(in.SessionID) {
		block = core.ResumableSessionsBlockFor(s.store.Tasks().ResumableSessions(in.SessionID), s.cfg.ResumeArg())
	}
	s.transform.notePromptSystem(in.SessionID, out.System, block)
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

// notePromptSystem records the system prompt of session's request for
// prompt-cache accounting (4.9): a hash of the parts that came to
// hookwire, and one of the block hookwire adds (a part equal to the block
// is hookwire's, from an earlier pass).
func (t *transformState) notePromptSystem(session string, system []jsontext.Value, block string) {
	parts := make([]string, 0, len(system))
	for _, v := range system {
		if block != "" && rawString(v) == block {
			continue
		}
		parts = append(parts, string(v))
	}
	var blockHash uint64
	if block != "" {
		blockHash = core.HashStrings([]string{block})
	}
	t.store.PromptCache().System(session, core.HashStrings(parts), blockHash)
}
