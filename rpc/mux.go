package rpc

import (
	"context"
	"encoding/json"
	"sync"
)

// Request is one request as the transport read it.
type Request struct {
	Method string
	// Params is the raw "params" value exactly as sent (nil when absent),
	// except that an escaped lone surrogate reads as \ufffd (PROTOCOL.md 1).
	// It is valid until Dispatch returns: Serve reads the next message
	// into the same buffer, so a handler that keeps any of it copies it
	// (decoding does).
	Params json.RawMessage
	// Notification is true when the message had no id; its result is
	// dropped.
	Notification bool
	// Validated is true when Params (if present) is known to be one valid
	// JSON value: Serve scanned the whole message (syntax, UTF-8, nesting
	// depth) before dispatching it. A handler may then skip work that
	// only matters for invalid JSON; a Request built any other way should
	// leave it false.
	Validated bool
}

// Dispatcher answers one request. A returned *Error (anywhere in the
// error's chain) is sent as is; any other error becomes -32603 with its
// message. Serve calls Dispatch from one goroutine, in arrival order, each
// call finished before the next message is read; a panic is recovered and
// answered with -32603.
type Dispatcher interface {
	Dispatch(ctx context.Context, req Request) (any, error)
}

// EncodedResult is a result that writes its own JSON, for a large result
// whose encoding/json form would be scanned again (Marshaler output is
// compacted). Serve writes what AppendResult appends as it is: it must be
// one valid JSON value without insignificant whitespace, the bytes
// json.Marshal would write for the result. An error is answered as an
// encoding failure (-32603).
type EncodedResult interface {
	AppendResult(b []byte) ([]byte, error)
}

// HandlerFunc answers one method.
type HandlerFunc func(ctx context.Context, req Request) (any, error)

// Mux is a Dispatcher that routes by method name; unknown methods get
// -32601. The zero Mux is empty and ready to use. Handle and Dispatch may
// be called concurrently.
type Mux struct {
	mu       sync.RWMutex
	handlers map[string]HandlerFunc
}

// NewMux returns an empty Mux.
func NewMux() *Mux { return &Mux{} }

// Handle registers fn for method. It panics if fn is nil or method already
// has a handler: both are wiring mistakes.
func (m *Mux) Handle(method string, fn HandlerFunc) {
	if fn == nil {
		panic("rpc: nil handler for method " + method)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, dup := m.handlers[method]; dup {
		panic("rpc: multiple handlers for method " + method)
	}
	if m.handlers == nil {
		m.handlers = make(map[string]HandlerFunc)
	}
	m.handlers[method] = fn
}

// Dispatch implements Dispatcher. The handler runs for notifications too;
// its result is dropped by the caller.
func (m *Mux) Dispatch(ctx context.Context, req Request) (any, error) {
	m.mu.RLock()
	fn := m.handlers[req.Method]
	m.mu.RUnlock()
	if fn == nil {
		return nil, Errorf(CodeMethodNotFound, "method not found: %s", req.Method)
	}
	return fn(ctx, req)
}
