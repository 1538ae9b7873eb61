package core

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestParseTaskID(t *testing.T) {
	tests := []struct {
		name   string
		output string
		wantID string
		wantOK bool
	}{
		{"opencode 1.18 output", "<task id=\"ses_dd6710d09ffeewcZeNjzJTl52F\" state=\"completed\">\n<task_result>\nEXPLORER_REPLY_1\n</task_result>\n</task>",
			"ses_dd6710d09ffeewcZeNjzJTl52F", true},
		{"task tag with id after another attribute", `<task state="completed" id="ses_2">`, "ses_2", true},
		{"task tag state first then id on same tag", `<task state="running"  id="ses_3" x="y">`, "ses_3", true},
		{"task_id line", "task_id: ses_abc\nresult text", "ses_abc", true},
		{"task_id with parenthesis suffix", "task_id: ses_abc (for resuming to continue this task if needed)", "ses_abc", true},
		{"task_id parenthesis directly after id", "task_id: ses_abc(resume me)", "ses_abc", true},
		{"task_id no space after colon", "task_id:ses_x", "ses_x", true},
		{"task_id line indented", "   task_id: ses_y   \n", "ses_y", true},
		{"id not on first line", "Task finished.\n\ntask_id: ses_later\n", "ses_later", true},
		{"task tag not on first line", "note\n  <task id=\"ses_t\" state=\"completed\">", "ses_t", true},
		{"first matching line wins", "task_id: ses_first\n<task id=\"ses_second\">", "ses_first", true},
		{"crlf lines", "hello\r\ntask_id: ses_crlf\r\n", "ses_crlf", true},
		{"no id", "[ERROR] Unknown agent: foo", "", false},
		{"empty output", "", "", false},
		{"task_id followed by words", "task_id: ses_abc and more", "", false},
		{"task_id empty", "task_id:   ", "", false},
		{"task_id not at line start", "the task_id: ses_abc", "", false},
		{"task_result tag is not a task tag", `<task_result id="ses_no">`, "", false},
		{"attribute that merely ends in id", `<task xid="ses_no">`, "", false},
		{"empty id attribute", `<task id="">`, "", false},
		{"tag not at line start", `text <task id="ses_no">`, "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			id, ok := ParseTaskID(tt.output)
			assert.Equal(t, tt.wantOK, ok)
			assert.Equal(t, tt.wantID, id)
		})
	}
}

func TestIsSessionNotFound(t *testing.T) {
	tests := []struct {
		name   string
		output string
		want   bool
	}{
		{"session not found", "[ERROR] Session not found: ses_1", true},
		{"lower case and padded", "   [error] session ses_1 not found  \nmore", true},
		{"no session", "[Error] No session with id ses_1", true},
		{"no session without the word found", "[ERROR] there is no session ses_x", true},
		{"not an error line", "Session not found", false},
		{"error but not about a session", "[ERROR] Agent not found", false},
		{"session error but found", "[ERROR] Session ses_1 is busy", false},
		{"only on a later line", "<task id=\"ses_1\">\n[ERROR] Session not found", false},
		{"empty", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, IsSessionNotFound(tt.output))
		})
	}
}

func TestParseTaskOutput(t *testing.T) {
	tests := []struct {
		name   string
		output string
		want   TaskOutcome
	}{
		{"task_id line", "task_id: ses_a (for resuming)", TaskOutcome{TaskID: "ses_a"}},
		{"task tag", "<task id=\"ses_t\" state=\"completed\">\nok\n</task>", TaskOutcome{TaskID: "ses_t"}},
		{"session not found", "[ERROR] Session not found: ses_1", TaskOutcome{SessionNotFound: true}},
		{"an id wins over a later error line", "task_id: ses_a\n[ERROR] Session not found", TaskOutcome{TaskID: "ses_a"}},
		{"other error", "[ERROR] Invalid arguments", TaskOutcome{}},
		{"empty", "", TaskOutcome{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, ParseTaskOutput(tt.output))
		})
	}
}
