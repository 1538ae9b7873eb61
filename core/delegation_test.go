package core

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestDelegationFor(t *testing.T) {
	tests := []struct {
		tool          string
		agent, resume string
		generation    int
		wantName      string
	}{
		{"task", "subagent_type", "task_id", 1, "task"},
		{"subagent", "agent", "sessionID", 2, "subagent"},
		{"Subagent", "agent", "sessionID", 2, "subagent"},
		{"delegate_task", "subagent_type", "task_id", 1, "delegate_task"},
		{"", "subagent_type", "task_id", 1, ""},
	}
	for _, tt := range tests {
		t.Run(tt.tool, func(t *testing.T) {
			d := DelegationFor(tt.tool)
			assert.Equal(t, tt.wantName, d.Tool)
			assert.Equal(t, tt.agent, d.AgentArg)
			assert.Equal(t, tt.resume, d.ResumeArg)
			assert.Equal(t, tt.generation, d.Generation)
		})
	}
}

// TestSubagentParseOutput: the forms OpenCode 2.0.x's subagent tool names
// its child in (packages/core/src/tool/plugin/subagent.ts), and 1.x's forms
// read through the task row exactly as ParseTaskOutput reads them.
func TestSubagentParseOutput(t *testing.T) {
	background := "The subagent is working in the background (sessionID: ses_bg1). You will be notified automatically when it finishes.\n" +
		"DO NOT sleep, poll for progress, ask the subagent for status, or duplicate this subagent's work; avoid working with the same files or topics it is using."
	tests := []struct {
		name   string
		tool   Delegation
		output string
		want   TaskOutcome
	}{
		{"foreground result", SubagentDelegation, "<subagent sessionID=\"ses_c1\" state=\"completed\">\nfound README.md\n</subagent>", TaskOutcome{TaskID: "ses_c1"}},
		{"state before sessionID", SubagentDelegation, `<subagent state="completed" sessionID="ses_c2">`, TaskOutcome{TaskID: "ses_c2"}},
		{"background notice: running", SubagentDelegation, background, TaskOutcome{TaskID: "ses_bg1", Running: true}},
		{"failed names the child", SubagentDelegation, "Subagent failed (sessionID: ses_f1): Rate limit reached", TaskOutcome{TaskID: "ses_f1"}},
		{"cancelled names the child", SubagentDelegation, "Subagent cancelled (sessionID: ses_x1)", TaskOutcome{TaskID: "ses_x1"}},
		{"session not found", SubagentDelegation, "Subagent session not found: exp-1", TaskOutcome{SessionNotFound: true}},
		{"unknown agent names no child", SubagentDelegation, "Unknown agent: nonexistent", TaskOutcome{}},
		{"a 1.x task tag is not a subagent form", SubagentDelegation, `<task id="ses_t" state="completed">`, TaskOutcome{}},
		{"a child's text quoting the form mid-line", SubagentDelegation, `it said <subagent sessionID="ses_no">`, TaskOutcome{}},
		{"1.x: task tag", TaskDelegation, `<task id="ses_t" state="completed">`, TaskOutcome{TaskID: "ses_t"}},
		{"1.x: a subagent tag is not a task form", TaskDelegation, `<subagent sessionID="ses_c1" state="completed">`, TaskOutcome{}},
		{"1.x: session not found", TaskDelegation, "[ERROR] Session not found: ses_1", TaskOutcome{SessionNotFound: true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, tt.tool.ParseOutput(tt.output))
			if tt.tool.Generation == 1 {
				assert.Equal(t, ParseTaskOutput(tt.output), tt.tool.ParseOutput(tt.output), "1.x reads as before")
			}
		})
	}
}

