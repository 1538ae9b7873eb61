package core

import (
	"regexp"
	"strings"
)

var (
	// taskIDLineRe is the `task_id: ses_... (...)` line of older task tools.
	taskIDLineRe = regexp.MustCompile(`^task_id:\s*([^\s()]+)(\s*\(.*)?$`)
	// taskTagRe is OpenCode 1.18's `<task id="ses_..." state="completed">`.
	taskTagRe = regexp.MustCompile(`^<task\s(?:[^>]*\s)?id="([^"]+)"`)

	taskIDForms = []*regexp.Regexp{taskIDLineRe, taskTagRe}
)

// TaskOutcome is what a task tool's output says about the session it ran
// in, the part the session store records (PROTOCOL.md 4.2).
type TaskOutcome struct {
	// TaskID is the session the call ran in; "" when the output names none.
	TaskID string
	// SessionNotFound says the output is the error of resuming a session
	// that is gone; only meaningful when TaskID is "".
	SessionNotFound bool
	// Running says the child goes on after the call returned (OpenCode 2's
	// background subagent): its run is running, not completed.
	Running bool
	// Error is the failed call's error text when the call failed after its
	// child ran (OpenCode 2's `Subagent failed (sessionID: ...)`): the
	// child is remembered, its run is an error.
	Error string
}

// ParseTaskOutput reads a task tool's output: the task id it names, else
// whether it says the resumed session was not found.
func ParseTaskOutput(output string) TaskOutcome {
	if id, ok := ParseTaskID(output); ok {
		return TaskOutcome{TaskID: id}
	}
	return TaskOutcome{SessionNotFound: IsSessionNotFound(output)}
}

// ParseTaskID finds the task id in a task tool's output (a `task_id:` line
// or OpenCode 1.18's `<task id="...">`): the first line that, trimmed,
// matches either form.
func ParseTaskID(output string) (id string, ok bool) {
	for line := range strings.Lines(output) {
		line = strings.TrimSpace(line)
		for _, re := range taskIDForms {
			if m := re.FindStringSubmatch(line); m != nil {
				return m[1], true
			}
		}
	}
	return "", false
}

// IsSessionNotFound reports whether a task output's first line says the
// resumed session is gone (`[error]` ... `session` ... `not found`/`no session`).
func IsSessionNotFound(output string) bool {
	first, _, _ := strings.Cut(output, "\n")
	first = strings.ToLower(strings.TrimSpace(first))
	return strings.HasPrefix(first, "[error]") &&
		strings.Contains(first, "session") &&
		(strings.Contains(first, "not found") || strings.Contains(first, "no session"))
}
