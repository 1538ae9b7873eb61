package rpc

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"unicode/utf8"

	"github.com/go-json-experiment/json/jsontext"
)

// messageKind says what a frame held.
type messageKind int

const (
	kindRequest  messageKind = iota // a request or notification to dispatch
	kindResponse                    // a response from the client: ignored
	kindInvalid                     // answered with reply
)

// message is one decoded frame. The byte slices alias the frame.
type message struct {
	kind   messageKind
	method string
	// id is the raw id as sent (a JSON string, number or null); nil when
	// absent, which makes a request a notification.
	id []byte
	// rawMethod is the method as sent, a JSON string.
	rawMethod []byte
	// params is the raw params value as sent; nil when absent.
	params []byte
	// reply is the error that answers a kindInvalid message; its id is
	// the request's id when readable, else null.
	reply *replyError
}

// replyError is an error response the transport sends by itself.
type replyError struct {
	code    int64
	message string // may quote a few bytes of the message (parse errors)
	// summary is the message without any quoted content, for logs above
	// debug level.
	summary string
	id      []byte // raw id; nil means null
}

// decoder scans a message once: it checks the syntax of the whole value
// (and UTF-8 of its strings, and nesting depth) and picks out the
// top-level members, without decoding params.
type decoder struct {
	dec       jsontext.Decoder
	buf       bytes.Buffer
	idOff     int // where decodeObject found the id in its data
	paramsOff int // where decodeObject found params in its data
	members   []topMember
}

var (
	decoderOptions = []jsontext.Options{
		jsontext.AllowDuplicateNames(true), // not tracking names is faster; members we use are checked below
		jsontext.AllowInvalidUTF8(false),
	}
	// lenientOptions read past invalid UTF-8, to find the id of a message
	// that is answered for it.
	lenientOptions = []jsontext.Options{
		jsontext.AllowDuplicateNames(true),
		jsontext.AllowInvalidUTF8(true),
	}
)

func (d *decoder) reset(data []byte, opts ...jsontext.Options) {
	if opts == nil {
		opts = decoderOptions
	}
	// A bytes.Buffer lets jsontext scan data in place, and its offsets are
	// then offsets into data.
	d.buf = *bytes.NewBuffer(data)
	d.dec.Reset(&d.buf, opts...)
}

// decode classifies data as a request, a client response, or an invalid
// message with the error that answers it (PROTOCOL.md 1). Escaped lone
// surrogates in data are rewritten to \ufffd in place (the caller lets
// it: a frame's buffer is read into again only once its message was
// handled, and ReadEnvelope copies a message that has one): real clients
// send them (Node's JSON.stringify of a string cut inside a UTF-16 pair),
// and the handlers' decoder would reject them. The id keeps the bytes it
// was sent with.
//
// The scan rejects a lone surrogate as a syntax error, so data is looked
// at for them only after a scan failed: a valid message is read once
// (looking first cost a quarter of the time of a 5 MB history, whose
// code and logs hold a backslash every few dozen bytes).
//
// Most messages are read by the fast scan (decodeFast); what it does not
// accept, decodeSlow reads with jsontext, which says what is wrong.
func (d *decoder) decode(data []byte) message {
	if m, ok := d.decodeFast(data); ok {
		return m
	}
	return d.decodeSlow(data)
}

// decodeSlow is decode with jsontext's scan alone.
func (d *decoder) decodeSlow(data []byte) message {
	m := d.decodeMessage(data)
	var fixes []surrogateFix
	if m.kind == kindInvalid && m.reply.code == CodeParseError {
		if fixes = replaceLoneSurrogates(data); len(fixes) > 0 {
			m = d.decodeMessage(data)
		}
	}
	if m.kind == kindInvalid && m.reply.message == msgInvalidUTF8 {
		m.reply.id = d.idPastInvalidUTF8(data)
	}
	if m.kind == kindInvalid && m.reply.message == msgParseTooDeep {
		m.reply.id = d.idPastDepth(data)
	}
	if len(fixes) > 0 {
		m.id = restoreID(m.id, d.idOff, fixes)
		if m.reply != nil {
			m.reply.id = restoreID(m.reply.id, d.idOff, fixes)
		}
	}
	return m
}

// idPastInvalidUTF8 returns the id of a message that is valid JSON but
// for invalid UTF-8, when the id itself is valid UTF-8; otherwise nil.
func (d *decoder) idPastInvalidUTF8(data []byte) []byte {
	d.reset(data, lenientOptions...)
	if d.dec.PeekKind() != '{' {
		return nil
	}
	m := d.decodeObject(data)
	id := m.id
	if m.reply != nil {
		if m.reply.code == CodeParseError {
			return nil
		}
		id = m.reply.id
	}
	if id == nil || !utf8.Valid(id) {
		return nil
	}
	return id
}

