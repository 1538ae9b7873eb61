package handlers

import (
	"context"
	"encoding/json"
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
	wire := make([]wireMessage, len(history))
	msgs := make([]core.Message, len(history))
	for i := range history {
		h := &history[i]
		wire[i] = h.msg
		if !h.converted { // a message kept from a base was converted then
			h.core, h.converted = toCoreMessage(h.msg), true
		}
		msgs[i] = h.core
	}
	s.failThrownTasks(wire)
	for _, m := range msgs {
		if m.Role == "user" && m.SessionID != "" && m.Agent != "" {
			s.store.SetAgent(m.SessionID, m.Agent)
		}
	}
	var ops []Op
	if s.cfg.DelegateRetry.Enabled {
		ops = s.guideErroredTasks(msgs, ops)
	}
	if s.cfg.CacheStable {
		ops = s.stableParts(msgs, ops)
	} else if i := core.PhaseReminderTarget(msgs, s.cfg.reminderConfig()); i >= 0 {
		ops = append(ops, addPart(i, s.cfg.reminderConfig().ReminderText()))
	}
	if p.Sync == nil {
		return patch(ops...), nil
	}
	return transformResult{Patch: patch(ops...).Patch, Base: s.bases.keep(p.Sync.Session, history)}, nil
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

func toCoreMessages(wire []wireMessage) []core.Message {
	msgs := make([]core.Message, len(wire))
	for i, w := range wire {
		msgs[i] = toCoreMessage(w)
	}
	return msgs
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

// guideErroredTasks appends guidance to every errored task tool part whose
// error matches a row. It is a function of the part alone, so a history
// gets the same bytes on every request.
func (s *Server) guideErroredTasks(msgs []core.Message, ops []Op) []Op {
	opts := s.cfg.retryOptions()
	for i, m := range msgs {
		for j, part := range m.Parts {
			if part.Type != "tool" || !s.cfg.isTaskTool(part.Tool) || part.StateStatus != "error" || !part.HasError {
				continue
			}
			d := core.DetectTaskError(part.StateError, true, opts)
			if d == nil || strings.Contains(part.StateError, d.Guidance) {
				continue
			}
			ops = append(ops, Op{Op: "replace", Path: partPath(i, j) + "/state/error",
				Value: core.WithGuidance(part.StateError, d)})
		}
	}
	return ops
}

// stableParts implements cache-stable mode (4.4): each user message of a
// managed agent carries the sessions block frozen when it was first seen,
// and each user message of a reminder agent the reminder (block first), so
// no earlier message ever changes.
func (s *Server) stableParts(msgs []core.Message, ops []Op) []Op {
	rc := s.cfg.reminderConfig()
	reminder := rc.ReminderText()
	s.retainFrozen(msgs)
	for i, m := range msgs {
		if m.Role != "user" || m.Parts == nil {
			continue
		}
		agent := s.messageAgent(m)
		if s.cfg.TaskSessions.Enabled && m.ID != "" && m.SessionID != "" && s.cfg.isManagedAgent(agent) {
			block := s.store.FrozenBlock(m.SessionID, m.ID, func() string {
				return core.ResumableSessionsBlock(s.store.ResumableSessions(m.SessionID))
			})
			if block != "" && !hasPartText(m, block) {
				ops = append(ops, addPart(i, block))
			}
		}
		if rc.Enabled && agent != "" && rc.ForAgent(agent) && core.WantsReminder(m, rc) {
			ops = append(ops, addPart(i, reminder))
		}
	}
	return ops
}

// retainFrozen forgets the frozen blocks of messages that are no longer in
// the history (OpenCode compacted them away), so a long session keeps room
// to freeze its new messages. The store asks only for a full session, so
// the history's ids are collected only then.
func (s *Server) retainFrozen(msgs []core.Message) {
	seen := map[string]bool{}
	for _, m := range msgs {
		if m.SessionID == "" || seen[m.SessionID] {
			continue
		}
		seen[m.SessionID] = true
		session := m.SessionID
		var ids map[string]bool
		s.store.RetainFrozen(session, func(id string) bool {
			if ids == nil {
				ids = map[string]bool{}
				for _, m := range msgs {
					if m.SessionID == session && m.ID != "" {
						ids[m.ID] = true
					}
				}
			}
			return ids[id]
		})
	}
}

// messageAgent is the agent of a user message in cache-stable mode: its
// info.agent, else the agent its session is known to run ("" if none).
func (s *Server) messageAgent(m core.Message) string {
	if m.Agent != "" || m.SessionID == "" {
		return m.Agent
	}
	return s.store.Agent(m.SessionID)
}

func hasPartText(m core.Message, text string) bool {
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
