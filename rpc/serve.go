package rpc

import (
	"context"
	"errors"
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
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
	// Observer, when set, is told of every message read and written.
	Observer Observer
	// Notifications, when set, are sent to the client as they come,
	// between replies, framed as the client's messages are; one that
	// comes before anything was read under FramingAuto is dropped.
	Notifications <-chan Notification
}

// Serve reads requests from in and writes replies to out until EOF on in
// (returns nil), ctx is cancelled (returns nil), or out fails (returns the
// error). Malformed input never ends it.
//
// Requests are dispatched one at a time in arrival order, each finished
// before the next message is read; a reply is written and flushed as soon
// as its request is done. When Serve returns no Dispatch call is running
// and nothing is being written to out: each message went out whole or
// not at all, and none is written later. So on cancellation Serve waits
// for a write in progress, however long out takes to accept it; a reply
// not yet started is dropped.
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
	h := &connHandler{stream: s, d: d, log: opts.Log, running: make(chan struct{}, 1)}
	conn := jsonrpc2.NewConn(ctx, s, h, jsonrpc2.SetLogger(debugLogger{opts.Log}))
	notified := make(chan struct{})
	if opts.Notifications != nil {
		go func() {
			defer close(notified)
			s.sendNotifications(opts.Notifications, conn.DisconnectNotify())
		}()
	} else {
		close(notified)
	}
	<-conn.DisconnectNotify()
	<-notified
	h.stop()
	s.shutdown()
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

	// running holds a token while Dispatch runs (a lock that, unlike
	// sync.Mutex, testing/synctest sees a goroutine wait on).
	running chan struct{}
	stopped bool // under running
}

// stop waits for a Dispatch in progress and prevents any further one.
func (h *connHandler) stop() {
	h.running <- struct{}{}
	h.stopped = true
	<-h.running
}

func (h *connHandler) Handle(ctx context.Context, conn *jsonrpc2.Conn, req *jsonrpc2.Request) {
	p, token, ok := h.stream.take(req)
	if !ok {
		h.log.Error().Str("method", req.Method).Msg("request missing from the side table; dropped")
		return
	}
	defer h.stream.release(token)
	r := Request{Method: p.method, Params: p.params, Notification: p.id == nil, Validated: true}

	h.running <- struct{}{}
	if h.stopped || ctx.Err() != nil {
		<-h.running
		return
	}
	start := time.Now()
	result, err := h.dispatch(ctx, r)
	<-h.running

	ev := h.log.Debug().Str("method", r.Method).Dur("took", time.Since(start))
	if err != nil {
		ev = ev.AnErr("error", err)
	}
	ev.Msg("handled")
	if r.Notification {
		if err != nil {
			// The error may quote the params: its text is logged above at debug only.
			h.log.Warn().Str("method", r.Method).Msg("notification failed")
		}
		return
	}
	if err := h.stream.reply(r.Method, p.id, result, err); err != nil && !errors.Is(err, errStreamClosed) {
		// The client is gone; Serve returns the write error.
		h.log.Error().Str("method", r.Method).Err(err).Msg("writing reply; closing")
		_ = conn.Close()
	}
}

// dispatch calls the Dispatcher, turning a panic into -32603.
func (h *connHandler) dispatch(ctx context.Context, r Request) (result any, err error) {
	defer func() {
		if v := recover(); v != nil {
			// A panic's value may quote what the handler was given (a
			// message's text): only the runtime's own errors, which name
			// indexes and types, go into the error line; any other value
			// is logged at debug, as request contents are.
			ev := h.log.Error().Str("method", r.Method).Str("stack", string(debug.Stack()))
			if re, ok := v.(runtime.Error); ok {
				ev = ev.Str("panic", re.Error())
			} else {
				ev = ev.Str("panicType", fmt.Sprintf("%T", v))
				h.log.Debug().Str("method", r.Method).Str("panic", fmt.Sprint(v)).Msg("handler panic value")
			}
			ev.Msg("handler panicked")
			result, err = nil, &Error{Code: CodeInternalError, Message: msgInternalError}
		}
	}()
	return h.d.Dispatch(ctx, r)
}

// debugLogger sends jsonrpc2's own log lines to zerolog at debug level.
type debugLogger struct{ log zerolog.Logger }

func (l debugLogger) Printf(format string, v ...any) {
	l.log.Debug().Str("from", "jsonrpc2").Msg(fmt.Sprintf(format, v...))
}
