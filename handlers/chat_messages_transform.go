package handlers

import (
	"context"
	"encoding/json"
	"slices"
	"strconv"
	"strings"

	"github.com/hookwire/hookwire/core"
	"github.com/hookwire/hookwire/rpc"
)

// The wire shape of chat.messages.transform, limited to what the sidecar
// reads (PROTOCOL.md 4.5). It is decoded with the JSON v2 API: skipping
// the fields it does not name (tool outputs, file contents: most of a
// history's bytes) is about three times faster than encoding/json.
type transformOutput struct {
	Messages []wireMessage `json:"messages"`
}

type wireMessage struct {
	Info  wireInfo   `json:"info"`
	Parts []wirePart `json:"parts"`
}

type wireInfo struct {
	ID        string `json:"id"`
	Role      string `json:"role"`
	Agent     any    `json:"agent"`
	SessionID string `json:"sessionID"`
}

type wirePart struct {
	Type      string  `json:"type"`
	Text      *string `json:"text"`
	Synthetic bool    `json:"synthetic"`
	Tool      string  `json:"tool"`
	CallID    string  `json:"callID"`
	State     *struct {
		Status string `json:"status"`
		Error  any    `json:"error"`
	} `json:"state"`
}

// chatMessagesTransform learns sessions' agents from user messages, adds
// guidance to errored task tool parts (4.1), and adds the phase reminder
// (4.3) or, in cache-stable mode, the frozen blocks and reminders (4.4).
// A request may carry only what changed since a base (4.6): the history is
// rebuilt from it first, so both forms take the same path from here.
func (s *Server) chatMessagesTransform(_ context.Context, req rpc.Request) (any, error) {
	p, err := decodeTransform(req.Validated, req.Params)
	if err != nil {
		return nil, err
	}
	if s.bases == nil {
		s.bases = newTransformBases(DefaultMaxBaseBytes)
	}
	history, err := s.bases.history(p)
	if err != nil {
		return nil, err
	}
	for i := range history {
		if m := &history[i]; m.flags&flagDerived == 0 { // a message kept from a base was derived then
			s.derive(m)
		}
	}
	s.failThrownTasks(history)
	for i := range history {
		if m := &history[i]; m.flags&flagSetsAgent != 0 {
			s.store.SetAgent(m.core.SessionID, m.core.Agent)
		}
	}
	// Each message's ops, relative to it; a base keeps them, so that a
	// message whose ops are those its base message got can be answered
	// with a reapply (4.6) instead of the ops again.
	per := s.bases.perMessage(len(history))
	if s.cfg.DelegateRetry.Enabled {
		for i := range history {
			if m := &history[i]; m.flags&flagGuided != 0 {
				per[i] = startOps(m.guidance, m.ops)
			}
		}
	}
	if s.cfg.CacheStable {
		s.stableParts(history, per)
	} else if i := reminderTarget(history); i >= 0 {
		per[i] = addOp(per[i], relOp{part: -1, text: s.cfg.reminderConfig().ReminderText()}, history[i].ops)
	}
	if p.Sync == nil {
		return patch(materialize(per, nil)...), nil
	}
	var runs []reapplyRun
	if p.Sync.Reapply {
		runs = reapplyRuns(history, per)
	}
	for i := range history {
		if h := &history[i]; h.origin == 0 || !sameOps(per[i], h.ops) {
			h.ops, h.opsHash = per[i], hashOps(per[i])
			h.flags &^= flagKept // the base's id hash up to it no longer holds
		}
	}
	return transformResult{Patch: materialize(per, runs), Reapply: runs, Base: s.bases.keep(p.Sync.Session, history)}, nil
}