// msgParseTooDeep answers a message nested deeper than the decoder goes.
const msgParseTooDeep = "parse error: " + msgNestingTooDeep

// idPastDepth returns the id of a message too deeply nested to decode: the
// value of its top-level "id" member when that is a string, a number or
// null (with valid UTF-8), wherever it stands among the members; otherwise
// nil. The bytes are scanned by hand (strings and nesting only), as the
// decoder stops at the depth; the id's own value is read with the decoder.
func (d *decoder) idPastDepth(data []byte) []byte {
	depth := 0
	key := false // at depth 1, the next string is a member name
	for i := 0; i < len(data); i++ {
		switch c := data[i]; c {
		case '{', '[':
			depth++
			key = depth == 1 && c == '{'
		case '}', ']':
			depth--
		case ',':
			key = depth == 1
		case '"':
			end := stringEnd(data, i)
			if end < 0 {
				return nil
			}
			if !key || depth != 1 {
				i = end
				continue
			}
			key = false
			name := data[i : end+1]
			i = end
			if string(name) != `"id"` {
				continue
			}
			j := skipSpace(data, end+1)
			if j >= len(data) || data[j] != ':' {
				return nil
			}
			j = skipSpace(data, j+1)
			if j >= len(data) || (data[j] != '"' && data[j] != '-' && data[j] != 'n' && (data[j] < '0' || data[j] > '9')) {
				return nil
			}
			var vd decoder
			vd.reset(data[j:])
			id, err := vd.value(data[j:])
			if err != nil || !utf8.Valid(id) {
				return nil
			}
			if k := skipSpace(data, j+len(id)); k >= len(data) || (data[k] != ',' && data[k] != '}') {
				return nil
			}
			d.idOff = j
			return id
		}
	}
	return nil
}

// stringEnd returns the index of the quote that closes the JSON string
// opening at data[start], or -1 when it does not close.
func stringEnd(data []byte, start int) int {
	for i := start + 1; i < len(data); i++ {
		switch data[i] {
		case '\\':
			i++
		case '"':
			return i
		}
	}
	return -1
}

func skipSpace(data []byte, i int) int {
	for i < len(data) && isBlank(data[i]) {
		i++
	}
	return i
}

func (d *decoder) decodeMessage(data []byte) message {
	d.reset(data)
	switch d.dec.PeekKind() {
	case '{':
		return d.decodeObject(data)
	case '[':
		if err := d.skipRest(); err != nil {
			return parseError(err)
		}
		return invalid(nil, msgBatch)
	default:
		if err := d.skipRest(); err != nil {
			return parseError(err)
		}
		return invalid(nil, "invalid request: not a JSON object")
	}
}

// skipRest skips one value and checks nothing follows it.
func (d *decoder) skipRest() error {
	if err := d.dec.SkipValue(); err != nil {
		return err
	}
	return d.expectEnd()
}

func (d *decoder) expectEnd() error {
	if _, err := d.dec.ReadToken(); err != io.EOF {
		if err == nil {
			return errors.New("data after the JSON value")
		}
		return err
	}
	return nil
}

// value reads the next value and returns its exact bytes in data.
func (d *decoder) value(data []byte) ([]byte, error) {
	v, err := d.dec.ReadValue()
	if err != nil {
		return nil, err
	}
	end := d.dec.InputOffset()
	return data[end-int64(len(v)) : end : end], nil
}

// envelope is what a message's top-level members say, as decodeObject
// and decodeFast find them, for classify.
type envelope struct {
	m                         message
	version                   []byte
	hasVersion, hasResult     bool
	badID, badMethod, dupName bool
	seen                      [4]bool // jsonrpc, id, method, params
}

// Indexes of envelope.seen.
const (
	memberVersion = iota
	memberID
	memberMethod
	memberParams
)

// saw notes one more top-level member of those indexes (-1: another).
func (e *envelope) saw(member int) {
	if member >= 0 {
		e.dupName = e.dupName || e.seen[member]
		e.seen[member] = true
	}
}

