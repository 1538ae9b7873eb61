package rpc

import (
	"context"
	"encoding/json"
	"io"

	"github.com/rs/zerolog"
)

// JSON-RPC error codes (PROTOCOL.md 8).
const (
	CodeParseError     int64 = -32700
	CodeInvalidRequest int64 = -32600
	CodeMethodNotFound int64 = -32601
	CodeInvalidParams  int64 = -32602
	CodeInternalError  int64 = -32603
	CodeNotInitialized int64 = -32002
)

// Error is a JSON-RPC error a handler returns to answer with that code.
type Error struct {
	Code    int64
	Message string
	Data    any
}

func (e *Error) Error() string { return e.Message }

// Errorf builds an *Error.
func Errorf(code int64, format string, args ...any) *Error { panic("todo") }

// Dispatcher answers one decoded request. params is the raw "params"
// value (nil when absent). notification is true when the message had no
// id; its result is dropped. A returned *Error is sent as is; any other
// error becomes -32603. Dispatch is called from one goroutine, in arrival
// order.
type Dispatcher interface {
	Dispatch(ctx context.Context, method string, params json.RawMessage, notification bool) (any, error)
}

// HandlerFunc answers one method.
type HandlerFunc func(ctx context.Context, params json.RawMessage) (any, error)

// Mux is a Dispatcher that routes by method name; unknown methods get -32601.
type Mux struct{}

func NewMux() *Mux                                  { panic("todo") }
func (m *Mux) Handle(method string, fn HandlerFunc) { panic("todo") }
func (m *Mux) Dispatch(ctx context.Context, method string, params json.RawMessage, notification bool) (any, error) {
	panic("todo")
}

// Framing selects how messages are delimited.
type Framing int

const (
	FramingAuto   Framing = iota // detect from the first non-blank byte
	FramingHeader                // Content-Length headers
	FramingLine                  // one JSON value per line
)

// Options configures Serve.
type Options struct {
	Framing Framing
	// MaxMessageBytes returns the current message size limit; nil means
	// 64 MiB. It is consulted for every message (initialize may change it).
	MaxMessageBytes func() int64
	Log             zerolog.Logger
}

// Serve reads requests from in and writes replies to out until EOF on in
// (returns nil), ctx is cancelled (returns nil), or out fails (returns the
// error). Malformed input never ends it.
func Serve(ctx context.Context, in io.Reader, out io.Writer, d Dispatcher, opts Options) error {
	panic("todo")
}

// Op is one JSON Patch (RFC 6902) operation: add, replace or remove.
// Value is always written for add and replace (even when nil) and never
// for remove.
type Op struct {
	Op    string
	Path  string
	Value any
}

// PatchResult is every hook's result: {"patch":[...]}; an empty patch
// marshals as [] (never null).
type PatchResult struct {
	Patch []Op `json:"patch"`
}

// Pointer builds a JSON Pointer from reference tokens, escaping ~ and /.
func Pointer(tokens ...string) string { panic("todo") }
