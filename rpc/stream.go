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
	"github.com/sourcegraph/jsonrpc2"
)

// stream is the jsonrpc2.ObjectStream under Serve's connection.
//
// jsonrpc2 closes its connection on any ReadObject error, decodes params
// into a map and marshals them again, and knows only unsigned or string
// ids. So ReadObject answers every malformed frame itself and reads on; a
// request is scanned once, its raw id and params wait in a side table
// under a token, and jsonrpc2 is given a small request whose id (for a
// call) and params are that token:
//
//	{"jsonrpc":"2.0","id":7,"method":"m","params":7}
//
// The connection's handler takes the request back with take and writes
// its reply with reply, which encodes it with the raw id as sent.
// jsonrpc2 itself never writes on this stream: WriteObject refuses.
type stream struct {
	r        *bufio.Reader
	framing  Framing // forced, or FramingAuto until the first byte is seen
	maxBytes func() int64
	log      zerolog.Logger
	dec      decoder // used by ReadObject only
	env      []byte  // envelope buffer, used by ReadObject only
	fr       framer  // set by ReadObject, holding writing
	obs      Observer

	// writing holds a token while a message is written: it serialises
	// writes, and shutdown waits on it (a lock that, unlike sync.Mutex,
	// testing/synctest sees a goroutine wait on).
	writing chan struct{}
	w       *bufio.Writer

	closed   atomic.Bool
	errMu    sync.Mutex // never held across IO
	writeErr error
	readErr  error

	tableMu sync.Mutex
	next    uint64
	table   map[uint64]*pendingRequest
}

// pendingRequest is a request between ReadObject and its reply.
type pendingRequest struct {
	method string
	id     []byte // raw; nil for a notification
	params json.RawMessage
}

var (
	_ jsonrpc2.ObjectStream = (*stream)(nil)

	errStreamClosed  = errors.New("stream closed")
	errJSONRPC2Write = errors.New("rpc: jsonrpc2 sends nothing on this connection; replies are written by Serve")
)

func newStream(in io.Reader, out io.Writer, opts Options) *stream {
	s := &stream{
		r:        bufio.NewReaderSize(in, readBufferSize),
		w:        bufio.NewWriterSize(out, readBufferSize),
		writing:  make(chan struct{}, 1),
		framing:  opts.Framing,
		maxBytes: opts.MaxMessageBytes,
		log:      opts.Log,
		obs:      opts.Observer,
		table:    make(map[uint64]*pendingRequest),
	}
	if s.framing != FramingAuto {
		s.fr = newFramer(s.framing, s.r)
	}
	return s
}

func (s *stream) limit() int64 {
	if s.maxBytes != nil {
		if n := s.maxBytes(); n > 0 {
			return n
		}
	}
	return DefaultMaxMessageBytes
}

// ReadObject stores the next request in v, a *jsonrpc2.anyMessage (or
// anything that takes a request's JSON). Frames that are not requests are
// answered or ignored here. It fails only when the input ends (io.EOF),
// the input fails, a reply to a bad frame cannot be written, or the stream
// was closed. It is called from one goroutine.
func (s *stream) ReadObject(v any) error {
	for {
		if s.closed.Load() {
			return errStreamClosed
		}
		if s.fr == nil {
			f, err := detectFraming(s.r)
			if err != nil {
				return s.failRead(err)
			}
			s.log.Debug().Stringer("framing", f).Msg("detected framing")
			s.writing <- struct{}{}
			s.framing, s.fr = f, newFramer(f, s.r)
			<-s.writing
		}
		fr, err := s.fr.ReadFrame(s.limit())
		if err != nil {
			return s.failRead(err)
		}
		if s.obs != nil {
			s.observeRead(fr)
		}
		env, err := s.handleFrame(fr)
		if err != nil {
			return err
		}
		if env == nil {
			continue
		}
		if s.closed.Load() {
			return errStreamClosed
		}
		if u, ok := v.(json.Unmarshaler); ok {
			return u.UnmarshalJSON(env)
		}
		return json.Unmarshal(env, v)
	}
}

func (s *stream) failRead(err error) error {
	if err != io.EOF {
		err = fmt.Errorf("rpc: reading message: %w", err)
	}
	s.errMu.Lock()
	s.readErr = err
	s.errMu.Unlock()
	return err
}

// observeRead tells the observer of a frame. The data is copied: the
// scan rewrites escaped lone surrogates in place.
func (s *stream) observeRead(fr frame) {
	switch {
	case fr.err != nil:
		s.obs.Skipped("unreadable frame: " + fr.err.Error())
	case fr.tooLarge:
		s.obs.Skipped("message over the size limit (" + strconv.FormatInt(fr.size, 10) + " bytes or more)")
	default:
		s.obs.Read(append([]byte(nil), fr.data...))
	}
}

// handleFrame returns the envelope for a request, or answers the frame and
// returns nil. Its error is a failure to write that answer.
func (s *stream) handleFrame(fr frame) ([]byte, error) {
	switch {
	case fr.err != nil:
		s.log.Warn().Err(fr.err).Msg("unreadable frame")
		return nil, s.replyError(&replyError{code: CodeParseError, message: "parse error: " + fr.err.Error()})
	case fr.tooLarge:
		id := scanPrefixID(fr.prefix)
		s.log.Warn().Int64("size", fr.size).Int64("limit", s.limit()).Bool("idFound", id != nil).Msg("message too large, skipped")
		return nil, s.replyError(&replyError{code: CodeInvalidRequest, message: msgTooLarge, id: id})
	}
	m := s.dec.decode(fr.data)
	switch m.kind {
	case kindResponse:
		s.log.Debug().Bytes("id", m.id).Msg("ignoring a response from the client")
		return nil, nil
	case kindInvalid:
		// The reply's message may quote the input: only debug logs it.
		s.log.Warn().Int64("code", m.reply.code).Str("error", m.reply.summary).Int("size", len(fr.data)).Bool("idFound", m.reply.id != nil).Msg("invalid message")
		s.log.Debug().Str("error", m.reply.message).Bytes("body", fr.data[:min(len(fr.data), 1024)]).Msg("invalid message body (first KiB)")
		return nil, s.replyError(m.reply)
	}
	return s.envelope(s.store(m), m), nil
}

