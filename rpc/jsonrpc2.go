package rpc

import (
	"encoding/json"
	"fmt"

	"github.com/sourcegraph/jsonrpc2"
)

// This file is the one place rpc meets github.com/sourcegraph/jsonrpc2:
// the error object and the notification are encoded as its types encode
// them (jsonrpc2_test.go checks that its client reads every reply, and
// that errors.go's reserved codes are its codes). Serve does not run jsonrpc2's
// Conn: it closes the connection on any read error (PROTOCOL.md 1 wants
// an answer and the next message), decodes params into a map and
// marshals them again (about 20 ms per MB), and keeps ids only as uint64
// or string (PROTOCOL.md echoes any id byte for byte). Replies keep the
// member order of jsonrpc2.Response: id, result or error, jsonrpc.

// encodeErrorObject encodes the "error" member of a reply.
func encodeErrorObject(e wireError) ([]byte, error) {
	obj := jsonrpc2.Error{Code: e.Code, Message: e.Message}
	if e.Data != nil {
		obj.Data = &e.Data
	}
	return json.Marshal(&obj)
}

// encodeNotification encodes a notification: {"jsonrpc","method","params"}.
func encodeNotification(n Notification) ([]byte, error) {
	req := jsonrpc2.Request{Method: n.Method, Notif: true}
	if err := req.SetParams(n.Params); err != nil {
		return nil, fmt.Errorf("rpc: encoding %s params: %w", n.Method, err)
	}
	b, err := json.Marshal(req)
	if err != nil {
		return nil, fmt.Errorf("rpc: encoding %s notification: %w", n.Method, err)
	}
	return b, nil
}
