package rpc

import "errors"

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

// Envelope is how Serve reads a message, for an Observer that needs the
// same reading of the bytes Read gave it (a recording names the method and
// pairs each request with its reply).
type Envelope struct {
	// Method is the method of a request or notification; "" for a
	// response.
	Method string
	// Call says a reply follows: a request with an id, or a message that
	// is answered with an error (ReadEnvelope's error).
	Call bool
	// Response is a response from the client, which Serve ignores: no
	// reply follows.
	Response bool
	// ParamsStart and ParamsEnd are where the params value is in the
	// message; equal when it has none.
	ParamsStart, ParamsEnd int
}

// ReadEnvelope reads msg as Serve reads a frame's message (PROTOCOL.md 1).
// The error is the message of the error reply when Serve answers msg with
// one instead of dispatching it; Call is then true. msg is not changed.
func ReadEnvelope(msg []byte) (Envelope, error) {
	data := msg
	if hasSurrogateEscape(msg) {
		// decode reads escaped lone surrogates as U+FFFD in place, at the
		// same length: offsets into the copy are offsets into msg.
		data = append([]byte(nil), msg...)
	}
	var d decoder
	m := d.decode(data)
	switch m.kind {
	case kindResponse:
		return Envelope{Response: true}, nil
	case kindInvalid:
		return Envelope{Call: true}, errors.New(m.reply.message)
	}
	env := Envelope{Method: m.method, Call: m.id != nil}
	if m.params != nil {
		env.ParamsStart, env.ParamsEnd = d.paramsOff, d.paramsOff+len(m.params)
	}
	return env, nil
}
