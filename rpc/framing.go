package rpc

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// Framing selects how messages are delimited.
type Framing int

const (
	FramingAuto   Framing = iota // detect from the first non-blank byte
	FramingHeader                // Content-Length headers
	FramingLine                  // one JSON value per line
)

func (f Framing) String() string {
	switch f {
	case FramingAuto:
		return "auto"
	case FramingHeader:
		return "header"
	case FramingLine:
		return "line"
	}
	return "Framing(" + strconv.Itoa(int(f)) + ")"
}

// ParseFraming parses the --framing flag: "auto" (or ""), "header" or "line".
func ParseFraming(s string) (Framing, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "", "auto":
		return FramingAuto, nil
	case "header":
		return FramingHeader, nil
	case "line":
		return FramingLine, nil
	}
	return FramingAuto, fmt.Errorf("unknown framing %q (want auto, header or line)", s)
}

const (
	// DefaultMaxMessageBytes is the message size limit when
	// Options.MaxMessageBytes is nil or returns a value <= 0.
	DefaultMaxMessageBytes int64 = 64 << 20

	// idPrefixBytes is how much of an oversized message is kept to look
	// for its id.
	idPrefixBytes = 4 << 10

	// maxHeaderLine bounds one header line; a longer one is a framing
	// error, so a client that sends a body without headers cannot make
	// the header reader buffer it.
	maxHeaderLine = 8 << 10

	// maxLineHint caps the room a long line starts with.
	maxLineHint = 16 << 20

	// keepFrameBytes bounds the buffer a framer keeps for the next
	// message: a larger message is read into a buffer of its own, let go
	// once the next one is read.
	keepFrameBytes = 8 << 20

	// maxSkipBytes bounds the Content-Length of an oversized message whose
	// body is read and discarded. A larger one is not believed (no client
	// sends a gigabyte in one message): its body is not waited for.
	maxSkipBytes = 1 << 30

	readBufferSize = 64 << 10
)

// detectFraming picks the framing from the first non-blank byte of r
// (PROTOCOL.md 1): 'C' (Content-Length) selects header framing, anything
// else line framing, where a byte that cannot start JSON is answered with a
// parse error. The blanks are consumed. It returns io.EOF if r ends first.
func detectFraming(r *bufio.Reader) (Framing, error) {
	for {
		b, err := r.ReadByte()
		if err != nil {
			return FramingAuto, err
		}
		if isBlank(b) {
			continue
		}
		if err := r.UnreadByte(); err != nil {
			return FramingAuto, err
		}
		if b == 'C' || b == 'c' {
			return FramingHeader, nil
		}
		return FramingLine, nil
	}
}

func isBlank(b byte) bool { return b == ' ' || b == '\t' || b == '\r' || b == '\n' }

// frame is one message as delimited by a framer. Exactly one of data,
// tooLarge and err describes it.
type frame struct {
	// data is the message. It is valid until the next ReadFrame: the
	// framer may read the next message into the same buffer.
	data []byte
	// tooLarge reports a message over the limit; it was skipped, and
	// prefix holds its first bytes (at most idPrefixBytes).
	tooLarge bool
	prefix   []byte
	size     int64 // of a tooLarge message: its length, or a lower bound
	// err is a frame that could not be delimited or was cut short; it
	// is answered with a parse error.
	err error
}

// A framer splits a byte stream into messages and writes messages back in
// the same framing.
type framer interface {
	// ReadFrame reads the next message, buffering at most limit bytes of
	// it. Malformed framing is reported in the frame, not as an error;
	// the error is io.EOF at a message boundary or the reader's failure,
	// after which the framer must not be used. Called from one goroutine.
	ReadFrame(limit int64) (frame, error)
	// WriteFrame writes the concatenation of parts as one message. The
	// caller serialises calls and flushes w.
	WriteFrame(w *bufio.Writer, parts ...[]byte) error
}

func newFramer(f Framing, r *bufio.Reader) framer {
	if f == FramingHeader {
		return &headerFramer{r: r}
	}
	return &lineFramer{r: r}
}

func partsLen(parts [][]byte) int {
	n := 0
	for _, p := range parts {
		n += len(p)
	}
	return n
}

// lineFramer reads one JSON value per '\n'-terminated line; a trailing '\r'
// is dropped and blank lines are skipped. The last line may lack its '\n'.
type lineFramer struct {
	r *bufio.Reader
	// hint is the length of the last line longer than the read buffer:
	// the next long line starts with that much room, so a run of large
	// messages is copied once each instead of collected in blocks.
	hint int
	// spare is the buffer that held the last long line (at most
	// keepFrameBytes): the next one starts in it, so a run of large
	// messages of about the same size allocates nothing.
	spare []byte
}

