package handlers

import (
	"context"
	"errors"
	"slices"
	"strings"

	"github.com/hookwire/hookwire/contract"
	"github.com/hookwire/hookwire/core"
	"github.com/hookwire/hookwire/incremental"
	"github.com/hookwire/hookwire/rpc"
)

// CodeUnknownBase answers an incremental request whose base the sidecar
// does not hold (PROTOCOL.md 8): after a restart, after an eviction, or
// when another request for the session came first. The client resends in
// full.
const CodeUnknownBase = contract.CodeUnknownBase

// The histories held for sync (4.6): per message, the handler's own words
// (local) beside the sync bookkeeping, and what it derives from the
// message's content and the config (derived), held once per message.
type (
	histories = incremental.Store[local, derived]
	entry     = incremental.Entry[local, derived]
)

// local is what a pass over the history reads of each message without
// touching what a base holds of it: its info.sessionID, interned
// (Server.intern), and flags worked out by derive.
type local struct {
	session string
	flags   uint8
}

// Flags of a message (local.flags), set by Server.derive.
const (
	// flagUser: a user message.
	flagUser uint8 = 1 << iota
	// flagStable: a user message with a parts array (stableParts).
	flagStable
	// flagSetsAgent: a user message naming its session and agent.
	flagSetsAgent
	// flagThrown: it has errored task parts with a callID (thrown).
	flagThrown
	// flagGuided: it has guidance (guidance).
	flagGuided
)

// derived is what the handler derives from a message's content and the
// config alone (Server.derive). Nothing in it changes once derived, but
// for the memo of hasText; a config change (agents.update) derives it
// again.
//
// Its fields are in the order a request reads them (the core form's ids,
// then what cache-stable mode asks of every user message), so that a
// message kept from the base costs as few cache lines as can be.
type derived struct {
	core core.Message
	// wantsReminder is core.WantsReminder of the message.
	wantsReminder bool
	// hasText remembers whether a part's text is textChecked: the block
	// frozen for a message is the same string on every request.
	hasText     bool
	converted   bool
	textChecked string
	// thrown are its errored task parts' calls, for failThrownTasks.
	thrown []thrownCall
	// guidance are its ops of 4.1 (guideErroredTasks).
	guidance []incremental.Op
}

// thrownCall is an errored task part's callID and error text.
type thrownCall struct {
	callID, text string
}

// The ops of a message (incremental.Op): part -1 adds a synthetic text
// part at the end of its parts, part j >= 0 replaces part j's state.error
// with text.
const addedPart = -1

// chatMessagesTransform learns sessions' agents from user messages, adds
// guidance to errored task tool parts (4.1), and adds the phase reminder
// (4.3) or, in cache-stable mode, the frozen blocks and reminders (4.4).
// A request may carry only what changed since a base (4.6): the history is
// rebuilt from it first, so both forms take the same path from here.
func (s *Server) chatMessagesTransform(ctx context.Context, p *chatMessagesTransformParams) (any, error) {
	bases := s.transform.histories()
	h, err := s.transform.history(bases, p)
	if err != nil {
		return nil, err
	}
	defer h.Discard() // a history not held leaves its base as it was
	history := h.Entries
	for i := range history {
		if m := &history[i]; m.NeedsDerive() { // a message kept from a base was derived then
			s.transform.derive(m)
		}
	}
	s.transform.failThrownTasks(ctx, history)
	// A session's user messages mostly name the same agent: the store is
	// told each session's agent once per run of equal ones (each call is a
	// look at the database, PROTOCOL.md 6), which leaves it as telling it
	// every message would.
	var setSession, setAgent string
	for i := range history {
		if m := &history[i]; m.Local.flags&flagSetsAgent != 0 {
			c := &m.Derived.core
			if c.SessionID == setSession && c.Agent == setAgent {
				continue
			}
			setSession, setAgent = c.SessionID, c.Agent
			s.store.Tracked().SetAgent(ctx, c.SessionID, c.Agent)
		}
	}
	// Each message's ops, relative to it; a base keeps them, so that a
	// message whose ops are those its base message got can be answered
	// with a reapply run (4.6) instead of the ops again.
	per := bases.PerMessage(len(history))
	if s.cfg.DelegateRetry.Enabled {
		for i := range history {
			if m := &history[i]; m.Local.flags&flagGuided != 0 {
				per[i] = m.StartOps(m.Derived.guidance)
			}
		}
	}
	if s.cfg.CacheStable {
		s.transform.stableParts(ctx, history, per)
	} else if i := reminderTarget(history); i >= 0 {
		per[i] = history[i].AddOp(per[i], incremental.Op{Part: addedPart, Text: s.cfg.ReminderConfig().ReminderText()})
	}
	s.transform.notePromptMessages(p, history, per)
	if p.Sync == nil {
		ops, _ := materialize(per, nil, 0)
		return patch(ops...), nil
	}
	var runs []incremental.Run
	budget := int64(0) // the full form's reply is as large as its request makes it
	if p.Sync.Reapply {
		runs = incremental.Runs(history, per)
	}
	if p.Sync.Base != nil {
		budget = bases.Budget()
	}
	ops, err := materialize(per, runs, budget)
	if err != nil {
		return nil, err // the base is kept as it was (h.Discard)
	}
	return transformResult{Patch: ops, Reapply: runs, Base: h.Commit(p.Sync.Session, per)}, nil
}

