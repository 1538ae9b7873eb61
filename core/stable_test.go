package core

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestStableRule(t *testing.T) {
	managed := func(agent string) bool { return agent == "orchestrator" || agent == "build" }
	on := StableRule{Blocks: true, Reminder: ReminderConfig{Enabled: true}}
	type message struct {
		id, session, agent string
		wants              bool
	}
	msg := func(agent string) message { return message{"m1", "ses_1", agent, true} }
	tests := []struct {
		name          string
		rule          StableRule
		msg           message
		block, remind bool
	}{
		{name: "managed reminder agent", rule: on, msg: msg("orchestrator"), block: true, remind: true},
		{name: "managed, not a reminder agent", rule: on, msg: msg("build"), block: true},
		{name: "neither", rule: on, msg: msg("explorer")},
		{name: "agent unknown: no block, and no reminder (unlike 4.3)", rule: on, msg: msg("")},
		{name: "no id: nothing to freeze under", rule: on, msg: message{"", "ses_1", "orchestrator", true}, remind: true},
		{name: "no session", rule: on, msg: message{"m1", "", "orchestrator", true}, remind: true},
		{name: "does not want the reminder", rule: on, msg: message{"m1", "ses_1", "orchestrator", false}, block: true},
		{name: "task sessions off", rule: StableRule{Reminder: on.Reminder}, msg: msg("orchestrator"), remind: true},
		{name: "reminder off", rule: StableRule{Blocks: true}, msg: msg("orchestrator"), block: true},
		{name: "reminder for build only", rule: StableRule{Blocks: true, Reminder: ReminderConfig{Enabled: true, Agents: []string{"build"}}},
			msg: msg("build"), block: true, remind: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := tt.msg
			assert.Equal(t, tt.block, tt.rule.CarriesBlock(m.id, m.session, managed(m.agent)), "block")
			assert.Equal(t, tt.remind, tt.rule.CarriesReminder(m.agent, m.wants), "reminder")
		})
	}
}

func TestAddsBlock(t *testing.T) {
	assert.True(t, AddsBlock("## Resumable Sessions\n- exp-1", false))
	assert.False(t, AddsBlock("## Resumable Sessions\n- exp-1", true), "a part has it already")
	assert.False(t, AddsBlock("", false), "frozen as empty")
}
