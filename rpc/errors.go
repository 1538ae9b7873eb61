package rpc

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/hookwire/hookwire/contract"
)

// JSON-RPC error codes (PROTOCOL.md 8), as the contract defines them.
const (
	CodeParseError     = contract.CodeParseError
	CodeInvalidRequest = contract.CodeInvalidRequest
	CodeMethodNotFound = contract.CodeMethodNotFound
	CodeInvalidParams  = contract.CodeInvalidParams
	CodeInternalError  = contract.CodeInternalError
	CodeNotInitialized = contract.CodeNotInitialized
)

// Error is a JSON-RPC error a handler returns to answer with that code.
// Data, when not nil, is sent as the error's "data" member.
type Error struct {
	Code    int64
	Message string
	Data    any

	cause error // set by Errorf from a %w verb
}

func (e *Error) Error() string { return e.Message }

// Unwrap returns the error Errorf wrapped with %w, if any. The cause is
// never sent to the client; only Message is.
func (e *Error) Unwrap() error { return e.cause }

// Errorf builds an *Error whose message is formatted as by fmt.Errorf; an
// error given for a %w verb is kept as the cause (see Unwrap).
func Errorf(code int64, format string, args ...any) *Error {
	err := fmt.Errorf(format, args...)
	return &Error{Code: code, Message: err.Error(), cause: errors.Unwrap(err)}
}

// wireError is the error object of a reply.
type wireError struct {
	Code    int64           `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
}

// toWireError turns an error returned by Dispatch into the error object
// sent back: the first *Error in err's chain keeps its code, message and
// data; anything else becomes -32603 with err's message. dataErr reports
// Data that could not be encoded (it is then left out).
func toWireError(err error) (wire wireError, dataErr error) {
	var e *Error
	if !errors.As(err, &e) || e == nil {
		return wireError{Code: CodeInternalError, Message: err.Error()}, nil
	}
	wire = wireError{Code: e.Code, Message: e.Message}
	if e.Data != nil {
		b, err := json.Marshal(e.Data)
		if err != nil {
			return wire, fmt.Errorf("encoding error data: %w", err)
		}
		wire.Data = b
	}
	return wire, nil
}

// Messages of the errors the transport answers by itself.
const (
	msgTooLarge       = "message too large"
	msgBatch          = "batch requests are not supported"
	msgInvalidUTF8    = "invalid UTF-8"
	msgInternalError  = "internal error"
	msgNestingTooDeep = "nesting too deep"
)