// notePromptMessages records the history of a request, as it leaves
// hookwire, for prompt-cache accounting (4.9): per message its id, its
// content and hookwire's ops, hashed. The session is sync's, else the
// newest message's.
func (t *transformState) notePromptMessages(p *chatMessagesTransformParams, history []entry, per [][]incremental.Op) {
	session := ""
	if p.Sync != nil {
		session = p.Sync.Session
	}
	for i := len(history) - 1; i >= 0 && session == ""; i-- {
		session = history[i].Local.session
	}
	if session == "" {
		return
	}
	n := min(len(history), core.MaxPrintMessages)
	pp := &core.PromptPrint{Messages: make([]core.MessagePrint, n), Truncated: n < len(history)}
	for i := range n {
		m := &history[i]
		pp.Messages[i] = core.MessagePrint{ID: core.HashID(m.Wire.Info.ID), Content: m.ContentHash(), Ops: t.histories().HashOps(per[i])}
	}
	t.store.PromptCache().Prompt(session, pp)
}

// history returns the history a request stands for: output's, or its
// base's with its items applied. A request that does not fit changes
// nothing.
func (t *transformState) history(bases *histories, p *chatMessagesTransformParams) (*incremental.History[local, derived], error) {
	if p.Sync == nil || p.Sync.Base == nil {
		if p.Output == nil {
			return nil, missing("output")
		}
		return bases.Full(p.Output.Messages), nil
	}
	if p.Output != nil {
		return nil, invalidParams("output and sync.base do not go together: an incremental request carries sync.messages only")
	}
	if p.Sync.Messages == nil {
		return nil, missing("sync.messages")
	}
	h, err := bases.Rebuild(p.Sync.Session, *p.Sync.Base, *p.Sync.Messages)
	switch {
	case errors.Is(err, incremental.ErrUnknownBase):
		return nil, &rpc.Error{Code: CodeUnknownBase, Message: err.Error()}
	case err != nil:
		return nil, invalidParams("%s", err.Error())
	}
	return h, nil
}

// derive works out what the handler reads of a message that follows from
// its content and the config alone: its core form, its errored task
// parts' calls (failThrownTasks), its guidance (4.1), whether it wants
// the reminder (4.3). A base keeps it, so a request that keeps the message
// only reads it.
func (t *transformState) derive(m *entry) {
	d := &m.Derived
	if !d.converted {
		d.core, d.converted = toCoreMessage(m.Wire), true
	}
	c := &d.core
	d.thrown, d.guidance = nil, nil
	for _, p := range m.Wire.Parts {
		if p.Type != "tool" || p.CallID == "" || p.State == nil || p.State.Status != "error" || !t.cfg.IsTaskTool(p.Tool) {
			continue
		}
		text, _ := p.State.Error.(string)
		d.thrown = append(d.thrown, thrownCall{callID: p.CallID, text: text})
	}
	if t.cfg.DelegateRetry.Enabled {
		d.guidance = slices.Clip(t.guidance(c))
	}
	d.wantsReminder = core.WantsReminder(*c, t.cfg.ReminderConfig())
	m.Local.session = t.intern(c.SessionID)
	var flags uint8
	if c.Role == "user" {
		flags |= flagUser
		if c.Parts != nil {
			flags |= flagStable
		}
		if c.SessionID != "" && c.Agent != "" {
			flags |= flagSetsAgent
		}
	}
	if len(d.thrown) > 0 {
		flags |= flagThrown
	}
	if len(d.guidance) > 0 {
		flags |= flagGuided
	}
	m.Local.flags = flags
	m.MarkDerived()
}

// reminderTarget is the message that gets the reminder under 4.3, or -1
// (core.ReminderTarget), by what derive worked out of each message.
func reminderTarget(history []entry) int {
	return core.ReminderTarget(len(history), func(i int) (bool, bool) {
		m := &history[i]
		user := m.Local.flags&flagUser != 0
		return user, user && m.Derived.wantsReminder
	})
}

// toCoreMessage converts one message. The result shares nothing that the
// handler changes: a base keeps it for the requests that keep the message.
func toCoreMessage(w incremental.Message) core.Message {
	agent, _ := w.Info.Agent.(string)
	m := core.Message{ID: w.Info.ID, Role: w.Info.Role, Agent: agent, SessionID: w.Info.SessionID}
	if w.Parts != nil {
		// Parts stays nil when the message has no parts array (absent
		// or null): there is nothing to append a part to.
		m.Parts = make([]core.Part, len(w.Parts))
	}
	for j, wp := range w.Parts {
		part := core.Part{Type: wp.Type, Synthetic: wp.Synthetic, Tool: wp.Tool}
		if wp.Text != nil && incremental.TextRead(wp.Type) {
			part.Text, part.HasText = *wp.Text, true
		}
		if wp.State != nil {
			part.StateStatus = wp.State.Status
			part.StateError, part.HasError = wp.State.Error.(string)
		}
		m.Parts[j] = part
	}
	return m
}

