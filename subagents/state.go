package subagents

// State is a subagent's state as subagents.list reports it.
type State string

// The states (PROTOCOL.md 9, subagents.list).
const (
	// Running: OpenCode reported the child busy (or created it) and has
	// not reported it idle, failed or aborted since.
	Running State = "running"
	// Retrying: OpenCode waits to retry the child's request (session.status
	// retry): Row.Retry says which attempt and until when.
	Retrying State = "retrying"
	// Done: OpenCode reported the child idle after it ran.
	Done State = "done"
	// Failed: OpenCode reported an error for the child (Row.Error).
	Failed State = "failed"
	// Cancelled: the child was aborted (MessageAbortedError, an interrupt).
	Cancelled State = "cancelled"
	// Interrupted: the child was running when the sidecar that recorded it
	// stopped, and OpenCode has reported nothing of it since; what became
	// of it is not known (OpenCode stopping stops its children).
	Interrupted State = "interrupted"
)
