package rpc

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/rs/zerolog"
)

// writer writes the server's messages: replies, the transport's own error
// answers and notifications, one whole framed message at a time, from the
// serving loop and the notification goroutine.
type writer struct {
	w   *bufio.Writer
	log zerolog.Logger
	obs Observer

	// writing holds a token while a message is written: it serialises
	// writes (a lock that, unlike sync.Mutex, testing/synctest sees a
	// goroutine wait on).
	writing chan struct{}
	fr      framer // under writing; nil until the framing is known

	stopped atomic.Bool
	errMu   sync.Mutex // never held across IO
	failed  error
}

var (
	// errStopped: Serve is returning; nothing more is written.
	errStopped = errors.New("rpc: stopped")
	// errFramingUnknown: nothing has been read yet under FramingAuto, so
	// there is no framing to write in.
	errFramingUnknown = errors.New("rpc: no framing yet: nothing read from the client")
)

func newWriter(out io.Writer, log zerolog.Logger, obs Observer) *writer {
	return &writer{
		w:       bufio.NewWriterSize(out, readBufferSize),
		log:     log,
		obs:     obs,
		writing: make(chan struct{}, 1),
	}
}

// setFraming makes writes use fr's framing.
func (w *writer) setFraming(fr framer) {
	w.writing <- struct{}{}
	w.fr = fr
	<-w.writing
}

// stop makes every write that has not started return errStopped. It does
// not wait for one in progress.
func (w *writer) stop() { w.stopped.Store(true) }

// err is the write error that ended the connection, if any.
func (w *writer) err() error {
	w.errMu.Lock()
	defer w.errMu.Unlock()
	return w.failed
}

// reply writes the response to the request with raw id: result, or the
// error err stands for (see toWireError). A result that cannot be encoded
// is answered with -32603. The error is a failure to write.
func (w *writer) reply(method string, id []byte, result any, err error) error {
	if err != nil {
		wire, dataErr := toWireError(err)
		if dataErr != nil {
			w.log.Error().Str("method", method).Err(dataErr).Msg("error data left out")
		}
		return w.writeError(id, wire)
	}
	var b []byte
	if enc, ok := result.(EncodedResult); ok {
		b, err = enc.AppendResult(nil)
	} else {
		b, err = json.Marshal(result)
	}
	if err != nil {
		w.log.Error().Str("method", method).Err(err).Msg("encoding result")
		return w.writeError(id, wireError{Code: CodeInternalError, Message: msgInternalError})
	}
	return w.write([]byte(`{"id":`), id, []byte(`,"result":`), b, []byte(`,"jsonrpc":"2.0"}`))
}

// writeError writes an error response from a handler's error.
func (w *writer) writeError(id []byte, wire wireError) error {
	b, err := encodeErrorObject(wire)
	if err != nil { // cannot happen: Data is already valid JSON
		return fmt.Errorf("rpc: encoding error reply: %w", err)
	}
	return w.write([]byte(`{"id":`), id, []byte(`,"error":`), b, []byte(`,"jsonrpc":"2.0"}`))
}

// replyError writes an error response the transport makes by itself.
func (w *writer) replyError(e *replyError) error {
	id := e.id
	if id == nil {
		id = []byte("null")
	}
	b := make([]byte, 0, 96+len(id)+len(e.message))
	b = append(b, `{"id":`...)
	b = append(b, id...)
	b = append(b, `,"error":{"code":`...)
	b = strconv.AppendInt(b, e.code, 10)
	b = append(b, `,"message":`...)
	b, err := jsontext.AppendQuote(b, e.message)
	if err != nil { // the message is ours; it is valid UTF-8
		return fmt.Errorf("rpc: encoding error reply: %w", err)
	}
	b = append(b, `},"jsonrpc":"2.0"}`...)
	return w.write(b)
}

// write writes one message and flushes it. After a write fails every
// later write returns the same error.
func (w *writer) write(parts ...[]byte) error {
	w.writing <- struct{}{}
	defer func() { <-w.writing }()
	if err := w.err(); err != nil {
		return err
	}
	if w.stopped.Load() {
		return errStopped
	}
	if w.fr == nil {
		return errFramingUnknown // only a notification can come this early
	}
	err := w.fr.WriteFrame(w.w, parts...)
	if err == nil {
		err = w.w.Flush()
	}
	if err != nil {
		err = fmt.Errorf("rpc: writing reply: %w", err)
		w.errMu.Lock()
		w.failed = err
		w.errMu.Unlock()
		return err
	}
	if w.obs != nil {
		w.obs.Wrote(bytes.Join(parts, nil))
	}
	return nil
}
