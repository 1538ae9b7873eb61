// Package rpc is hookwire's transport: framing detection (Content-Length
// headers or one JSON value per line), one scan per message that answers
// malformed input with a JSON-RPC error and keeps serving, dispatch by
// method name, and the error values handlers return.
//
// Serve is a plain loop, in the shape of jsonrpc2_v2's Framer and Handler:
// a framer delimits the next message, the decoder scans it once (syntax,
// UTF-8, depth) and picks out its raw id, method and params, the
// Dispatcher answers it, and the writer encodes the reply with the raw id
// as sent. The params reach the handler as the bytes that were sent, never
// decoded on the way; ids are echoed byte for byte.
//
// github.com/sourcegraph/jsonrpc2 is met in one file, jsonrpc2.go: error
// objects and notifications are encoded as its types encode them, and its
// own client talks to Serve in the tests. Its Conn does not run the
// connection, as it closes on any read error, decodes params into a map and
// marshals them again (~20 ms per MB), and keeps ids only as uint64 or
// string.
//
// The files follow the concepts: framing.go splits bytes into messages
// (detection, the header and line framers, the size limit); message.go
// scans one message (syntax, UTF-8, depth), reads escaped lone surrogates
// as U+FFFD, and picks out its members; scan.go is the fast scan that
// reads most messages (eight bytes at a time through strings), leaving
// what it does not accept to jsontext's; serve.go is the loop (frame,
// decode, dispatch, reply) and its stopping; writer.go writes one whole
// framed message at a time (replies, the transport's own error answers,
// notify.go's notifications); mux.go defines Request, Dispatcher and
// routes by method; errors.go holds the error codes (the contract's,
// package contract) and the Error a handler returns; observe.go the Observer a recording is,
// and ReadEnvelope, this package's reading of a message for an observer that needs it.
//
// rpc knows nothing of what a method means: no hook logic lives here. It
// writes nothing but protocol frames to its output, and logs message
// contents only at debug level.
package rpc