func (f *lineFramer) ReadFrame(limit int64) (frame, error) {
	for {
		fr, blank, err := f.readLine(limit)
		if err != nil || !blank {
			return fr, err
		}
	}
}

// readLine reads one line. It holds at most limit+2 bytes of it (the
// content and "\r\n"): past that the line is too large, and the rest is
// discarded as it is read, keeping only its first idPrefixBytes. A line
// that fits in the read buffer is handed on in place.
func (f *lineFramer) readLine(limit int64) (fr frame, blank bool, err error) {
	var (
		buf      lineBuffer
		size     int64 // bytes of the line, terminator included
		tooLarge bool
		prefix   []byte
	)
	room := limit + 2
	if int64(cap(f.spare)) <= room {
		buf.start(f.spare)
	}
	for {
		chunk, err := f.r.ReadSlice('\n')
		size += int64(len(chunk))
		switch {
		case tooLarge:
			prefix = appendPrefix(prefix, chunk)
		case buf.n == 0 && err == nil: // the whole line in one chunk
			if line := trimEOL(chunk); int64(len(line)) <= limit {
				if isBlankLine(line) {
					return frame{}, true, nil
				}
				return frame{data: line}, false, nil
			}
			tooLarge = true
			prefix = appendPrefix(make([]byte, 0, idPrefixBytes), chunk)
		case int64(buf.n)+int64(len(chunk)) > room:
			tooLarge = true
			prefix = appendPrefix(buf.prefix(idPrefixBytes), chunk)
			buf = lineBuffer{} // what it held is garbage now
		default:
			first := max(2*len(chunk), min(f.hint+f.hint/8, maxLineHint))
			buf.append(chunk, first, room)
		}
		switch {
		case err == nil:
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case err == io.EOF:
			if size == 0 {
				return frame{}, false, io.EOF
			}
			// the last line may lack its '\n'
		default:
			return frame{}, false, fmt.Errorf("reading line: %w", err)
		}
		break
	}
	if tooLarge {
		return frame{tooLarge: true, prefix: trimEOL(prefix), size: size}, false, nil
	}
	line := trimEOL(buf.bytes())
	if int64(len(line)) > limit {
		return frame{tooLarge: true, prefix: bytes.Clone(line[:min(len(line), idPrefixBytes)]), size: size}, false, nil
	}
	if isBlankLine(line) {
		return frame{}, true, nil
	}
	if size > int64(f.r.Size()) {
		f.hint = int(size)
	}
	if cap(line) <= keepFrameBytes {
		f.spare = line[:0]
	}
	return frame{data: line}, false, nil
}

// lineBuffer collects a line that spans more than one read of the
// buffered reader. It fills the spare buffer it was started with, then
// blocks, each twice the size of the one before, so growing never copies
// what it holds, and the blocks together never exceed the room append is
// given: a line that will be skipped costs no more memory than the limit.
type lineBuffer struct {
	head   []byte // the spare buffer, filled first
	blocks [][]byte
	n      int   // bytes held
	alloc  int64 // capacity of head and the blocks
}

// start makes spare (nil: none) the buffer filled first.
func (b *lineBuffer) start(spare []byte) {
	b.head = spare[:0]
	b.alloc = int64(cap(spare))
}

// append adds p, starting with a block of first bytes once head is full,
// and never allocating beyond room in total. The caller checks that p
// fits in room.
func (b *lineBuffer) append(p []byte, first int, room int64) {
	if len(b.blocks) == 0 {
		n := min(len(p), cap(b.head)-len(b.head))
		b.head = append(b.head, p[:n]...)
		b.n += n
		p = p[n:]
	}
	for len(p) > 0 {
		if len(b.blocks) == 0 || len(b.blocks[len(b.blocks)-1]) == cap(b.blocks[len(b.blocks)-1]) {
			size := int64(first)
			if len(b.blocks) > 0 {
				size = 2 * int64(cap(b.blocks[len(b.blocks)-1]))
			} else if cap(b.head) > 0 {
				size = 2 * int64(cap(b.head))
			}
			size = max(min(size, room-b.alloc), 1)
			b.blocks = append(b.blocks, make([]byte, 0, size))
			b.alloc += size
		}
		last := &b.blocks[len(b.blocks)-1]
		n := min(len(p), cap(*last)-len(*last))
		*last = append(*last, p[:n]...)
		b.n += n
		p = p[n:]
	}
}

