package handlers

import (
	"bytes"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/hookwire/hookwire/incremental"
)

// The full form's fast decoding (issue 50). The shim's projection keeps
// the texts of a history's parts (PROTOCOL.md 4.5): on a conversation
// that is mostly prose, a fifth of its bytes, all of which the handler
// reads. The JSON v2 decoder looks at each of their bytes twice, a byte at
// a time (its scan, which checks UTF-8 again, then its unquoting), where
// rpc's scan has already checked the whole request. decodeFullForm reads
// params that scan accepted in one pass, a string's end and escapes found
// with bytes.IndexByte, and decodes exactly what decodeTransformParams
// decodes, or declines: anything it does not take as the JSON v2 decoder
// would (the incremental form, a null or a value of another type where a
// field has one, a member name with an escape, nesting past
// fastMaxNesting, a lone escaped surrogate) goes to that decoder, which
// decides, so an error is always its error. FuzzFastTransform holds the
// two to the same result.

// fastMaxNesting bounds the nesting decodeFullForm follows.
const fastMaxNesting = 256

// fastReader reads JSON that rpc's scan accepted. Every method returns
// false when the input is not what the fast path takes; the reader is
// then abandoned.
type fastReader struct {
	data []byte
	i    int
	// names holds the member names of the objects being read, innermost
	// last, to reject a duplicate name as the JSON v2 decoder does
	// (jsontext checks every object, skipped ones too).
	names [][]byte
}

// decodeFullForm decodes params in the full form (input, output and
// optionally sync with a session) that rpc's scan accepted, or reports
// false for decodeTransformParams to decide.
func decodeFullForm(raw []byte) (*chatMessagesTransformParams, bool) {
	r := fastReader{data: raw}
	var p chatMessagesTransformParams
	ok := r.object(0, func(name []byte) bool {
		switch string(name) {
		case "input":
			if r.peek() == 'n' {
				return false
			}
			start := r.i
			if !r.skip(1) {
				return false
			}
			v := jsontext.Value(bytes.Clone(r.data[start:r.i]))
			p.Input = &v
			return true
		case "output":
			p.Output = &incremental.Output{}
			return r.object(1, func(name []byte) bool {
				if string(name) != "messages" {
					return r.skip(2)
				}
				msgs, ok := r.messages(2)
				p.Output.Messages = msgs
				return ok
			})
		case "sync":
			p.Sync = &incremental.Sync{}
			return r.object(1, func(name []byte) bool {
				switch string(name) {
				case "session":
					s, ok := r.str()
					p.Sync.Session = s
					return ok
				case "reapply":
					b, ok := r.boolean()
					p.Sync.Reapply = b
					return ok
				case "base", "messages": // the incremental form
					return false
				}
				return r.skip(2)
			})
		}
		return r.skip(1)
	})
	if !ok || p.Input == nil || p.Output == nil {
		return nil, false
	}
	r.blanks()
	if r.i != len(raw) {
		return nil, false
	}
	return &p, true
}

func (r *fastReader) messages(depth int) ([]incremental.Message, bool) {
	msgs := []incremental.Message{}
	ok := r.array(depth, func() bool {
		msgs = append(msgs, incremental.Message{})
		m := &msgs[len(msgs)-1]
		return r.object(depth+1, func(name []byte) bool {
			switch string(name) {
			case "info":
				return r.info(depth+2, &m.Info)
			case "parts":
				m.Parts = []incremental.Part{}
				return r.array(depth+2, func() bool {
					m.Parts = append(m.Parts, incremental.Part{})
					return r.part(depth+3, &m.Parts[len(m.Parts)-1])
				})
			}
			return r.skip(depth + 2)
		})
	})
	return msgs, ok
}

func (r *fastReader) info(depth int, in *incremental.Info) bool {
	return r.object(depth, func(name []byte) bool {
		var ok bool
		switch string(name) {
		case "id":
			in.ID, ok = r.str()
		case "role":
			in.Role, ok = r.str()
		case "sessionID":
			in.SessionID, ok = r.str()
		case "agent":
			in.Agent, ok = r.anyValue(depth + 1)
		default:
			ok = r.skip(depth + 1)
		}
		return ok
	})
}

func (r *fastReader) part(depth int, p *incremental.Part) bool {
	return r.object(depth, func(name []byte) bool {
		var ok bool
		switch string(name) {
		case "type":
			p.Type, ok = r.str()
		case "text":
			var s string
			s, ok = r.str()
			p.Text = &s
		case "synthetic":
			p.Synthetic, ok = r.boolean()
		case "tool":
			p.Tool, ok = r.str()
		case "callID":
			p.CallID, ok = r.str()
		case "state":
			p.State = &incremental.State{}
			ok = r.object(depth+1, func(name []byte) bool {
				switch string(name) {
				case "status":
					s, ok := r.str()
					p.State.Status = s
					return ok
				case "error":
					v, ok := r.anyValue(depth + 2)
					p.State.Error = v
					return ok
				}
				return r.skip(depth + 2)
			})
		default:
			ok = r.skip(depth + 1)
		}
		return ok
	})
}

func (r *fastReader) blanks() {
	for r.i < len(r.data) {
		switch r.data[r.i] {
		case ' ', '\t', '\r', '\n':
			r.i++
			continue
		}
		return
	}
}

// peek returns the next byte after blanks, 0 at the end.
func (r *fastReader) peek() byte {
	r.blanks()
	if r.i >= len(r.data) {
		return 0
	}
	return r.data[r.i]
}

