package rpc

import (
	"bytes"
	"errors"
	"fmt"
	"io"

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
	message string
	id      []byte // raw id; nil means null
}

// decoder scans a message once: it checks the syntax of the whole value
// (and UTF-8 of its strings, and nesting depth) and picks out the
// top-level members, without decoding params.
type decoder struct {
	dec jsontext.Decoder
	buf bytes.Buffer
}

var decoderOptions = []jsontext.Options{
	jsontext.AllowDuplicateNames(true), // not tracking names is faster; members we use are checked below
	jsontext.AllowInvalidUTF8(false),
}

func (d *decoder) reset(data []byte) {
	// A bytes.Buffer lets jsontext scan data in place, and its offsets are
	// then offsets into data.
	d.buf = *bytes.NewBuffer(data)
	d.dec.Reset(&d.buf, decoderOptions...)
}

// decode classifies data as a request, a client response, or an invalid
// message with the error that answers it (PROTOCOL.md 1).
func (d *decoder) decode(data []byte) message {
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

func (d *decoder) decodeObject(data []byte) message {
	var (
		m                         message
		version                   []byte
		hasVersion, hasResult     bool
		badID, badMethod, dupName bool
		seen                      [4]bool // jsonrpc, id, method, params
	)
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
			member = 0
			hasVersion = true
			version, err = d.value(data)
		case "id":
			member = 1
			switch d.dec.PeekKind() {
			case '"', '0', 'n':
				m.id, err = d.value(data)
			default:
				badID = true
				m.id = nil
				err = d.dec.SkipValue()
			}
		case "method":
			member = 2
			if d.dec.PeekKind() == '"' {
				m.rawMethod, err = d.value(data)
			} else {
				badMethod = true
				m.rawMethod = nil
				err = d.dec.SkipValue()
			}
		case "params":
			member = 3
			m.params, err = d.value(data)
		case "result", "error":
			hasResult = true
			err = d.dec.SkipValue()
		default:
			err = d.dec.SkipValue()
		}
		if err != nil {
			return parseError(err)
		}
		if member >= 0 {
			dupName = dupName || seen[member]
			seen[member] = true
		}
	}
	if _, err := d.dec.ReadToken(); err != nil { // '}'
		return parseError(err)
	}
	if err := d.expectEnd(); err != nil {
		return parseError(err)
	}
	if m.rawMethod != nil {
		name, err := jsontext.AppendUnquote(nil, m.rawMethod)
		if err != nil { // cannot happen: the decoder checked it
			return parseError(err)
		}
		m.method = string(name)
	}

	id := m.id
	if badID {
		id = nil
	}
	switch {
	case dupName:
		return invalid(id, "invalid request: duplicate member")
	case !hasVersion || string(unquote(version)) != "2.0":
		return invalid(id, `invalid request: "jsonrpc" must be "2.0"`)
	case badID:
		return invalid(nil, `invalid request: "id" must be a string, a number or null`)
	case !seen[2] && hasResult:
		m.kind = kindResponse
		return m
	case !seen[2] || badMethod:
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
	return message{kind: kindInvalid, reply: &replyError{code: CodeInvalidRequest, message: msg, id: id}}
}

// parseError answers a message that is not (valid) JSON.
func parseError(err error) message {
	return message{kind: kindInvalid, reply: &replyError{code: CodeParseError, message: parseErrorMessage(err)}}
}

func parseErrorMessage(err error) string {
	var serr *jsontext.SyntacticError
	switch {
	case err == io.EOF || errors.Is(err, io.ErrUnexpectedEOF):
		return "parse error: unexpected end of JSON input"
	case errors.As(err, &serr) && serr.Err != nil:
		switch serr.Err.Error() {
		case "invalid UTF-8":
			return msgInvalidUTF8
		case "exceeded max depth":
			return "parse error: " + msgNestingTooDeep
		}
		return fmt.Sprintf("parse error: %v at offset %d", serr.Err, serr.ByteOffset)
	}
	return "parse error: " + err.Error()
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