// TestSubagentRetryGuidance: a failed subagent call's guidance names v2's
// call and arguments, never 1.x's task(...) or subagent_type.
func TestSubagentRetryGuidance(t *testing.T) {
	opts := RetryOptions{Subagents: []string{"explore", "general"}, Tool: SubagentDelegation}
	tests := []struct {
		name, output, errorType string
		resume                  string
		wantExample             string
	}{
		{"unknown agent", "Unknown agent: nonexistent", "unknown_agent", "",
			`subagent(agent="explore", description="Short summary of the task", prompt="Complete, self-contained instructions for the subagent")`},
		{"primary agent", "Agent build cannot run as a subagent", "primary_agent", "", `subagent(agent="explore"`},
		{"alias that validation refused", `Invalid tool input: Expected a string starting with "ses", got "exp-9"`, "invalid_session_id", "", `subagent(agent="explore"`},
		{"gone session", "Subagent session not found: ses_gone", "session_not_found", "", `subagent(agent="explore"`},
		{"failed child: resume it by alias", "Subagent failed (sessionID: ses_f1): Rate limit reached", "subagent_failed", "exp-1",
			`subagent(agent="explore", description="Short summary of the task", prompt="Complete, self-contained instructions for the subagent", sessionID="exp-1")`},
		{"cancelled child", "Subagent cancelled (sessionID: ses_x1)", "subagent_cancelled", "gen-2", `sessionID="gen-2")`},
		{"depth", `Subagent depth limit reached (1). Increase "experimental.subagent_depth" to allow nested subagents.`, "depth_limit", "", `subagent(`},
		{"bad model", `Model "fake/nope" is not available. Use the models tool to see what is available.`, "invalid_model", "", `subagent(`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := opts
			o.Resume = tt.resume
			d := DetectTaskError(tt.output, true, o)
			if !assert.NotNil(t, d) {
				return
			}
			assert.Equal(t, tt.errorType, d.ErrorType)
			assert.Contains(t, d.Guidance, "\nExample: subagent(")
			assert.Contains(t, d.Guidance, tt.wantExample)
			assert.NotContains(t, d.Guidance, "task(")
			assert.NotContains(t, d.Guidance, "subagent_type")
			assert.NotContains(t, d.Guidance, "task_id")
			if tt.errorType == "unknown_agent" {
				assert.Equal(t, "explore, general", d.Available)
			}
		})
	}
	t.Run("a completed call's text is never an error", func(t *testing.T) {
		assert.Nil(t, DetectTaskError("<subagent sessionID=\"ses_1\" state=\"completed\">\n[ERROR] Unknown agent: x\n</subagent>", false, opts))
	})
	t.Run("no subagents known: general, not 1.x's explorer", func(t *testing.T) {
		d := DetectTaskError("Unknown agent: x", true, RetryOptions{Tool: SubagentDelegation})
		assert.Contains(t, d.Guidance, `subagent(agent="general"`)
	})
	t.Run("1.x's guidance is unchanged by the tool field's zero value", func(t *testing.T) {
		text := "Unknown agent type: nonexistent is not a valid agent type"
		a := DetectTaskError(text, true, RetryOptions{Subagents: []string{"explore"}})
		b := DetectTaskError(text, true, RetryOptions{Subagents: []string{"explore"}, Tool: TaskDelegation})
		assert.Equal(t, a, b)
		assert.True(t, strings.Contains(a.Guidance, `task(description=`))
	})
}

func TestResumableSessionsBlockFor(t *testing.T) {
	agents := []BlockAgent{{Agent: "explore", Entries: []BlockEntry{{Alias: "exp-1", Label: "Look around"}}}}
	assert.Equal(t, ResumableSessionsBlock(agents), ResumableSessionsBlockFor(agents, "task_id"), "1.x: the same bytes")
	v2 := ResumableSessionsBlockFor(agents, "sessionID")
	assert.Contains(t, v2, "Pass an alias below as sessionID only to continue that same thread of work; for anything new, leave sessionID out to start a fresh subagent.")
	assert.NotContains(t, v2, "task_id")
	assert.Contains(t, v2, "- explore: exp-1 Look around")
	assert.Equal(t, "", ResumableSessionsBlockFor(nil, "sessionID"))
}
