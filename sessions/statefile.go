package sessions

// The modes of StateFileStatus.
const (
	StateFilePersistent = "persistent"  // the store is kept in the state file
	StateFileMemoryOnly = "memory-only" // the file could not be used (Reason says why)
	StateFileClosed     = "closed"      // written a last time and released
)

// StateFileStatus is where the state lives, for a client to read (status's
// stateFile, PROTOCOL.md 5). Status says the same in a line for humans.
type StateFileStatus struct {
	Mode           string `json:"mode"`
	Path           string `json:"path,omitempty"`           // the state file, in every mode
	Reason         string `json:"reason,omitempty"`         // memory-only: why the file is not used
	LastWriteError string `json:"lastWriteError,omitempty"` // persistent: the last write's error, "" once one succeeds
}

// StateFile reports where the state lives.
func (p *Persister) StateFile() StateFileStatus {
	p.mu.Lock()
	defer p.mu.Unlock()
	switch {
	case p.lock == nil:
		return StateFileStatus{Mode: StateFileMemoryOnly, Path: p.path, Reason: p.reason}
	case p.released:
		return StateFileStatus{Mode: StateFileClosed, Path: p.path}
	case p.lastErr != nil:
		return StateFileStatus{Mode: StateFilePersistent, Path: p.path, LastWriteError: p.lastErr.Error()}
	}
	return StateFileStatus{Mode: StateFilePersistent, Path: p.path}
}
