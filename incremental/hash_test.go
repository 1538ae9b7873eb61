package incremental

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func textPart(text string) Part { return Part{Type: "text", Text: &text} }

func taskPart(callID, status, errText string) Part {
	p := Part{Type: "tool", Tool: "task", CallID: callID, State: &State{Status: status}}
	if errText != "" {
		p.State.Error = errText
	}
	return p
}

func msg(id, role, session string, parts ...Part) Message {
	m := Message{Info: Info{ID: id, Role: role, SessionID: session}, Parts: parts}
	if role == "user" {
		m.Info.Agent = "orchestrator"
	}
	if m.Parts == nil {
		m.Parts = []Part{}
	}
	return m
}

// TestHashMessageCoversReads: a base id must change with every field the
// handler reads, or a client that missed a reply (its deadline passed)
// could have its change applied to a history it never sent.
func TestHashMessageCoversReads(t *testing.T) {
	base := func() Message {
		m := msg("m1", "user", "ses_1", textPart("hi"), taskPart("c1", "error", "boom"))
		m.Parts[0].Synthetic = true
		return m
	}
	variants := map[string]func(m *Message){
		"id":            func(m *Message) { m.Info.ID = "m2" },
		"role":          func(m *Message) { m.Info.Role = "assistant" },
		"agent":         func(m *Message) { m.Info.Agent = "explorer" },
		"agent absent":  func(m *Message) { m.Info.Agent = nil },
		"sessionID":     func(m *Message) { m.Info.SessionID = "ses_2" },
		"parts nil":     func(m *Message) { m.Parts = nil },
		"parts empty":   func(m *Message) { m.Parts = []Part{} },
		"type":          func(m *Message) { m.Parts[0].Type = "reasoning" },
		"text":          func(m *Message) { *m.Parts[0].Text = "ho" },
		"text absent":   func(m *Message) { m.Parts[0].Text = nil },
		"text empty":    func(m *Message) { m.Parts[0].Text = new(string) },
		"synthetic":     func(m *Message) { m.Parts[0].Synthetic = false },
		"tool":          func(m *Message) { m.Parts[1].Tool = "read" },
		"callID":        func(m *Message) { m.Parts[1].CallID = "c2" },
		"status":        func(m *Message) { m.Parts[1].State.Status = "completed" },
		"error":         func(m *Message) { m.Parts[1].State.Error = "boom!" },
		"error absent":  func(m *Message) { m.Parts[1].State.Error = nil },
		"state absent":  func(m *Message) { m.Parts[1].State = nil },
		"fields merged": func(m *Message) { m.Info.ID, m.Info.Role = "m1u", "ser" },
	}
	// A reasoning part's text is not read: it changes no hash.
	withReasoning := func(text string) uint64 {
		m := base()
		m.Parts = append(m.Parts, Part{Type: "reasoning", Text: &text})
		h, _ := hashMessage(&m)
		return h
	}
	assert.Equal(t, withReasoning("I think"), withReasoning("*******"))
	seen := map[uint64]string{}
	m := base()
	h, _ := hashMessage(&m)
	seen[h] = "base"
	again := base()
	h2, _ := hashMessage(&again)
	assert.Equal(t, h, h2, "the same content, the same hash")
	for name, change := range variants {
		m := base()
		change(&m)
		h, _ := hashMessage(&m)
		if other, ok := seen[h]; ok {
			t.Errorf("%s hashes as %s", name, other)
		}
		seen[h] = name
	}
	// What the handler does not read does not count: an agent that is
	// not a string is no agent.
	m = base()
	m.Info.Agent = nil
	absent, _ := hashMessage(&m)
	m.Info.Agent = 7.0
	number, _ := hashMessage(&m)
	assert.Equal(t, absent, number)
}

// TestPartBytesAsHashed: rebuilding counts an edit's parts one by one
// (partBytes) before the message is hashed whole; both must count alike,
// or a history would be refused that the store would hold.
func TestPartBytesAsHashed(t *testing.T) {
	reasoning := Part{Type: "reasoning", Text: textPart("thinking it over").Text}
	odd := taskPart("c2", "error", "")
	odd.State.Error = map[string]any{"name": "x"} // not a string: not read
	m := msg("m1", "assistant", "ses_1", textPart("hi"), taskPart("c1", "error", "boom"), reasoning, odd, Part{Type: "step-start"})
	m.Info.Agent = "build"
	_, bytes := hashMessage(&m)
	want := int64(MessageOverhead + len("m1") + len("assistant") + len("build") + len("ses_1"))
	for i := range m.Parts {
		want += partBytes(&m.Parts[i])
	}
	assert.Equal(t, want, bytes)
}