// derive works out what the handler reads of a message that follows from
// its content and the config alone: its core form, its errored task
// parts' calls (failThrownTasks), its guidance (4.1), whether it wants
// the reminder (4.3). A base keeps it, so a request that keeps the message
// only reads it.
func (s *Server) derive(m *baseMessage) {
	h := m.heldMessage
	if !h.converted {
		h.core, h.converted = toCoreMessage(h.msg), true
	}
	c := &h.core
	h.thrown, h.guidance = nil, nil
	for _, p := range h.msg.Parts {
		if p.Type != "tool" || p.CallID == "" || p.State == nil || p.State.Status != "error" || !s.cfg.isTaskTool(p.Tool) {
			continue
		}
		text, _ := p.State.Error.(string)
		h.thrown = append(h.thrown, thrownCall{callID: p.CallID, text: text})
	}
	if s.cfg.DelegateRetry.Enabled {
		h.guidance = slices.Clip(s.guidance(c))
	}
	h.wantsReminder = core.WantsReminder(*c, s.cfg.reminderConfig())
	m.session = s.bases.intern(c.SessionID)
	flags := flagDerived | m.flags&flagKept
	if c.Role == "user" {
		flags |= flagUser
		if c.Parts != nil {
			flags |= flagStable
		}
		if c.SessionID != "" && c.Agent != "" {
			flags |= flagSetsAgent
		}
	}
	if len(h.thrown) > 0 {
		flags |= flagThrown
	}
	if len(h.guidance) > 0 {
		flags |= flagGuided
	}
	m.flags = flags
}

// configChanged drops what was worked out under the config before: the
// guidance remembered per error text, and what the bases' messages
// derived (agents.update changes the subagents guidance lists).
func (s *Server) configChanged() {
	s.guided = nil
	if s.bases != nil {
		s.bases.gen++
	}
}

// reminderTarget is the message that gets the reminder under 4.3, or -1:
// only the last user message is considered (when it is skipped, no earlier
// one takes its place), by what derive worked out of it (core.WantsReminder).
func reminderTarget(history []baseMessage) int {
	for i := len(history) - 1; i >= 0; i-- {
		if m := &history[i]; m.flags&flagUser != 0 {
			if m.wantsReminder {
				return i
			}
			return -1
		}
	}
	return -1
}

// relOp is one op of a message, relative to it: part -1 adds a synthetic
// text part at the end of its parts, part j >= 0 replaces part j's
// state.error with text.
type relOp struct {
	part int
	text string
}

// A message's ops are built in the order the full form adds them, from
// its guidance (startOps) on (addOp). While they are those its base
// message got (base, immutable), they share base's array: a message kept
// with the same ops allocates nothing, and sameOps is a pointer test.
// Ops that differ get their own array; none is ever appended to in place.

func startOps(guidance, base []relOp) []relOp {
	if len(base) >= len(guidance) && slices.Equal(base[:len(guidance)], guidance) {
		return base[:len(guidance):len(guidance)]
	}
	return guidance
}

func addOp(ops []relOp, o relOp, base []relOp) []relOp {
	n := len(ops)
	if n < len(base) && base[n] == o && (n == 0 || &ops[0] == &base[0]) {
		return base[: n+1 : n+1]
	}
	return append(ops[:n:n], o)
}

// sameOps reports whether two messages' ops are the same.
func sameOps(a, b []relOp) bool {
	return len(a) == len(b) && (len(a) == 0 || &a[0] == &b[0] || slices.Equal(a, b))
}

// reapplyRun says: messages At to At+Count-1 of the history get the ops
// that base messages Keep to Keep+Count-1 got (PROTOCOL.md 4.6).
type reapplyRun struct {
	At, Keep, Count int
}

// reapplyRuns finds the messages that came from the base (kept or edited)
// and get exactly the ops their base message got, as runs.
func reapplyRuns(history []baseMessage, per [][]relOp) []reapplyRun {
	var runs []reapplyRun
	for i := range history {
		k := int(history[i].origin) - 1 // history[i].ops are still base message k's
		if k < 0 || !sameOps(per[i], history[i].ops) {
			continue
		}
		if n := len(runs); n > 0 && runs[n-1].At+runs[n-1].Count == i && runs[n-1].Keep+runs[n-1].Count == k {
			runs[n-1].Count++
			continue
		}
		runs = append(runs, reapplyRun{At: i, Keep: k, Count: 1})
	}
	return runs
}

