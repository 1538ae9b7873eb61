package rpc

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"runtime/debug"
	"sync"
	"time"

	"github.com/rs/zerolog"
	"github.com/sourcegraph/jsonrpc2"
)

// Options configures Serve.
type Options struct {
	Framing Framing
	// MaxMessageBytes returns the current message size limit; nil (or a
	// result <= 0) means 64 MiB. It is consulted for every message
	// (initialize may change it).
	MaxMessageBytes func() int64
	Log             zerolog.Logger
}

// Serve reads requests from in and writes replies to out until EOF on in
// (returns nil), ctx is cancelled (returns nil), or out fails (returns the
// error). Malformed input never ends it.
//
// Requests are dispatched one at a time in arrival order, each finished
// before the next message is read; a reply is written and flushed as soon
// as its request is done. When Serve returns no Dispatch call is running.
// Serve does not close in or out; after a cancellation a read of in that
// is in progress may outlive Serve, but what it reads is dropped.
//
// Decisions the protocol leaves open:
//   - An id may be any JSON string or number (negative, fractional or
//     huge ones too) and is echoed byte for byte; "id": null is a request
//     answered with "id": null; only an absent id makes a notification.
//   - "jsonrpc" must be present and exactly "2.0"; the top-level members
//     jsonrpc, id, method and params may appear only once.
//   - params may be any JSON value; the handler judges it (-32602).
//   - A message with no method but a result or error is a response from
//     the client and is ignored.
func Serve(ctx context.Context, in io.Reader, out io.Writer, d Dispatcher, opts Options) error {
	s := newStream(in, out, opts)
	h := &connHandler{stream: s, d: d, log: opts.Log}
	conn := jsonrpc2.NewConn(ctx, s, h, jsonrpc2.SetLogger(debugLogger{opts.Log}))
	<-conn.DisconnectNotify()
	h.stop()
	writeErr, readErr := s.errors()
	switch {
	case writeErr != nil:
		return writeErr
	case readErr == nil, readErr == io.EOF, ctx.Err() != nil:
		return nil
	}
	return readErr
}

// connHandler is the jsonrpc2.Handler: it calls the Dispatcher
// synchronously on the connection's read goroutine and replies.
type connHandler struct {
	stream *stream
	d      Dispatcher
	log    zerolog.Logger

	mu      sync.Mutex // held while Dispatch runs
	stopped bool
}

// stop waits for a Dispatch in progress and prevents any further one.
func (h *connHandler) stop() {
	h.mu.Lock()
	h.stopped = true
	h.mu.Unlock()
}

func (h *connHandler) Handle(ctx context.Context, conn *jsonrpc2.Conn, req *jsonrpc2.Request) {
	p, token, ok := h.stream.take(req)
	if !ok {
		h.log.Error().Str("method", req.Method).Msg("request missing from the side table; dropped")
		return
	}
	defer h.stream.release(token)
	notification := p.id == nil

	h.mu.Lock()
	if h.stopped || ctx.Err() != nil {
		h.mu.Unlock()
		return
	}
	start := time.Now()
	result, err := h.dispatch(ctx, p, notification)
	h.mu.Unlock()

	ev := h.log.Debug().Str("method", p.method).Dur("took", time.Since(start))
	if err != nil {
		ev = ev.AnErr("error", err)
	}
	ev.Msg("handled")
	if notification {
		if err != nil {
			h.log.Warn().Str("method", p.method).Err(err).Msg("notification failed")
		}
		return
	}
	if err != nil {
		wire, dataErr := toWireError(err)
		if dataErr != nil {
			h.log.Error().Str("method", p.method).Err(dataErr).Msg("error data left out")
		}
		h.replied(conn, p.method, conn.ReplyWithError(ctx, req.ID, wire))
		return
	}
	err = conn.Reply(ctx, req.ID, result)
	if err != nil && !errors.Is(err, jsonrpc2.ErrClosed) {
		if werr, _ := h.stream.errors(); werr == nil {
			// Nothing was written: the result could not be encoded.
			h.log.Error().Str("method", p.method).Err(err).Msg("encoding result")
			err = conn.ReplyWithError(ctx, req.ID, &jsonrpc2.Error{Code: CodeInternalError, Message: msgInternalError})
		}
	}
	h.replied(conn, p.method, err)
}

// replied closes the connection when a reply could not be written: the
// client is gone, and Serve returns the write error.
func (h *connHandler) replied(conn *jsonrpc2.Conn, method string, err error) {
	if err == nil || errors.Is(err, jsonrpc2.ErrClosed) {
		return
	}
	h.log.Error().Str("method", method).Err(err).Msg("writing reply; closing")
	_ = conn.Close()
}

// dispatch calls the Dispatcher, turning a panic into -32603.
func (h *connHandler) dispatch(ctx context.Context, p pendingRequest, notification bool) (result any, err error) {
	defer func() {
		if r := recover(); r != nil {
			h.log.Error().Str("method", p.method).Str("panic", fmt.Sprint(r)).
				Str("stack", string(debug.Stack())).Msg("handler panicked")
			result, err = nil, &Error{Code: CodeInternalError, Message: msgInternalError}
		}
	}()
	return h.d.Dispatch(withValidParams(ctx), p.method, json.RawMessage(p.params), notification)
}

// validParamsKey marks a Dispatch context whose params were scanned by
// the transport; see ParamsValidated.
type validParamsKey struct{}

func withValidParams(ctx context.Context) context.Context {
	return context.WithValue(ctx, validParamsKey{}, true)
}

// ParamsValidated reports whether ctx is the context of a Dispatch call
// from Serve, whose params (when present) are then one valid JSON value:
// the transport scanned the whole message (syntax, UTF-8, nesting depth)
// before dispatching it. A handler may then skip work that only matters
// for invalid JSON; Dispatch called any other way gets arbitrary bytes.
func ParamsValidated(ctx context.Context) bool {
	v, _ := ctx.Value(validParamsKey{}).(bool)
	return v
}

// debugLogger sends jsonrpc2's own log lines to zerolog at debug level.
type debugLogger struct{ log zerolog.Logger }

func (l debugLogger) Printf(format string, v ...any) {
	l.log.Debug().Str("from", "jsonrpc2").Msg(fmt.Sprintf(format, v...))
}
