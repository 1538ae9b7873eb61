// Package rpc is hookwire's transport: framing detection (Content-Length
// headers or one JSON value per line), a codec around
// github.com/sourcegraph/jsonrpc2 that answers malformed input with a
// JSON-RPC error and keeps serving, dispatch by method name, error codes
// and JSON Patch results.
//
// The files follow the concepts: framing.go splits bytes into messages
// (detection, the header and line framers, the size limit); message.go
// scans one message (syntax, UTF-8, depth) and picks out its members;
// stream.go is the jsonrpc2.ObjectStream that answers bad frames itself
// and hands jsonrpc2 a small envelope per request while the raw params
// wait in a side table; serve.go runs the jsonrpc2 connection and calls
// the Dispatcher (under a context for which ParamsValidated reports that
// the params were scanned); mux.go routes by method; errors.go and patch.go are the
// values handlers return.
//
// rpc knows nothing of what a method means: no hook logic lives here. It
// writes nothing but protocol frames to its output, and logs message
// contents only at debug level.
package rpc
