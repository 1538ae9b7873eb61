package core

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