// bytes returns the line, copied into one slice only if it spans blocks.
func (b *lineBuffer) bytes() []byte {
	switch {
	case len(b.blocks) == 0:
		return b.head
	case len(b.blocks) == 1 && len(b.head) == 0:
		return b.blocks[0]
	}
	line := make([]byte, 0, b.n)
	line = append(line, b.head...)
	for _, blk := range b.blocks {
		line = append(line, blk...)
	}
	return line
}

// prefix returns a copy of the first n bytes held (fewer if it holds
// less), with room for n.
func (b *lineBuffer) prefix(n int) []byte {
	p := appendPrefix(make([]byte, 0, n), b.head)
	for _, blk := range b.blocks {
		p = appendPrefix(p, blk)
	}
	return p
}

// appendPrefix appends as much of chunk as fits in idPrefixBytes.
func appendPrefix(buf, chunk []byte) []byte {
	if room := idPrefixBytes - len(buf); room > 0 {
		buf = append(buf, chunk[:min(room, len(chunk))]...)
	}
	return buf
}

func trimEOL(b []byte) []byte {
	b = bytes.TrimSuffix(b, []byte{'\n'})
	return bytes.TrimSuffix(b, []byte{'\r'})
}

func isBlankLine(b []byte) bool {
	for _, c := range b {
		if !isBlank(c) {
			return false
		}
	}
	return true
}

func (f *lineFramer) WriteFrame(w *bufio.Writer, parts ...[]byte) error {
	for _, p := range parts {
		if _, err := w.Write(p); err != nil {
			return err
		}
	}
	return w.WriteByte('\n')
}

// headerFramer reads LSP-style frames: header lines ("Name: value", ended
// by "\r\n" or a bare "\n"), a blank line, then Content-Length bytes.
// Headers other than Content-Length are ignored. After a frame whose
// headers it cannot use it resynchronises on the next "Content-Length:"
// in the stream, wherever it appears.
type headerFramer struct {
	r      *bufio.Reader
	buf    []byte // the last body read (at most keepFrameBytes), reused for the next
	resync bool   // skip input up to the next "Content-Length:"
	carry  []byte // a header line found while resynchronising
}

// errors describing bad header frames; they are answered with -32700.
var (
	errNoContentLength  = errors.New("missing Content-Length header")
	errBadContentLength = errors.New("bad Content-Length header")
	errMalformedHeader  = errors.New("malformed header line")
	errHeaderTooLong    = errors.New("header line too long")
	errTruncatedHeaders = errors.New("unexpected EOF in headers")
	errTruncatedBody    = errors.New("unexpected EOF in message body")
)

const contentLengthHeader = "content-length:"

func (f *headerFramer) ReadFrame(limit int64) (frame, error) {
	if f.resync {
		if err := f.skipToContentLength(); err != nil {
			return frame{}, err
		}
		f.resync = false
	}
	length := int64(-1)
	started := false
	for {
		line, err := f.readHeaderLine()
		if err == io.EOF && !started && len(line) == 0 {
			return frame{}, io.EOF
		}
		if err == io.EOF {
			return frame{err: errTruncatedHeaders}, nil
		}
		if errors.Is(err, errHeaderTooLong) {
			f.resync = true
			return frame{err: err}, nil
		}
		if err != nil {
			return frame{}, err
		}
		if isBlankLine(line) {
			if !started {
				continue // blank lines between messages
			}
			break
		}
		started = true
		name, value, ok := bytes.Cut(line, []byte{':'})
		if !ok || !isToken(name) {
			// Junk, possibly glued to the next header ("}Content-Length: 5"
			// after a body shorter than announced): answer it, then go on
			// from the next Content-Length.
			if i := indexFold(line, contentLengthHeader); i > 0 {
				f.carry = append(f.carry[:0], line[i:]...)
			} else {
				f.resync = true
			}
			return frame{err: errMalformedHeader}, nil
		}
		if !strings.EqualFold(string(name), "Content-Length") {
			continue
		}
		n, err := strconv.ParseInt(string(bytes.TrimSpace(value)), 10, 64)
		if err != nil || n < 0 || (length >= 0 && n != length) {
			f.resync = true
			return frame{err: errBadContentLength}, nil
		}
		length = n
	}
	if length < 0 {
		f.resync = true
		return frame{err: errNoContentLength}, nil
	}
	if length > limit {
		if length > maxSkipBytes {
			// Not believed: answer it now, and read on from the next
			// Content-Length header rather than swallow that much input.
			f.resync = true
			return frame{tooLarge: true, size: length}, nil
		}
		return f.skipBody(length)
	}
	if int64(cap(f.buf)) < length || cap(f.buf) > keepFrameBytes {
		f.buf = make([]byte, length)
	}
	buf := f.buf[:length]
	if _, err := io.ReadFull(f.r, buf); err != nil {
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			return frame{err: errTruncatedBody}, nil
		}
		return frame{}, fmt.Errorf("reading message body: %w", err)
	}
	return frame{data: buf}, nil
}

