package core

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestIsBust(t *testing.T) {
	tests := []struct {
		name          string
		hasPrev       bool
		prev, current int64
		want          bool
	}{
		{"a session's first request never busts", false, 0, 0, false},
		{"the first request after one that read 500: first is still no bust", false, 500, 0, false},
		{"more read than before: the prefix grew", true, 100, 250, false},
		{"the same read: held", true, 250, 250, false},
		{"fewer read: a bust", true, 250, 249, true},
		{"nothing read after something: a bust", true, 250, 0, true},
		{"nothing read twice: no bust (nothing cached to lose)", true, 0, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, IsBust(tt.hasPrev, tt.prev, tt.current))
		})
	}
}

func TestAttributeBust(t *testing.T) {
	msg := func(id string, content, ops uint64) MessagePrint {
		return MessagePrint{ID: HashID(id), Content: content, Ops: ops}
	}
	print := func(sys, block uint64, msgs ...MessagePrint) *PromptPrint {
		return &PromptPrint{SystemSeen: true, System: sys, Block: block, Messages: msgs}
	}
	base := print(1, 10, msg("m1", 100, 0), msg("m2", 200, 7), msg("m3", 300, 0))
	tests := []struct {
		name             string
		prevModel, model string
		prev, cur        *PromptPrint
		want             Bust
	}{
		{"the model changed: first, whatever else did", "p/a", "p/b", base, print(2, 10),
			Bust{Cause: CauseModel, Detail: "model changed from p/a to p/b"}},
		{"an unknown model on one side is no model change", "", "p/b", base, print(1, 11, base.Messages...),
			Bust{Cause: CauseSystem, ByHookwire: true, Detail: "system prompt changed by hookwire (its Resumable Sessions block)"}},
		{"hookwire's block in the system prompt changed, the rest did not", "p/a", "p/a", base, print(1, 11, base.Messages...),
			Bust{Cause: CauseSystem, ByHookwire: true, Detail: "system prompt changed by hookwire (its Resumable Sessions block)"}},
		{"hookwire's block went away", "p/a", "p/a", base, print(1, 0, base.Messages...),
			Bust{Cause: CauseSystem, ByHookwire: true, Detail: "system prompt changed by hookwire (its Resumable Sessions block)"}},
		{"the rest of the system prompt changed (and the block too): not hookwire", "p/a", "p/a", base, print(2, 11, base.Messages...),
			Bust{Cause: CauseSystem, Detail: "system prompt changed by another plugin or OpenCode"}},
		{"hookwire's parts on a message changed (the reminder moved off it)", "p/a", "p/a", base,
			print(1, 10, msg("m1", 100, 0), msg("m2", 200, 0), msg("m3", 300, 0), msg("m4", 400, 7)),
			Bust{Cause: CauseMessage, ByHookwire: true, Detail: "message 1 changed by hookwire (its added parts)"}},
		{"a message's own content changed", "p/a", "p/a", base,
			print(1, 10, msg("m1", 100, 0), msg("m2", 200, 7), msg("m3", 301, 0)),
			Bust{Cause: CauseMessage, Detail: "message 2 changed by another plugin or OpenCode"}},
		{"content and hookwire's parts changed: the content is the cause", "p/a", "p/a", base,
			print(1, 10, msg("m1", 101, 5), msg("m2", 200, 7), msg("m3", 300, 0)),
			Bust{Cause: CauseMessage, Detail: "message 0 changed by another plugin or OpenCode"}},
		{"a message removed from the middle", "p/a", "p/a", base,
			print(1, 10, msg("m1", 100, 0), msg("m3", 300, 0), msg("m4", 400, 0)),
			Bust{Cause: CauseMessage, Detail: "message 1 removed"}},
		{"a message inserted before others: the first moved", "p/a", "p/a", base,
			print(1, 10, msg("m1", 100, 0), msg("new", 1, 0), msg("m2", 200, 7), msg("m3", 300, 0)),
			Bust{Cause: CauseMessage, Detail: "message 1 moved (a message inserted before it)"}},
		{"the history cut short (compaction)", "p/a", "p/a", base, print(1, 10, msg("m1", 100, 0)),
			Bust{Cause: CauseMessage, Detail: "message 1 removed (history cut to 1 messages)"}},
		{"a history cut by MaxPrintMessages is not a removal", "p/a", "p/a", base,
			&PromptPrint{SystemSeen: true, System: 1, Block: 10, Messages: base.Messages[:1], Truncated: true},
			Bust{Cause: CauseUnknown, Detail: "no change in what hookwire sees of the prompt (tool output, provider eviction or expiry)"}},
		{"nothing hookwire sees changed: unknown", "p/a", "p/a", base,
			print(1, 10, msg("m1", 100, 0), msg("m2", 200, 7), msg("m3", 300, 0), msg("m4", 400, 0)),
			Bust{Cause: CauseUnknown, Detail: "no change in what hookwire sees of the prompt (tool output, provider eviction or expiry)"}},
		{"a system prompt seen on one side only, messages unchanged", "p/a", "p/a", base,
			&PromptPrint{Messages: base.Messages},
			Bust{Cause: CauseUnknown, Detail: "hookwire did not see both system prompts"}},
		{"a system prompt seen on one side only, a message changed: the message", "p/a", "p/a", base,
			&PromptPrint{Messages: []MessagePrint{msg("m1", 999, 0)}},
			Bust{Cause: CauseMessage, Detail: "message 0 changed by another plugin or OpenCode"}},
		{"no prompt seen for the request", "p/a", "p/a", base, nil,
			Bust{Cause: CauseUnknown, Detail: "hookwire did not see both prompts"}},
		{"no prompt seen for the previous request", "p/a", "p/a", nil, base,
			Bust{Cause: CauseUnknown, Detail: "hookwire did not see both prompts"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, AttributeBust(tt.prevModel, tt.model, tt.prev, tt.cur))
		})
	}
}

func TestHashStrings(t *testing.T) {
	assert.NotEqual(t, HashStrings([]string{"ab", "c"}), HashStrings([]string{"a", "bc"}), "parts never run into each other")
	assert.NotEqual(t, HashStrings(nil), HashStrings([]string{""}))
	assert.Equal(t, HashStrings([]string{"x", "y"}), HashStrings([]string{"x", "y"}))
	assert.NotEqual(t, HashID("msg_1"), HashID("msg_2"))
}