// guidance is a message's ops of 4.1: guidance added to every errored
// task tool part whose error matches a row. It is a function of the part
// alone, so a history gets the same bytes on every request; the answer is
// also remembered per error text (transformState.guidanceFor), as a long history repeats
// its errors.
func (t *transformState) guidance(m *core.Message) []incremental.Op {
	var ops []incremental.Op
	for j, part := range m.Parts {
		if part.Type != "tool" || !t.cfg.IsTaskTool(part.Tool) || part.StateStatus != "error" || !part.HasError {
			continue
		}
		if guided, ok := t.guidedError(part.Tool, part.StateError); ok {
			ops = append(ops, incremental.Op{Part: j, Text: guided})
		}
	}
	return ops
}

// guidedError returns an errored task part's error with guidance added,
// and whether there is any to add.
func (t *transformState) guidedError(tool, text string) (string, bool) {
	// 1.x's rows are keyed by the text alone, as before; another
	// generation's tool has its own rows (core.DelegationFor).
	opts := t.cfg.RetryOptionsFor(tool)
	key := text
	if opts.Tool.Generation != core.TaskDelegation.Generation {
		key = opts.Tool.Tool + "\x00" + text
	}
	g := t.guidanceFor(key, text, func() guidedError {
		// OpenCode 2's failed call got its guidance in execute.after already.
		already := key != text && strings.Contains(text, core.GuidanceHeader)
		if d := core.DetectTaskError(text, true, opts); d != nil && !already && !strings.Contains(text, d.Guidance) {
			return guidedError{core.WithGuidance(text, d), true}
		}
		return guidedError{}
	})
	return g.text, g.ok
}

// stableParts implements cache-stable mode (4.4): core.StableRule says
// what each user message with a parts array carries; the store freezes a
// message's block when it is first asked for.
func (t *transformState) stableParts(ctx context.Context, history []entry, per [][]incremental.Op) {
	rule := core.StableRule{Blocks: t.cfg.TaskSessions.Enabled, Reminder: t.cfg.ReminderConfig()}
	reminder := rule.Reminder.ReminderText()
	t.retainFrozen(ctx, history)
	for i := range history {
		m := &history[i]
		if m.Local.flags&flagStable == 0 {
			continue
		}
		c := &m.Derived.core
		agent := t.messageAgent(c)
		if rule.CarriesBlock(c.ID, c.SessionID, t.cfg.IsManagedAgent(agent)) {
			block := t.store.Frozen().Block(ctx, c.SessionID, c.ID, func() string {
				return core.ResumableSessionsBlockFor(t.store.Tasks().ResumableSessions(c.SessionID), t.cfg.ResumeArg())
			})
			if core.AddsBlock(block, block != "" && m.Derived.hasPartText(block)) {
				per[i] = m.AddOp(per[i], incremental.Op{Part: addedPart, Text: block})
			}
		}
		if rule.CarriesReminder(agent, m.Derived.wantsReminder) {
			per[i] = m.AddOp(per[i], incremental.Op{Part: addedPart, Text: reminder})
		}
	}
}

// retainFrozen forgets the frozen blocks of messages that are no longer in
// the history (OpenCode compacted them away), so a long session keeps room
// to freeze its new messages. The store asks only for a full session, so
// the history's ids are collected only then.
func (t *transformState) retainFrozen(ctx context.Context, history []entry) {
	var seen map[string]bool
	prev := ""
	for i := range history {
		session := history[i].Local.session
		if session == "" || session == prev { // interned: mostly the same pointer
			continue
		}
		prev = session
		if seen[session] {
			continue
		}
		if seen == nil {
			seen = map[string]bool{}
		}
		seen[session] = true
		var ids map[string]bool
		t.store.Frozen().Retain(ctx, session, func(id string) bool {
			if ids == nil {
				ids = map[string]bool{}
				for j := range history {
					if m := &history[j]; m.Local.session == session && m.Derived.core.ID != "" {
						ids[m.Derived.core.ID] = true
					}
				}
			}
			return ids[id]
		})
	}
}

// messageAgent is the agent of a user message in cache-stable mode: its
// info.agent, else the agent its session is known to run ("" if none).
func (t *transformState) messageAgent(m *core.Message) string {
	if m.Agent != "" || m.SessionID == "" {
		return m.Agent
	}
	return t.store.Tracked().Agent(m.SessionID)
}

// hasPartText reports whether a part of the message has text as its text,
// remembering the answer for the last text asked.
func (h *derived) hasPartText(text string) bool {
	if h.textChecked != text {
		h.textChecked, h.hasText = text, hasPartText(&h.core, text)
	}
	return h.hasText
}

func hasPartText(m *core.Message, text string) bool {
	for _, p := range m.Parts {
		if p.HasText && p.Text == text {
			return true
		}
	}
	return false
}
