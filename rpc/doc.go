// Package rpc is hookwire's transport: framing detection (Content-Length
// headers or one JSON value per line), a codec around
// github.com/sourcegraph/jsonrpc2 that answers malformed input with a
// JSON-RPC error and keeps serving, dispatch by method name, and the
// error values handlers return.
//
// Why a side table: jsonrpc2 would decode params to a map and back (~20 ms
// per MB) and keeps ids only as uint64 or string. So each message is scanned
// once; its raw id and params wait in a table under a token that jsonrpc2
// carries as the request's id and params. jsonrpc2 still runs the connection
// (read loop, one handler call per request, shutdown on EOF, read failure or
// the context's end); replies are encoded here with the raw id as sent.
// jsonrpc2 reports the disconnect before it closes the stream, and its
// read goroutine may still be writing then, so Serve's last step waits for
// the write lock and closes the stream under it: a caller that exits once
// Serve returns never cuts a frame short.
//
// The files follow the concepts: framing.go splits bytes into messages
// (detection, the header and line framers, the size limit); message.go
// scans one message (syntax, UTF-8, depth), reads escaped lone surrogates
// as U+FFFD, and picks out its members;
// stream.go is the jsonrpc2.ObjectStream that answers bad frames itself,
// keeps the side table and writes replies; serve.go runs the jsonrpc2
// connection and calls the Dispatcher with a Request; mux.go defines
// Request, Dispatcher and routes by method; errors.go holds the error
// codes and the Error a handler returns.
//
// rpc knows nothing of what a method means: no hook logic lives here. It
// writes nothing but protocol frames to its output, and logs message
// contents only at debug level.
package rpc