// materialize writes the ops of the messages no run covers, in the full
// form's order: every message's state.error replacements first, then the
// parts added, message by message.
func materialize(per [][]relOp, runs []reapplyRun) []Op {
	var replaces, adds []Op
	for i, rel := range per {
		for len(runs) > 0 && runs[0].At+runs[0].Count <= i {
			runs = runs[1:]
		}
		if len(runs) > 0 && runs[0].At <= i {
			continue // covered by a run
		}
		for _, o := range rel {
			if o.part >= 0 {
				replaces = append(replaces, Op{Op: "replace", Path: partPath(i, o.part) + "/state/error", Value: o.text})
			} else {
				adds = append(adds, addPart(i, o.text))
			}
		}
	}
	return append(replaces, adds...)
}

// decodeTransform decodes the params. When the transport has checked they
// are valid JSON, the long strings the handler does not read are first
// blanked (pruneStrings): most of a history's bytes, which the decoder
// would otherwise scan only to skip them. The result is the same; so are
// the errors, as any error is taken from decoding raw itself.
func decodeTransform(validated bool, raw json.RawMessage) (*transformParams, error) {
	if validated {
		if p, err := decodeTransformParams(pruneStrings(raw, transformReads)); err == nil {
			return p, nil
		}
	}
	return decodeTransformParams(raw)
}

// decodeTransformParams decodes either form (4.6); input is required, and
// output unless sync names a base (transformBases.history checks that).
func decodeTransformParams(raw json.RawMessage) (*transformParams, error) {
	var p transformParams
	if err := decodeParams(raw, &p); err != nil {
		return nil, err
	}
	if p.Input == nil {
		return nil, missing("input")
	}
	if p.Output == nil && (p.Sync == nil || p.Sync.Base == nil) {
		return nil, missing("output")
	}
	return &p, nil
}

// transformReads reports whether a member's string value may be read
// (the handler ignores input). Every string or any field of the wire
// types above is named here; agent and error are read only when strings.
// Blanking other strings changes no field: those members are skipped, or
// are containers whose kind alone matters.
func transformReads(name string) bool {
	switch name {
	case "id", "role", "agent", "sessionID", "type", "text", "tool", "callID", "status", "error",
		"session", "base": // sync (4.6)
		return true
	}
	return false
}

