package rpc

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/rs/zerolog"
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
	c := &conn{
		r:        bufio.NewReaderSize(in, readBufferSize),
		w:        newWriter(out, opts.Log, opts.Observer),
		d:        d,
		maxBytes: opts.MaxMessageBytes,
		log:      opts.Log,
		obs:      opts.Observer,
		busy:     make(chan struct{}, 1),
	}
	if opts.Framing != FramingAuto {
		c.setFraming(opts.Framing)
	}

	served := make(chan error, 1)
	go func() { served <- c.serve(ctx) }()
	stopNotes, notesDone := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(notesDone)
		c.w.sendNotifications(opts.Notifications, stopNotes)
	}()

	var readErr error
	select {
	case readErr = <-served:
	case <-ctx.Done():
		c.stop()
	}
	close(stopNotes)
	<-notesDone
	switch werr := c.w.err(); {
	case werr != nil:
		return werr
	case readErr == io.EOF, ctx.Err() != nil:
		return nil
	}
	return readErr
}

// conn is one connection: its read side and the loop that serves it.
type conn struct {
	r        *bufio.Reader
	fr       framer // nil under FramingAuto until the first byte is read
	w        *writer
	d        Dispatcher
	dec      decoder
	maxBytes func() int64
	log      zerolog.Logger
	obs      Observer

	// busy holds a token while a message is handled (dispatch and reply),
	// so that stop can wait for it (a lock that, unlike sync.Mutex,
	// testing/synctest sees a goroutine wait on).
	busy     chan struct{}
	stopping atomic.Bool
}

// serve is the loop: frame, decode, dispatch, reply, until the input ends
// (io.EOF), fails, a reply cannot be written, or stop is called. Its
// error is the read error; a write error is the writer's.
func (c *conn) serve(ctx context.Context) error {
	for {
		if c.fr == nil {
			f, err := detectFraming(c.r)
			if err != nil {
				return c.readFailed(err)
			}
			c.log.Debug().Stringer("framing", f).Msg("detected framing")
			c.setFraming(f)
		}
		fr, err := c.fr.ReadFrame(c.limit())
		if err != nil {
			return c.readFailed(err)
		}
		c.busy <- struct{}{}
		if c.stopping.Load() {
			<-c.busy
			return nil
		}
		err = c.handle(ctx, fr)
		<-c.busy
		if err != nil {
			return nil // the writer holds the error, which Serve returns
		}
	}
}

// stop keeps the loop from handling another message and the writer from
// starting another, and waits for a message being handled.
func (c *conn) stop() {
	c.stopping.Store(true)
	c.w.stop()
	c.busy <- struct{}{}
	<-c.busy
}

func (c *conn) setFraming(f Framing) {
	c.fr = newFramer(f, c.r)
	c.w.setFraming(c.fr)
}

func (c *conn) limit() int64 {
	if c.maxBytes != nil {
		if n := c.maxBytes(); n > 0 {
			return n
		}
	}
	return DefaultMaxMessageBytes
}

func (c *conn) readFailed(err error) error {
	if err == io.EOF {
		return err
	}
	return fmt.Errorf("rpc: reading message: %w", err)
}

// handle answers one frame: a bad frame with an error, a request by
// dispatching it and writing the reply. Its error is a failure to write.
func (c *conn) handle(ctx context.Context, fr frame) error {
	if c.obs != nil {
		c.observeRead(fr)
	}
	switch {
	case fr.err != nil:
		c.log.Warn().Err(fr.err).Msg("unreadable frame")
		return c.w.replyError(&replyError{code: CodeParseError, message: "parse error: " + fr.err.Error()})
	case fr.tooLarge:
		id := scanPrefixID(fr.prefix)
		c.log.Warn().Int64("size", fr.size).Int64("limit", c.limit()).Bool("idFound", id != nil).Msg("message too large, skipped")
		return c.w.replyError(&replyError{code: CodeInvalidRequest, message: msgTooLarge, id: id})
	}
	m := c.dec.decode(fr.data)
	switch m.kind {
	case kindResponse:
		c.log.Debug().Bytes("id", m.id).Msg("ignoring a response from the client")
		return nil
	case kindInvalid:
		// The reply's message may quote the input: only debug logs it.
		c.log.Warn().Int64("code", m.reply.code).Str("error", m.reply.summary).Int("size", len(fr.data)).Bool("idFound", m.reply.id != nil).Msg("invalid message")
		c.log.Debug().Str("error", m.reply.message).Bytes("body", fr.data[:min(len(fr.data), 1024)]).Msg("invalid message body (first KiB)")
		return c.w.replyError(m.reply)
	}

	r := Request{Method: m.method, Params: m.params, Notification: m.id == nil, Validated: true}
	start := time.Now()
	result, err := c.dispatch(ctx, r)
	ev := c.log.Debug().Str("method", r.Method).Dur("took", time.Since(start))
	if err != nil {
		ev = ev.AnErr("error", err)
	}
	ev.Msg("handled")
	if r.Notification {
		if err != nil {
			// The error may quote the params: its text is logged above at debug only.
			c.log.Warn().Str("method", r.Method).Msg("notification failed")
		}
		return nil
	}
	if err := c.w.reply(r.Method, m.id, result, err); err != nil {
		if err == errStopped {
			return nil
		}
		// The client is gone; Serve returns the write error.
		c.log.Error().Str("method", r.Method).Err(err).Msg("writing reply; closing")
		return err
	}
	return nil
}

// observeRead tells the observer of a frame. The data is copied: the
// scan rewrites escaped lone surrogates in place.
func (c *conn) observeRead(fr frame) {
	switch {
	case fr.err != nil:
		c.obs.Skipped("unreadable frame: " + fr.err.Error())
	case fr.tooLarge:
		c.obs.Skipped("message over the size limit (" + strconv.FormatInt(fr.size, 10) + " bytes or more)")
	default:
		c.obs.Read(append([]byte(nil), fr.data...))
	}
}

// dispatch calls the Dispatcher, turning a panic into -32603.
func (c *conn) dispatch(ctx context.Context, r Request) (result any, err error) {
	defer func() {
		if v := recover(); v != nil {
			// A panic's value may quote what the handler was given (a
			// message's text): only the runtime's own errors, which name
			// indexes and types, go into the error line; any other value
			// is logged at debug, as request contents are.
			ev := c.log.Error().Str("method", r.Method).Str("stack", string(debug.Stack()))
			if re, ok := v.(runtime.Error); ok {
				ev = ev.Str("panic", re.Error())
			} else {
				ev = ev.Str("panicType", fmt.Sprintf("%T", v))
				c.log.Debug().Str("method", r.Method).Str("panic", fmt.Sprint(v)).Msg("handler panic value")
			}
			ev.Msg("handler panicked")
			result, err = nil, &Error{Code: CodeInternalError, Message: msgInternalError}
		}
	}()
	return c.d.Dispatch(ctx, r)
}
