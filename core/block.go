package core

import "strings"

// BlockEntry and BlockAgent are what the Resumable Sessions block lists,
// already ordered newest first.
type BlockEntry struct{ Alias, Label string }
type BlockAgent struct {
	Agent   string
	Entries []BlockEntry
}

// ResumableSessionsHeading is the block's first line.
const ResumableSessionsHeading = "### Resumable Sessions"

// resumeAdvice is the block's one line of advice: resuming an unrelated
// thread drags its old context into new work, so the model is told when not
// to resume as much as how.
const resumeAdvice = "Pass an alias below as task_id only to continue that same thread of work; " +
	"for anything new, leave task_id out to start a fresh task."

// ResumableSessionsBlockFor renders the block for a delegation tool whose
// resume argument is resumeArg (OpenCode 2's subagent: sessionID); for
// task_id it is ResumableSessionsBlock.
func ResumableSessionsBlockFor(agents []BlockAgent, resumeArg string) string {
	b := ResumableSessionsBlock(agents)
	if b == "" || resumeArg == "" || resumeArg == TaskDelegation.ResumeArg {
		return b
	}
	advice := strings.ReplaceAll(strings.ReplaceAll(resumeAdvice, "task_id", resumeArg), "a fresh task", "a fresh subagent")
	return strings.Replace(b, resumeAdvice, advice, 1)
}

// ResumableSessionsBlock renders the block; "" when agents is empty. Agents
// without entries are left out (and "" when none has any); an entry without
// a label shows its alias alone. The block has no trailing newline.
func ResumableSessionsBlock(agents []BlockAgent) string {
	var lines []string
	for _, a := range agents {
		if len(a.Entries) == 0 {
			continue
		}
		items := make([]string, len(a.Entries))
		for i, e := range a.Entries {
			items[i] = e.Alias
			if e.Label != "" {
				items[i] += " " + e.Label
			}
		}
		lines = append(lines, "- "+a.Agent+": "+strings.Join(items, "; "))
	}
	if len(lines) == 0 {
		return ""
	}
	return ResumableSessionsHeading + "\n" + resumeAdvice + "\n\n" + strings.Join(lines, "\n")
}