// toCoreMessage converts one message. The result shares nothing that the
// handler changes: a base keeps it for the requests that keep the message.
func toCoreMessage(w wireMessage) core.Message {
	agent, _ := w.Info.Agent.(string)
	m := core.Message{ID: w.Info.ID, Role: w.Info.Role, Agent: agent, SessionID: w.Info.SessionID}
	if w.Parts != nil {
		// Parts stays nil when the message has no parts array (absent
		// or null): there is nothing to append a part to.
		m.Parts = make([]core.Part, len(w.Parts))
	}
	for j, wp := range w.Parts {
		part := core.Part{Type: wp.Type, Synthetic: wp.Synthetic, Tool: wp.Tool}
		if wp.Text != nil {
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
// also remembered per error text (s.guided), as a long history repeats
// its errors.
func (s *Server) guidance(m *core.Message) []relOp {
	var ops []relOp
	for j, part := range m.Parts {
		if part.Type != "tool" || !s.cfg.isTaskTool(part.Tool) || part.StateStatus != "error" || !part.HasError {
			continue
		}
		if guided, ok := s.guidedError(part.StateError); ok {
			ops = append(ops, relOp{part: j, text: guided})
		}
	}
	return ops
}

// Bounds of the guidance remembered per error text: at most this many
// texts, each at most this long (a longer one is worked out each time).
const (
	maxGuidedErrors   = 512
	maxGuidedErrorLen = 4 << 10
)

type guidedError struct {
	text string
	ok   bool
}

// guidedError returns an errored task part's error with guidance added,
// and whether there is any to add.
func (s *Server) guidedError(text string) (string, bool) {
	if g, ok := s.guided[text]; ok {
		return g.text, g.ok
	}
	var g guidedError
	if d := core.DetectTaskError(text, true, s.cfg.retryOptions()); d != nil && !strings.Contains(text, d.Guidance) {
		g = guidedError{core.WithGuidance(text, d), true}
	}
	if len(text) <= maxGuidedErrorLen {
		if s.guided == nil || len(s.guided) >= maxGuidedErrors {
			s.guided = map[string]guidedError{}
		}
		s.guided[text] = g
	}
	return g.text, g.ok
}

// stableParts implements cache-stable mode (4.4): each user message of a
// managed agent carries the sessions block frozen when it was first seen,
// and each user message of a reminder agent the reminder (block first), so
// no earlier message ever changes.
func (s *Server) stableParts(history []baseMessage, per [][]relOp) {
	rc := s.cfg.reminderConfig()
	reminder := rc.ReminderText()
	s.retainFrozen(history)
	for i := range history {
		m := &history[i]
		if m.flags&flagStable == 0 {
			continue
		}
		c := &m.core
		agent := s.messageAgent(c)
		if s.cfg.TaskSessions.Enabled && c.ID != "" && c.SessionID != "" && s.cfg.isManagedAgent(agent) {
			block := s.store.FrozenBlock(c.SessionID, c.ID, func() string {
				return core.ResumableSessionsBlock(s.store.ResumableSessions(c.SessionID))
			})
			if block != "" && !m.hasPartText(block) {
				per[i] = addOp(per[i], relOp{part: -1, text: block}, m.ops)
			}
		}
		if rc.Enabled && agent != "" && rc.ForAgent(agent) && m.wantsReminder {
			per[i] = addOp(per[i], relOp{part: -1, text: reminder}, m.ops)
		}
	}
}

// retainFrozen forgets the frozen blocks of messages that are no longer in
// the history (OpenCode compacted them away), so a long session keeps room
// to freeze its new messages. The store asks only for a full session, so
// the history's ids are collected only then.
func (s *Server) retainFrozen(history []baseMessage) {
	var seen map[string]bool
	prev := ""
	for i := range history {
		session := history[i].session
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
		s.store.RetainFrozen(session, func(id string) bool {
			if ids == nil {
				ids = map[string]bool{}
				for j := range history {
					if m := &history[j]; m.session == session && m.core.ID != "" {
						ids[m.core.ID] = true
					}
				}
			}
			return ids[id]
		})
	}
}

// messageAgent is the agent of a user message in cache-stable mode: its
// info.agent, else the agent its session is known to run ("" if none).
func (s *Server) messageAgent(m *core.Message) string {
	if m.Agent != "" || m.SessionID == "" {
		return m.Agent
	}
	return s.store.Agent(m.SessionID)
}

// hasPartText reports whether a part of the message has text as its text,
// remembering the answer for the last text asked.
func (h *heldMessage) hasPartText(text string) bool {
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

// addPart appends a synthetic text part to message i.
func addPart(i int, text string) Op {
	return Op{Op: "add", Path: "/messages/" + strconv.Itoa(i) + "/parts/-",
		Value: syntheticPart{Type: "text", Text: text, Synthetic: true}}
}

// syntheticPart is a text part the sidecar adds; OpenCode sends it to the
// model but does not show it as the user's own words.
type syntheticPart struct {
	Type      string `json:"type"`
	Text      string `json:"text"`
	Synthetic bool   `json:"synthetic"`
}

func partPath(i, j int) string {
	return "/messages/" + strconv.Itoa(i) + "/parts/" + strconv.Itoa(j)
}
