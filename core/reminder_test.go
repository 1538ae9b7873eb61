package core

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

func textPart(s string) Part { return Part{Type: "text", Text: s, HasText: true} }

func userMsg(agent string, parts ...Part) Message {
	return Message{Role: "user", Agent: agent, Parts: parts}
}

func TestDefaultPhaseReminder(t *testing.T) {
	assert.True(t, strings.HasPrefix(DefaultPhaseReminder, "<internal_reminder>"))
	assert.True(t, strings.HasSuffix(DefaultPhaseReminder, "</internal_reminder>"))
	assert.Contains(t, DefaultPhaseReminder, "Resumable Sessions")
	assert.Contains(t, DefaultPhaseReminder, "task_id")
	assert.Equal(t, "<!-- SLIM_INTERNAL_INITIATOR -->", SkipMarkerDefault)
	assert.Equal(t, DefaultPhaseReminder, ReminderConfig{}.ReminderText())
	assert.Equal(t, "custom", ReminderConfig{Text: "custom"}.ReminderText())
}

func TestWantsReminder(t *testing.T) {
	on := ReminderConfig{Enabled: true}
	tests := []struct {
		name string
		msg  Message
		cfg  ReminderConfig
		want bool
	}{
		{"orchestrator user message", userMsg("orchestrator", textPart("hi")), on, true},
		{"no agent", userMsg("", textPart("hi")), on, true},
		{"disabled", userMsg("orchestrator", textPart("hi")), ReminderConfig{}, false},
		{"other agent", userMsg("explorer", textPart("hi")), on, false},
		{"agent is case-sensitive", userMsg("Orchestrator", textPart("hi")), on, false},
		{"configured agent", userMsg("boss", textPart("hi")), ReminderConfig{Enabled: true, Agents: []string{"boss"}}, true},
		{"default agent not in a configured list", userMsg("orchestrator", textPart("hi")), ReminderConfig{Enabled: true, Agents: []string{"boss"}}, false},
		{"any agent of the list", userMsg("lead", textPart("hi")), ReminderConfig{Enabled: true, Agents: []string{"boss", "lead"}}, true},
		{"build gets none by default", userMsg("build", textPart("hi")), on, false},
		{"empty list: an agent's message gets none", userMsg("orchestrator", textPart("hi")), ReminderConfig{Enabled: true, Agents: []string{}}, false},
		{"empty list: a message without agent still does", userMsg("", textPart("hi")), ReminderConfig{Enabled: true, Agents: []string{}}, true},
		{"assistant message", Message{Role: "assistant", Parts: []Part{textPart("hi")}}, on, false},
		{"no parts", userMsg("orchestrator"), on, false},
		{"text type without a text string", userMsg("orchestrator", Part{Type: "text"}), on, false},
		{"only a file part", userMsg("orchestrator", Part{Type: "file", Text: "x", HasText: true}), on, false},
		{"empty text string counts", userMsg("orchestrator", textPart("")), on, true},
		{"default marker in first text part", userMsg("orchestrator", textPart("x "+SkipMarkerDefault+" y")), on, false},
		{"marker only in a later text part", userMsg("orchestrator", textPart("hi"), textPart(SkipMarkerDefault)), on, true},
		{"first text part found after a file part", userMsg("orchestrator", Part{Type: "file"}, textPart(SkipMarkerDefault)), on, false},
		{"custom markers replace the default", userMsg("orchestrator", textPart(SkipMarkerDefault)),
			ReminderConfig{Enabled: true, SkipMarkers: []string{"<!-- X -->"}}, true},
		{"custom marker matches", userMsg("orchestrator", textPart("a <!-- X --> b")),
			ReminderConfig{Enabled: true, SkipMarkers: []string{"<!-- Y -->", "<!-- X -->"}}, false},
		{"empty marker list means none", userMsg("orchestrator", textPart(SkipMarkerDefault)),
			ReminderConfig{Enabled: true, SkipMarkers: []string{}}, true},
		{"empty marker ignored", userMsg("orchestrator", textPart("hi")),
			ReminderConfig{Enabled: true, SkipMarkers: []string{""}}, true},
		{"default reminder already present", userMsg("orchestrator", textPart("hi"), Part{Type: "text", Text: DefaultPhaseReminder, HasText: true, Synthetic: true}), on, false},
		{"reminder inside the user's own text", userMsg("orchestrator", textPart("hi\n"+DefaultPhaseReminder)), on, false},
		{"custom reminder present", userMsg("orchestrator", textPart("hi"), textPart("<r>custom</r>")),
			ReminderConfig{Enabled: true, Text: "<r>custom</r>"}, false},
		{"default text does not block a custom reminder", userMsg("orchestrator", textPart("hi"), textPart(DefaultPhaseReminder)),
			ReminderConfig{Enabled: true, Text: "<r>custom</r>"}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, WantsReminder(tt.msg, tt.cfg))
		})
	}
}

func TestReminderTarget(t *testing.T) {
	on := ReminderConfig{Enabled: true}
	assistant := Message{Role: "assistant", Agent: "orchestrator", Parts: []Part{textPart("ok")}}
	tests := []struct {
		name string
		msgs []Message
		want int
	}{
		{"no messages", nil, -1},
		{"no user message", []Message{assistant}, -1},
		{"last user message", []Message{userMsg("orchestrator", textPart("a")), assistant, userMsg("orchestrator", textPart("b")), assistant}, 2},
		{"last user message skipped: no fallback to an earlier one",
			[]Message{userMsg("orchestrator", textPart("a")), assistant, userMsg("orchestrator", textPart(SkipMarkerDefault))}, -1},
		{"last user message from another agent", []Message{userMsg("orchestrator", textPart("a")), userMsg("explorer", textPart("b"))}, -1},
		{"last user message has no text", []Message{userMsg("orchestrator", textPart("a")), userMsg("orchestrator", Part{Type: "file"})}, -1},
		{"already reminded", []Message{userMsg("orchestrator", textPart("a"), textPart(DefaultPhaseReminder))}, -1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var asked []int
			got := ReminderTarget(len(tt.msgs), func(i int) (bool, bool) {
				asked = append(asked, i)
				return tt.msgs[i].Role == "user", WantsReminder(tt.msgs[i], on)
			})
			assert.Equal(t, tt.want, got)
			for k, i := range asked {
				assert.Equal(t, len(tt.msgs)-1-k, i, "messages are asked from the last one back")
			}
			last := -1
			for i, m := range tt.msgs {
				if m.Role == "user" {
					last = i
				}
			}
			if last >= 0 {
				assert.Equal(t, last, asked[len(asked)-1], "nothing before the last user message is asked")
			}
		})
	}
}