// skipBody discards an oversized body, keeping its first bytes.
func (f *headerFramer) skipBody(length int64) (frame, error) {
	prefix := make([]byte, min(length, idPrefixBytes))
	n, err := io.ReadFull(f.r, prefix)
	fr := frame{tooLarge: true, prefix: prefix[:n], size: length}
	if err != nil {
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			return fr, nil
		}
		return frame{}, fmt.Errorf("reading message body: %w", err)
	}
	for rest := length - int64(n); rest > 0; {
		d, err := f.r.Discard(int(min(rest, 1<<30)))
		rest -= int64(d)
		switch {
		case err == io.EOF:
			return fr, nil
		case err != nil:
			return frame{}, fmt.Errorf("skipping message body: %w", err)
		}
	}
	return fr, nil
}

// readHeaderLine returns the next header line without its line ending.
// A line longer than maxHeaderLine is consumed and reported as
// errHeaderTooLong. At EOF it returns what it has with io.EOF.
func (f *headerFramer) readHeaderLine() ([]byte, error) {
	if f.carry != nil {
		line := f.carry
		f.carry = nil
		return line, nil
	}
	var line []byte
	for {
		chunk, err := f.r.ReadSlice('\n')
		if len(line)+len(chunk) > maxHeaderLine {
			if err == nil {
				return nil, errHeaderTooLong
			}
			line = line[:0] // keep reading to the end of the line
			if errors.Is(err, bufio.ErrBufferFull) {
				if err := f.discardLine(); err != nil {
					return nil, err
				}
				return nil, errHeaderTooLong
			}
		} else {
			line = append(line, chunk...)
		}
		switch {
		case err == nil:
			return trimEOL(line), nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case err == io.EOF:
			return trimEOL(line), io.EOF
		default:
			return nil, fmt.Errorf("reading header line: %w", err)
		}
	}
}

func (f *headerFramer) discardLine() error {
	for {
		_, err := f.r.ReadSlice('\n')
		switch {
		case err == nil, err == io.EOF:
			return nil // io.EOF is seen again by the next read
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		default:
			return fmt.Errorf("reading header line: %w", err)
		}
	}
}

// skipToContentLength discards input up to the next "Content-Length:"
// (any case) and leaves that header line in carry.
func (f *headerFramer) skipToContentLength() error {
	matched := 0
	for {
		b, err := f.r.ReadByte()
		if err != nil {
			if err == io.EOF {
				return io.EOF
			}
			return fmt.Errorf("resynchronising headers: %w", err)
		}
		if lower(b) == contentLengthHeader[matched] {
			matched++
			if matched == len(contentLengthHeader) {
				rest, err := f.readHeaderLine()
				if err != nil && err != io.EOF {
					return err
				}
				f.carry = append([]byte("Content-Length:"), rest...)
				return nil
			}
			continue
		}
		// 'c' occurs only at the start of the pattern, so a mismatch can
		// only restart a match at this byte.
		matched = 0
		if lower(b) == contentLengthHeader[0] {
			matched = 1
		}
	}
}

func lower(b byte) byte {
	if 'A' <= b && b <= 'Z' {
		return b + ('a' - 'A')
	}
	return b
}

// indexFold is the index of the first case-insensitive match of the
// lower-case ASCII pattern in b, or -1.
func indexFold(b []byte, pattern string) int {
	for i := 0; i+len(pattern) <= len(b); i++ {
		j := 0
		for j < len(pattern) && lower(b[i+j]) == pattern[j] {
			j++
		}
		if j == len(pattern) {
			return i
		}
	}
	return -1
}

// isToken reports whether b is an HTTP header field name (RFC 9110 token).
func isToken(b []byte) bool {
	if len(b) == 0 {
		return false
	}
	for _, c := range b {
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		case strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0:
		default:
			return false
		}
	}
	return true
}

func (f *headerFramer) WriteFrame(w *bufio.Writer, parts ...[]byte) error {
	var hdr [48]byte
	h := append(hdr[:0], "Content-Length: "...)
	h = strconv.AppendInt(h, int64(partsLen(parts)), 10)
	h = append(h, "\r\n\r\n"...)
	if _, err := w.Write(h); err != nil {
		return err
	}
	for _, p := range parts {
		if _, err := w.Write(p); err != nil {
			return err
		}
	}
	return nil
}
