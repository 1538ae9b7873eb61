package core

// This file fixes the API that handlers and sessions build against. Each
// function moves to its own file (retry.go, taskoutput.go, labels.go,
// reminder.go, block.go, model.go) as it is implemented.

// ParseTaskID finds the task id in a task tool's output (a `task_id:` line
// or OpenCode 1.18's `<task id="...">`).
func ParseTaskID(output string) (id string, ok bool) { panic("todo") }

// IsSessionNotFound reports whether a task output's first line says the
// resumed session is gone (`[error]` ... `session` ... `not found`/`no session`).
func IsSessionNotFound(output string) bool { panic("todo") }

// TaskLabel derives an entry's label from a task call's arguments.
func TaskLabel(description, prompt, agent string) string { panic("todo") }

// AliasPrefix returns the alias prefix of agent; "" means the agent does not
// take part. overrides is config.taskSessions.agents.
func AliasPrefix(agent string, overrides map[string]string) string { panic("todo") }

// ReminderConfig is config.phaseReminder plus the orchestrator's name.
type ReminderConfig struct {
	Enabled           bool
	Text              string // "" means DefaultPhaseReminder
	SkipMarkers       []string
	OrchestratorAgent string
}

// PhaseReminderTarget returns the index of the message that gets the
// reminder part under section 4.3, or -1.
func PhaseReminderTarget(msgs []Message, cfg ReminderConfig) int { panic("todo") }

// WantsReminder applies the per-message skip rules of 4.3 to one user
// message (agent, text part, skip markers, reminder already present).
func WantsReminder(m Message, cfg ReminderConfig) bool { panic("todo") }

// BlockEntry and BlockAgent are what the Resumable Sessions block lists,
// already ordered newest first.
type BlockEntry struct{ Alias, Label string }
type BlockAgent struct {
	Agent   string
	Entries []BlockEntry
}

// ResumableSessionsBlock renders the block; "" when agents is empty.
func ResumableSessionsBlock(agents []BlockAgent) string { panic("todo") }
