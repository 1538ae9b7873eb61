package rpc

import (
	"context"
	"encoding/json"
	"sort"
	"sync"
)

// Dispatcher answers one decoded request. params is the raw "params"
// value exactly as sent (nil when absent). notification is true when the
// message had no id; its result is dropped. A returned *Error (anywhere in
// the error's chain) is sent as is; any other error becomes -32603 with
// its message. Serve calls Dispatch from one goroutine, in arrival order,
// each call finished before the next message is read; a panic is
// recovered and answered with -32603.
type Dispatcher interface {
	Dispatch(ctx context.Context, method string, params json.RawMessage, notification bool) (any, error)
}

// HandlerFunc answers one method.
type HandlerFunc func(ctx context.Context, params json.RawMessage) (any, error)

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
func (m *Mux) Dispatch(ctx context.Context, method string, params json.RawMessage, notification bool) (any, error) {
	m.mu.RLock()
	fn := m.handlers[method]
	m.mu.RUnlock()
	if fn == nil {
		return nil, Errorf(CodeMethodNotFound, "method not found: %s", method)
	}
	return fn(ctx, params)
}

// Methods returns the registered method names, sorted.
func (m *Mux) Methods() []string {
	m.mu.RLock()
	defer m.mu.RUnlock()
	names := make([]string, 0, len(m.handlers))
	for name := range m.handlers {
		names = append(names, name)
	}
	sort.Strings(names)
	return names
}
