package rpc

// An Observer is told of every message Serve reads and writes, in the
// order they pass (a request is read before its reply is written), for a
// recording of the session. Its methods run on Serve's path: they must
// return at once (hand the bytes to another goroutine) and must not block
// or fail serving. They are never called concurrently.
type Observer interface {
	// Read is called with each message as it was read, before it is
	// handled. msg is the observer's own.
	Read(msg []byte)
	// Skipped is called for input that was not handed on as a message (one
	// over the size limit, or framing that could not be read); reason says
	// which. Its error reply follows like any other.
	Skipped(reason string)
	// Wrote is called with each message after it was written. msg is the
	// observer's own.
	Wrote(msg []byte)
}
