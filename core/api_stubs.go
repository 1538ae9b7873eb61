package core

// This file fixes the API that handlers and sessions build against. Each
// function moves to its own file (retry.go, taskoutput.go, labels.go,
// reminder.go, block.go, model.go) as it is implemented.

// Flavor names the task tool an example call is written for.
type Flavor string

const (
	FlavorDelegate Flavor = "delegate" // oh-my-opencode's delegate tool
	FlavorNative   Flavor = "native"   // OpenCode's native task tool
)

// RetryPattern is one row of the error table (PROTOCOL.md 4.1).
type RetryPattern struct {
	Pattern   string `json:"pattern"`
	ErrorType string `json:"errorType"`
	FixHint   string `json:"fixHint"`
	Flavor    Flavor `json:"flavor"`
}

// DetectedError is delegate.detectError's result.
type DetectedError struct {
	ErrorType string `json:"errorType"`
	FixHint   string `json:"fixHint"`
	Available string `json:"available,omitempty"`
	Guidance  string `json:"guidance"`
}

// RetryOptions carries the client's configuration into detection.
type RetryOptions struct {
	Extra     []RetryPattern // config.delegateRetry.patterns, tried after the built-in rows
	Subagents []string       // config.subagents, the fallback available list
}

// DetectTaskError classifies a task tool's error text. failed=false applies
// the tool.execute.after rule (signal words needed); failed=true the
// errored-tool-part rule. nil: nothing to add.
func DetectTaskError(output string, failed bool, opts RetryOptions) *DetectedError {
	panic("todo")
}

// WithGuidance returns text, a newline, and d.Guidance.
func WithGuidance(text string, d *DetectedError) string { return text + "\n" + d.Guidance }

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

// Message is the subset of an OpenCode message that the sidecar reads
// (PROTOCOL.md 4.5).
type Message struct {
	ID        string
	Role      string
	Agent     string
	SessionID string
	Parts     []Part
}

// Part is the subset of a message part that the sidecar reads. HasText is
// true when `text` is a string; HasError when `state.error` is a string.
type Part struct {
	Type        string
	Text        string
	HasText     bool
	Synthetic   bool
	Tool        string
	StateStatus string
	StateError  string
	HasError    bool
}

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
