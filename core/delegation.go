package core

import (
	"regexp"
	"strings"
)

// Delegation is one delegation tool as data (PROTOCOL.md 4.2): the
// argument that names the agent, the one that resumes a child session,
// the forms its output and its failures name the child in, and how a
// call to it is written in guidance. OpenCode 1.x's task tool and
// OpenCode 2's subagent tool are rows of one table; any other configured
// task tool (config.taskTools) is read as 1.x's.
type Delegation struct {
	// Tool is the tool's name, lower-cased.
	Tool string
	// AgentArg names the agent to delegate to (1.x subagent_type, v2 agent).
	AgentArg string
	// ResumeArg names the child session to continue (1.x task_id, v2 sessionID).
	ResumeArg string
	// Generation is the OpenCode plugin generation the tool belongs to (1 or 2).
	Generation int

	idForms []*regexp.Regexp
	// running: forms that name a child still running (v2's background notice).
	running []*regexp.Regexp
	// notFound: the prefix of the error for a resumed session that is gone.
	notFound string
}

// The forms of OpenCode 2.0.x's subagent tool (packages/core/src/tool/plugin/subagent.ts).
var (
	// subagentTagRe: the foreground result, `<subagent sessionID="ses_..." state="completed">`.
	subagentTagRe = regexp.MustCompile(`^<subagent\s(?:[^>]*\s)?sessionID="([^"]+)"`)
	// subagentBackgroundRe: the background notice, `The subagent is working in the background (sessionID: ses_...).`
	subagentBackgroundRe = regexp.MustCompile(`^The subagent is working in the background \(sessionID: ([^\s()]+)\)`)
	// subagentFailedRe: `Subagent failed (sessionID: ses_...): ...` and `Subagent cancelled (sessionID: ses_...)`.
	subagentFailedRe = regexp.MustCompile(`^Subagent (?:failed|cancelled) \(sessionID: ([^\s()]+)\)`)
)

// TaskDelegation is OpenCode 1.x's task tool.
var TaskDelegation = Delegation{Tool: "task", AgentArg: "subagent_type", ResumeArg: "task_id", Generation: 1, idForms: taskIDForms}

// SubagentDelegation is OpenCode 2's subagent tool.
var SubagentDelegation = Delegation{
	Tool: "subagent", AgentArg: "agent", ResumeArg: "sessionID", Generation: 2,
	idForms:  []*regexp.Regexp{subagentTagRe, subagentBackgroundRe, subagentFailedRe},
	running:  []*regexp.Regexp{subagentBackgroundRe},
	notFound: "Subagent session not found:",
}

// DelegationFor returns the row of tool (any case); a tool the table does
// not know is read as 1.x's task tool under its own name.
func DelegationFor(tool string) Delegation {
	t := strings.ToLower(tool)
	if t == SubagentDelegation.Tool {
		return SubagentDelegation
	}
	d := TaskDelegation
	d.Tool = t
	return d
}

// ParseOutput reads a call's output (or, for a failed call, its error
// text): the child session it names, whether that child is still running,
// else whether it says the resumed session was not found. For 1.x's row
// this is exactly ParseTaskOutput.
func (d Delegation) ParseOutput(output string) TaskOutcome {
	if d.Generation != 2 {
		return ParseTaskOutput(output)
	}
	for line := range strings.Lines(output) {
		line = strings.TrimSpace(line)
		for _, re := range d.idForms {
			if m := re.FindStringSubmatch(line); m != nil {
				out := TaskOutcome{TaskID: m[1]}
				for _, r := range d.running {
					if r == re {
						out.Running = true
					}
				}
				return out
			}
		}
	}
	first, _, _ := strings.Cut(strings.TrimSpace(output), "\n")
	return TaskOutcome{SessionNotFound: d.notFound != "" && strings.HasPrefix(first, d.notFound)}
}
