// Package rpc is hookwire's transport: framing detection (Content-Length
// headers or one JSON value per line), a codec around
// github.com/sourcegraph/jsonrpc2 that answers malformed input with a
// JSON-RPC error and keeps serving, dispatch by method name, error codes
// and JSON Patch results.
//
// rpc knows nothing of what a method means: no hook logic lives here.
package rpc
