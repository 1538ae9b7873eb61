package core

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestStableRule(t *testing.T) {
	managed := func(agent string) bool { return agent == "orchestrator" || agent == "build" }
	on := StableRule{Blocks: true, Managed: managed, Reminder: ReminderConfig{Enabled: true}}
	msg := func(agent string) StableMessage {
		return StableMessage{ID: "m1", SessionID: "ses_1", Agent: agent, WantsReminder: true}
	}
	tests := []struct {
		name          string
		rule          StableRule
		msg           StableMessage
		block, remind bool
	}{
		{name: "managed reminder agent", rule: on, msg: msg("orchestrator"), block: true, remind: true},
		{name: "managed, not a reminder agent", rule: on, msg: msg("build"), block: true},
		{name: "neither", rule: on, msg: msg("explorer")},
		{name: "agent unknown: no block, and no reminder (unlike 4.3)", rule: on, msg: msg("")},
		{name: "no id: nothing to freeze under", rule: on, msg: StableMessage{SessionID: "ses_1", Agent: "orchestrator", WantsReminder: true}, remind: true},
		{name: "no session", rule: on, msg: StableMessage{ID: "m1", Agent: "orchestrator", WantsReminder: true}, remind: true},
		{name: "does not want the reminder", rule: on, msg: StableMessage{ID: "m1", SessionID: "ses_1", Agent: "orchestrator"}, block: true},
		{name: "task sessions off", rule: StableRule{Managed: managed, Reminder: on.Reminder}, msg: msg("orchestrator"), remind: true},
		{name: "reminder off", rule: StableRule{Blocks: true, Managed: managed}, msg: msg("orchestrator"), block: true},
		{name: "reminder for build only", rule: StableRule{Blocks: true, Managed: managed, Reminder: ReminderConfig{Enabled: true, Agents: []string{"build"}}},
			msg: msg("build"), block: true, remind: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.block, tt.rule.CarriesBlock(tt.msg), "block")
			assert.Equal(t, tt.remind, tt.rule.CarriesReminder(tt.msg), "reminder")
		})
	}
}

func TestAddsBlock(t *testing.T) {
	assert.True(t, AddsBlock("## Resumable Sessions\n- exp-1", false))
	assert.False(t, AddsBlock("## Resumable Sessions\n- exp-1", true), "a part has it already")
	assert.False(t, AddsBlock("", false), "frozen as empty")
}