func (d *decoder) decodeObject(data []byte) message {
	var e envelope
	m := &e.m
	if _, err := d.dec.ReadToken(); err != nil { // '{'
		return parseError(err)
	}
	for d.dec.PeekKind() != '}' {
		name, err := d.dec.ReadToken()
		if err != nil {
			return parseError(err)
		}
		member := -1
		switch name.String() {
		case "jsonrpc":
			member = memberVersion
			e.hasVersion = true
			e.version, err = d.value(data)
		case "id":
			member = memberID
			switch d.dec.PeekKind() {
			case '"', '0', 'n':
				m.id, err = d.value(data)
				d.idOff = int(d.dec.InputOffset()) - len(m.id)
			default:
				e.badID = true
				m.id = nil
				err = d.dec.SkipValue()
			}
		case "method":
			member = memberMethod
			if d.dec.PeekKind() == '"' {
				m.rawMethod, err = d.value(data)
			} else {
				e.badMethod = true
				m.rawMethod = nil
				err = d.dec.SkipValue()
			}
		case "params":
			member = memberParams
			m.params, err = d.value(data)
			d.paramsOff = int(d.dec.InputOffset()) - len(m.params)
		case "result", "error":
			e.hasResult = true
			err = d.dec.SkipValue()
		default:
			err = d.dec.SkipValue()
		}
		if err != nil {
			return parseError(err)
		}
		e.saw(member)
	}
	if _, err := d.dec.ReadToken(); err != nil { // '}'
		return parseError(err)
	}
	if err := d.expectEnd(); err != nil {
		return parseError(err)
	}
	return classify(&e)
}

// decodeFast is decodeObject on a message the fast scan accepts (scan.go);
// false when it does not, and the decoder's scan is to read it.
func (d *decoder) decodeFast(data []byte) (message, bool) {
	members, ok := scanObject(data, d.members)
	d.members = members
	if !ok {
		return message{}, false
	}
	var e envelope
	m := &e.m
	for _, mb := range members {
		member := -1
		switch string(mb.name) {
		case "jsonrpc":
			member = memberVersion
			e.hasVersion = true
			e.version = mb.value
		case "id":
			member = memberID
			switch c := mb.value[0]; {
			case c == '"', c == 'n', c == '-', c >= '0' && c <= '9':
				m.id = mb.value
				d.idOff = mb.off
			default:
				e.badID = true
				m.id = nil
			}
		case "method":
			member = memberMethod
			if mb.value[0] == '"' {
				m.rawMethod = mb.value
			} else {
				e.badMethod = true
				m.rawMethod = nil
			}
		case "params":
			member = memberParams
			m.params = mb.value
			d.paramsOff = mb.off
		case "result", "error":
			e.hasResult = true
		}
		e.saw(member)
	}
	return classify(&e), true
}

// classify turns what a message's members say into the message: a
// request, a response from the client, or invalid.
func classify(e *envelope) message {
	m := e.m
	if m.rawMethod != nil {
		name, err := jsontext.AppendUnquote(nil, m.rawMethod)
		if err != nil { // cannot happen: the scan checked it
			return parseError(err)
		}
		m.method = string(name)
	}

	id := m.id
	if e.badID {
		id = nil
	}
	switch {
	case e.dupName:
		return invalid(id, "invalid request: duplicate member")
	case !e.hasVersion || string(unquote(e.version)) != "2.0":
		return invalid(id, `invalid request: "jsonrpc" must be "2.0"`)
	case e.badID:
		return invalid(nil, `invalid request: "id" must be a string, a number or null`)
	case !e.seen[memberMethod] && e.hasResult:
		m.kind = kindResponse
		return m
	case !e.seen[memberMethod] || e.badMethod:
		return invalid(id, `invalid request: "method" must be a string`)
	}
	m.kind = kindRequest
	return m
}

// unquote returns the contents of a raw JSON string, or nil if v is not
// a valid string.
func unquote(v []byte) []byte {
	if len(v) == 0 || v[0] != '"' {
		return nil
	}
	s, err := jsontext.AppendUnquote(nil, v)
	if err != nil {
		return nil
	}
	return s
}

func invalid(id []byte, msg string) message {
	return message{kind: kindInvalid, reply: &replyError{code: CodeInvalidRequest, message: msg, summary: msg, id: id}}
}

// parseError answers a message that is not (valid) JSON.
func parseError(err error) message {
	msg, summary := parseErrorMessage(err)
	return message{kind: kindInvalid, reply: &replyError{code: CodeParseError, message: msg, summary: summary}}
}

