package core

// This file fixes the API that handlers and sessions build against. Each
// function moves to its own file (retry.go, taskoutput.go, labels.go,
// reminder.go, block.go, model.go) as it is implemented.

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