// store keeps a request's raw id and params (slices of the frame, which
// is not reused) and returns its token.
func (s *stream) store(m message) uint64 {
	p := &pendingRequest{method: m.method, id: m.id, params: m.params}
	s.tableMu.Lock()
	defer s.tableMu.Unlock()
	s.next++
	s.table[s.next] = p
	return s.next
}

func (s *stream) envelope(token uint64, m message) []byte {
	b := append(s.env[:0], `{"jsonrpc":"2.0",`...)
	if m.id != nil {
		b = append(b, `"id":`...)
		b = strconv.AppendUint(b, token, 10)
		b = append(b, ',')
	}
	b = append(b, `"method":`...)
	b = append(b, m.rawMethod...)
	b = append(b, `,"params":`...)
	b = strconv.AppendUint(b, token, 10)
	b = append(b, '}')
	s.env = b
	return b
}

// take returns the request behind an envelope jsonrpc2 decoded, with its
// token; the caller releases the token once it has replied.
func (s *stream) take(req *jsonrpc2.Request) (pendingRequest, uint64, bool) {
	if req.Params == nil {
		return pendingRequest{}, 0, false
	}
	token, err := strconv.ParseUint(string(*req.Params), 10, 64)
	if err != nil {
		return pendingRequest{}, 0, false
	}
	s.tableMu.Lock()
	defer s.tableMu.Unlock()
	p, ok := s.table[token]
	if !ok {
		return pendingRequest{}, 0, false
	}
	taken := *p
	p.params = nil // the handler owns them now
	return taken, token, true
}

func (s *stream) release(token uint64) {
	s.tableMu.Lock()
	delete(s.table, token)
	s.tableMu.Unlock()
}

// WriteObject implements jsonrpc2.ObjectStream. Serve never asks jsonrpc2
// to send (no Reply, Call or Notify on its connection): replies are written
// by reply, with the request's raw id. So this only refuses.
func (s *stream) WriteObject(any) error { return errJSONRPC2Write }

// reply writes the response to the request with raw id: result, or the
// error err stands for (see toWireError). A result that cannot be encoded
// is answered with -32603. The error is a failure to write.
func (s *stream) reply(method string, id []byte, result any, err error) error {
	if err != nil {
		wire, dataErr := toWireError(err)
		if dataErr != nil {
			s.log.Error().Str("method", method).Err(dataErr).Msg("error data left out")
		}
		return s.writeError(id, wire)
	}
	var b []byte
	if enc, ok := result.(EncodedResult); ok {
		b, err = enc.AppendResult(nil)
	} else {
		b, err = json.Marshal(result)
	}
	if err != nil {
		s.log.Error().Str("method", method).Err(err).Msg("encoding result")
		return s.writeError(id, wireError{Code: CodeInternalError, Message: msgInternalError})
	}
	return s.write([]byte(`{"id":`), id, []byte(`,"result":`), b, []byte(`,"jsonrpc":"2.0"}`))
}

// writeError writes an error response from a handler's error.
func (s *stream) writeError(id []byte, wire wireError) error {
	b, err := json.Marshal(wire)
	if err != nil { // cannot happen: Data is already valid JSON
		return fmt.Errorf("rpc: encoding error reply: %w", err)
	}
	return s.write([]byte(`{"id":`), id, []byte(`,"error":`), b, []byte(`,"jsonrpc":"2.0"}`))
}

// replyError writes an error response the stream makes by itself.
func (s *stream) replyError(e *replyError) error {
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
	return s.write(b)
}

// write writes one message and flushes it. After a write fails every
// later write returns the same error.
func (s *stream) write(parts ...[]byte) error {
	s.writing <- struct{}{}
	defer func() { <-s.writing }()
	if werr, _ := s.errors(); werr != nil {
		return werr
	}
	if s.closed.Load() {
		return errStreamClosed
	}
	if s.fr == nil {
		return errFramingUnknown // only a notification can come this early
	}
	err := s.fr.WriteFrame(s.w, parts...)
	if err == nil {
		err = s.w.Flush()
	}
	if err != nil {
		err = fmt.Errorf("rpc: writing reply: %w", err)
		s.errMu.Lock()
		s.writeErr = err
		s.errMu.Unlock()
		return err
	}
	if s.obs != nil {
		s.obs.Wrote(bytes.Join(parts, nil))
	}
	return nil
}

// Close stops the stream: ReadObject and writes fail from now on. It does
// not close the reader or writer Serve was given (they are the caller's),
// and it never waits for a write in progress (shutdown does).
func (s *stream) Close() error {
	s.closed.Store(true)
	return nil
}

// shutdown closes the stream once no message is being written, so that
// every message is written whole or not at all before Serve returns and
// its caller exits. Close cannot be that point: jsonrpc2 signals the
// disconnect before it calls Close, and the connection's read goroutine
// (a handler's reply, an answer to a bad frame) may still be writing.
func (s *stream) shutdown() {
	s.writing <- struct{}{}
	s.closed.Store(true)
	<-s.writing
}

// errors returns what ended the stream: the write error, else the read error.
func (s *stream) errors() (writeErr, readErr error) {
	s.errMu.Lock()
	defer s.errMu.Unlock()
	return s.writeErr, s.readErr
}