// parseErrorMessage returns the message of the reply to a parse error,
// which may quote a few bytes of the input (jsontext's errors do), and a
// summary that quotes none.
func parseErrorMessage(err error) (msg, summary string) {
	var serr *jsontext.SyntacticError
	switch {
	case err == io.EOF || errors.Is(err, io.ErrUnexpectedEOF):
		msg = "parse error: unexpected end of JSON input"
		return msg, msg
	case errors.As(err, &serr) && serr.Err != nil:
		switch serr.Err.Error() {
		case "invalid UTF-8":
			return msgInvalidUTF8, msgInvalidUTF8
		case "exceeded max depth":
			return msgParseTooDeep, msgParseTooDeep
		}
		return fmt.Sprintf("parse error: %v at offset %d", serr.Err, serr.ByteOffset),
			fmt.Sprintf("parse error at offset %d", serr.ByteOffset)
	}
	return "parse error: " + err.Error(), "parse error"
}

// surrogateFix is an escaped lone surrogate replaceLoneSurrogates
// rewrote: at off, the four hex digits it had.
type surrogateFix struct {
	off    int
	digits [4]byte
}

// replaceLoneSurrogates rewrites every escaped lone surrogate in data
// (\uD800 to \uDFFF not part of a high-low pair) to \ufffd, in place,
// and returns what it changed. A backslash outside a string is a syntax
// error either way, so data is not parsed: every escape is looked at.
func replaceLoneSurrogates(data []byte) []surrogateFix {
	if !hasSurrogateEscape(data) {
		return nil
	}
	var fixes []surrogateFix
	for i := 0; i < len(data); {
		j := bytes.IndexByte(data[i:], '\\')
		if j < 0 {
			break
		}
		i += j
		r, ok := escapedUnit(data[i:])
		switch {
		case !ok:
			i += 2 // \" \\ \n ... (or a bad escape: the scan reports it)
			continue
		case r >= 0xD800 && r <= 0xDBFF:
			if low, ok := escapedUnit(data[i+6:]); ok && low >= 0xDC00 && low <= 0xDFFF {
				i += 12 // a valid pair
				continue
			}
		case r < 0xDC00 || r > 0xDFFF:
			i += 6
			continue
		}
		fix := surrogateFix{off: i}
		copy(fix.digits[:], data[i+2:i+6])
		fixes = append(fixes, fix)
		copy(data[i+2:i+6], "fffd")
		i += 6
	}
	return fixes
}

// hasSurrogateEscape reports whether data may hold an escaped surrogate:
// a quick test that keeps the common case to one pass of bytes.Index.
func hasSurrogateEscape(data []byte) bool {
	return bytes.Contains(data, []byte(`\ud`)) || bytes.Contains(data, []byte(`\uD`))
}

// escapedUnit parses the \uXXXX escape at the start of b.
func escapedUnit(b []byte) (rune, bool) {
	if len(b) < 6 || b[0] != '\\' || b[1] != 'u' {
		return 0, false
	}
	return hex4(b, 2)
}

// restoreID returns id (at off in its frame) as it was sent, undoing the
// fixes inside it: the id is echoed byte for byte.
func restoreID(id []byte, off int, fixes []surrogateFix) []byte {
	if id == nil {
		return nil
	}
	var restored []byte
	for _, f := range fixes {
		if f.off < off || f.off >= off+len(id) {
			continue
		}
		if restored == nil {
			restored = bytes.Clone(id)
		}
		copy(restored[f.off-off+2:], f.digits[:])
	}
	if restored == nil {
		return id
	}
	return restored
}

// scanPrefixID looks for the top-level "id" of a message of which only
// prefix was kept. It returns the raw id only when the id member is
// complete within prefix and its value is a string, number or null;
// otherwise nil.
func scanPrefixID(prefix []byte) []byte {
	var d decoder
	d.reset(prefix)
	if d.dec.PeekKind() != '{' {
		return nil
	}
	if _, err := d.dec.ReadToken(); err != nil {
		return nil
	}
	for {
		switch d.dec.PeekKind() {
		case '"':
		default: // '}', an error, or the end of the prefix
			return nil
		}
		name, err := d.dec.ReadToken()
		if err != nil {
			return nil
		}
		if name.String() != "id" {
			if d.dec.SkipValue() != nil {
				return nil
			}
			continue
		}
		switch d.dec.PeekKind() {
		case '"', '0', 'n':
		default:
			return nil
		}
		id, err := d.value(prefix)
		if err != nil {
			return nil
		}
		// A number cut by the end of the prefix reads as a shorter one:
		// only trust it if some byte follows it.
		if id[0] != '"' && d.dec.InputOffset() >= int64(len(prefix)) {
			return nil
		}
		return bytes.Clone(id)
	}
}
