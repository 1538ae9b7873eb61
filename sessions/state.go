package sessions

// The modes of StateStatus.
const (
	StatePersistent = "persistent"  // the store is kept in the database, shared with other processes
	StateReadOnly   = "read-only"   // the database is read, never written (Reason says why); new state lives in memory
	StateMemoryOnly = "memory-only" // the database could not be used (Reason says why)
	StateClosed     = "closed"      // released at exit
)

// StateStatus is where the state lives, for a client to read (status's
// stateFile, PROTOCOL.md 5). Status says the same in a line for humans.
type StateStatus struct {
	Mode           string `json:"mode"`
	Path           string `json:"path,omitempty"`           // the database, in every mode
	Reason         string `json:"reason,omitempty"`         // read-only, memory-only: why
	LastWriteError string `json:"lastWriteError,omitempty"` // persistent: the last write's error, "" once one succeeds
	// Warnings are problems that did not stop the database being used
	// (a state directory others can write).
	Warnings []string `json:"warnings,omitempty"`
}