// object reads an object, calling member for each member with the reader
// at its value, which member must read. It rejects a duplicate name.
func (r *fastReader) object(depth int, member func(name []byte) bool) bool {
	if depth > fastMaxNesting || r.peek() != '{' {
		return false
	}
	r.i++
	base := len(r.names)
	defer func() { r.names = r.names[:base] }()
	if r.peek() == '}' {
		r.i++
		return true
	}
	for {
		if r.peek() != '"' {
			return false
		}
		// A member name is short: its bytes are looked at one by one.
		end := r.i + 1
		for end < len(r.data) && r.data[end] != '"' && r.data[end] != '\\' {
			end++
		}
		if end >= len(r.data) || r.data[end] != '"' {
			return false // an escape, or no end
		}
		name := r.data[r.i+1 : end]
		end++
		for _, seen := range r.names[base:] {
			if bytes.Equal(seen, name) {
				return false
			}
		}
		r.names = append(r.names, name)
		r.i = end
		if r.peek() != ':' {
			return false
		}
		r.i++
		if !member(name) {
			return false
		}
		switch r.peek() {
		case ',':
			r.i++
		case '}':
			r.i++
			return true
		default:
			return false
		}
	}
}

// array reads an array, calling elem with the reader at each element.
func (r *fastReader) array(depth int, elem func() bool) bool {
	if depth > fastMaxNesting || r.peek() != '[' {
		return false
	}
	r.i++
	if r.peek() == ']' {
		r.i++
		return true
	}
	for {
		if !elem() {
			return false
		}
		switch r.peek() {
		case ',':
			r.i++
		case ']':
			r.i++
			return true
		default:
			return false
		}
	}
}

// skip passes over one value, checking its objects' names.
func (r *fastReader) skip(depth int) bool {
	switch c := r.peek(); c {
	case '"':
		r.i = stringEnd(r.data, r.i)
		return true
	case '{':
		return r.object(depth, func([]byte) bool { return r.skip(depth + 1) })
	case '[':
		return r.array(depth, func() bool { return r.skip(depth + 1) })
	case 't', 'n':
		r.i += 4
	case 'f':
		r.i += 5
	case 0:
		return false
	default:
		for r.i < len(r.data) && strings.IndexByte("0123456789+-.eE", r.data[r.i]) >= 0 {
			r.i++
		}
	}
	return r.i <= len(r.data)
}

func (r *fastReader) boolean() (bool, bool) {
	switch r.peek() {
	case 't':
		r.i += 4
		return true, r.i <= len(r.data)
	case 'f':
		r.i += 5
		return false, r.i <= len(r.data)
	}
	return false, false
}

// anyValue reads a value into an any as the JSON v2 decoder does: a
// string here, anything else by that decoder.
func (r *fastReader) anyValue(depth int) (any, bool) {
	if r.peek() == '"' {
		return r.str()
	}
	start := r.i
	if !r.skip(depth) {
		return nil, false
	}
	var v any
	if err := jsonv2.Unmarshal(r.data[start:r.i], &v); err != nil {
		return nil, false
	}
	return v, true
}

// str reads a string, its escapes resolved.
func (r *fastReader) str() (string, bool) {
	if r.peek() != '"' {
		return "", false
	}
	data := r.data
	i := r.i + 1
	end := stringEnd(data, r.i) - 1 // the closing quote
	r.i = end + 1
	bs := bytes.IndexByte(data[i:end], '\\')
	if bs < 0 {
		return string(data[i:end]), true
	}
	var b strings.Builder
	b.Grow(end - i) // escapes only shorten a string
	for bs >= 0 {
		b.Write(data[i : i+bs])
		i += bs
		n, ok := unescape(&b, data[i:end])
		if !ok {
			return "", false
		}
		i += n
		bs = bytes.IndexByte(data[i:end], '\\')
	}
	b.Write(data[i:end])
	return b.String(), true
}

// unescape writes the character of the escape at the start of e and
// returns the escape's length; false for a lone surrogate (rpc's scan
// rejects one, and rewrites it only after a failed scan).
func unescape(b *strings.Builder, e []byte) (int, bool) {
	if len(e) < 2 {
		return 0, false
	}
	switch e[1] {
	case '"', '\\', '/':
		b.WriteByte(e[1])
	case 'b':
		b.WriteByte('\b')
	case 'f':
		b.WriteByte('\f')
	case 'n':
		b.WriteByte('\n')
	case 'r':
		b.WriteByte('\r')
	case 't':
		b.WriteByte('\t')
	case 'u':
		c, ok := hex4(e[2:])
		if !ok {
			return 0, false
		}
		if !utf16.IsSurrogate(c) {
			b.WriteRune(c)
			return 6, true
		}
		if len(e) < 12 || e[6] != '\\' || e[7] != 'u' {
			return 0, false
		}
		lo, ok := hex4(e[8:])
		c = utf16.DecodeRune(c, lo)
		if !ok || c == utf8.RuneError {
			return 0, false
		}
		b.WriteRune(c)
		return 12, true
	default:
		return 0, false
	}
	return 2, true
}

func hex4(h []byte) (rune, bool) {
	if len(h) < 4 {
		return 0, false
	}
	var c rune
	for _, x := range h[:4] {
		switch {
		case '0' <= x && x <= '9':
			x -= '0'
		case 'a' <= x && x <= 'f':
			x -= 'a' - 10
		case 'A' <= x && x <= 'F':
			x -= 'A' - 10
		default:
			return 0, false
		}
		c = c<<4 | rune(x)
	}
	return c, true
}
