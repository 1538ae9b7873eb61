package transcript

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/hookwire/hookwire/internal/jsonkind"
)

// A Step is one value of a transcript: exactly one of its members is set.
//
//	{"send": <message>}                a message the client sends (line framing)
//	{"sendRaw": "<text>"}              raw bytes the client sends, for bad input;
//	{"sendRaw": ["<text>", ...]}       or parts that are sent joined
//	{"recv": <message>}                the reply the sidecar must send next
//	{"note": "<text>"}                 a comment
//	{"state": <state file>}            the store the sidecar starts from (a recording's
//	                                   header): replay runs it with --state holding this
//
// In a "recv" message the string Any matches any value, for members such
// as uptime that differ on every run.
type Step struct {
	Send    json.RawMessage `json:"send,omitempty"`
	SendRaw json.RawMessage `json:"sendRaw,omitempty"`
	Recv    json.RawMessage `json:"recv,omitempty"`
	Note    string          `json:"note,omitempty"`
	State   json.RawMessage `json:"state,omitempty"`

	// Line is where the step starts in its file, for messages; 0 when
	// unknown. It is not part of the step's JSON.
	Line int `json:"-"`
}

// Any in a recv message matches any value.
const Any = "<any>"

// Width is the column up to which the writer keeps a value on one line.
// Strings are never split, so a long one runs past it.
const Width = 100

// RawText returns the bytes a sendRaw step sends.
func (st Step) RawText() (string, error) {
	var s string
	if err := json.Unmarshal(st.SendRaw, &s); err == nil {
		return s, nil
	}
	var parts []string
	if err := json.Unmarshal(st.SendRaw, &parts); err != nil {
		return "", errors.New("sendRaw must be a string or an array of strings")
	}
	return strings.Join(parts, ""), nil
}

// Validate checks that the step has exactly one member, and that a
// sendRaw holds text.
func (st Step) Validate() error {
	n := 0
	for _, set := range []bool{st.Send != nil, st.SendRaw != nil, st.Recv != nil, st.Note != "", st.State != nil} {
		if set {
			n++
		}
	}
	if n != 1 {
		return errors.New("a step has exactly one of send, sendRaw, recv, note, state")
	}
	if st.SendRaw != nil {
		if _, err := st.RawText(); err != nil {
			return err
		}
	}
	return nil
}

// ReadFile reads the steps of the transcript at path. An error names the
// file and the line it concerns ("FILE:12: ...").
func ReadFile(path string) ([]Step, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	steps, err := Parse(data)
	if err != nil {
		return nil, fmt.Errorf("%s:%w", path, err)
	}
	return steps, nil
}

// Parse reads a transcript's bytes, in time linear in their length. The
// values may be separated by any whitespace, so one compact step per line
// (the earlier format, and what a quick script writes) reads as well. An
// error starts with the line it concerns ("12: ...").
func Parse(data []byte) ([]Step, error) {
	// A bytes.Buffer lets jsontext scan data in place: each value is
	// copied once, into its step.
	dec := jsontext.NewDecoder(bytes.NewBuffer(data))
	var stepDec jsontext.Decoder
	lines := lineCounter{data: data}
	var steps []Step
	for {
		val, err := dec.ReadValue()
		if err == io.EOF {
			return steps, nil
		}
		if err != nil {
			// Name the line where the broken value starts.
			start := int(dec.InputOffset())
			for start < len(data) && strings.ContainsRune(" \t\r\n", rune(data[start])) {
				start++
			}
			return nil, fmt.Errorf("%d: step %d is not a JSON value: %w", lines.at(start), len(steps)+1, err)
		}
		line := lines.at(int(dec.InputOffset()) - len(val))
		stepDec.Reset(bytes.NewBuffer(val))
		st, err := decodeStep(&stepDec)
		if err == nil {
			err = st.Validate()
		}
		if err != nil {
			return nil, fmt.Errorf("%d: step %d: %w", line, len(steps)+1, err)
		}
		st.Line = line
		steps = append(steps, st)
	}
}

// decodeStep reads one step, a valid JSON object, from dec: its members
// are copied out of the decoder's buffer.
func decodeStep(dec *jsontext.Decoder) (Step, error) {
	var st Step
	if kind := dec.PeekKind(); kind != '{' {
		return st, fmt.Errorf("a step is a JSON object, not %s", jsonkind.Name(kind))
	}
	if _, err := dec.ReadToken(); err != nil {
		return st, err
	}
	for dec.PeekKind() != '}' {
		tok, err := dec.ReadToken()
		if err != nil {
			return st, err
		}
		name := tok.String() // before the next read voids tok
		val, err := dec.ReadValue()
		if err != nil {
			return st, err
		}
		switch name {
		case "send":
			st.Send = json.RawMessage(val.Clone())
		case "sendRaw":
			st.SendRaw = json.RawMessage(val.Clone())
		case "recv":
			st.Recv = json.RawMessage(val.Clone())
		case "state":
			st.State = json.RawMessage(val.Clone())
		case "note":
			if val.Kind() != '"' {
				return st, fmt.Errorf("note must be a string, not %s", jsonkind.Name(val.Kind()))
			}
			text, err := jsontext.AppendUnquote(nil, val)
			if err != nil {
				return st, err
			}
			st.Note = string(text)
		default:
			return st, fmt.Errorf("unknown member %q (a step has one of send, sendRaw, recv, note, state)", name)
		}
	}
	return st, nil
}

// lineCounter turns offsets into line numbers, counting each byte once
// when the offsets it is asked for grow (as a reader's do).
type lineCounter struct {
	data []byte
	off  int // newlines before off are counted in line
	line int // the line of data[off], less one
}

func (c *lineCounter) at(offset int) int {
	offset = min(max(offset, 0), len(c.data))
	if offset < c.off {
		c.off, c.line = 0, 0
	}
	c.line += bytes.Count(c.data[c.off:offset], []byte("\n"))
	c.off = offset
	return c.line + 1
}

// WriteFile replaces the file at path with steps, through a temporary
// file so a failed write leaves the old transcript whole.
func WriteFile(path string, steps []Step) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), ".transcript-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	tw := NewWriter(tmp)
	for _, st := range steps {
		if err := tw.Write(st); err != nil {
			tmp.Close()
			return err
		}
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Chmod(tmp.Name(), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// A Writer writes steps one at a time, so a recorder can append each
// frame as it passes; the output reads whole after every step. A value is
// indented only where it does not fit before Width, and steps are
// separated by a blank line, so a changed reply shows in a diff as the
// lines that changed. Not safe for concurrent use.
type Writer struct {
	w       io.Writer
	started bool // a step is already in the output: the next one is preceded by a blank line
}

// NewWriter returns a Writer that starts a transcript in w.
func NewWriter(w io.Writer) *Writer { return &Writer{w: w} }

// Write writes st, which must be valid (Validate). A failed write may
// leave part of the step in the output.
func (tw *Writer) Write(st Step) error {
	if err := st.Validate(); err != nil {
		return err
	}
	if st.SendRaw != nil {
		// Raw text longer than two lines' worth is written as parts, one a
		// line; shorter text stays one string, as it reads best.
		text, _ := st.RawText()
		const margin = len(`    "",`)
		var err error
		if st.SendRaw, err = json.Marshal(text); err != nil {
			return err
		}
		if len(st.SendRaw) > 2*Width {
			if st.SendRaw, err = json.Marshal(splitText(text, Width-margin)); err != nil {
				return err
			}
		}
	}
	raw, err := st.marshal()
	if err != nil {
		return err
	}
	var out []byte
	if tw.started {
		out = append(out, '\n')
	}
	out, err = appendPretty(out, raw, 0, "")
	if err != nil {
		return err
	}
	out = append(out, '\n')
	if _, err := tw.w.Write(out); err != nil {
		return err
	}
	tw.started = true
	return nil
}

// marshal returns the step as one JSON object of its one member. The
// member's value is checked by appendPretty, which formats it.
func (st Step) marshal() ([]byte, error) {
	var name string
	var val []byte
	switch {
	case st.Send != nil:
		name, val = "send", st.Send
	case st.SendRaw != nil:
		name, val = "sendRaw", st.SendRaw
	case st.Recv != nil:
		name, val = "recv", st.Recv
	case st.State != nil:
		name, val = "state", st.State
	default:
		var err error
		if val, err = jsontext.AppendQuote(nil, st.Note); err != nil {
			return nil, err
		}
		name = "note"
	}
	out := make([]byte, 0, len(name)+len(val)+5)
	out = append(append(append(out, `{"`...), name...), `":`...)
	return append(append(out, val...), '}'), nil
}

// prettyOptions write a value flat, the way appendPretty keeps it on a
// line. Repeated names are the sender's: they are written as read.
var prettyOptions = []jsontext.Options{jsontext.SpaceAfterColon(true), jsontext.SpaceAfterComma(true),
	jsontext.EscapeForHTML(false), jsontext.AllowDuplicateNames(true)}

// appendPretty appends the JSON value raw, starting at column col of a line
// indented by indent. A value that fits before Width stays on one line; a
// longer object or array gets one member per line, each formatted the
// same way. Strings are written as they read, without HTML escaping.
func appendPretty(dst, raw []byte, col int, indent string) ([]byte, error) {
	flat, err := jsontext.AppendFormat(nil, raw, prettyOptions...)
	if err != nil {
		return nil, err
	}
	return appendFlat(dst, flat, col, indent)
}

// appendFlat is appendPretty for a value already written flat.
func appendFlat(dst, flat []byte, col int, indent string) ([]byte, error) {
	kind := jsontext.Value(flat).Kind()
	if (kind != '{' && kind != '[') || col+utf8.RuneCount(flat) <= Width {
		return append(dst, flat...), nil
	}
	dec := jsontext.NewDecoder(bytes.NewReader(flat), jsontext.AllowDuplicateNames(true))
	if _, err := dec.ReadToken(); err != nil {
		return nil, err
	}
	inner := indent + "  "
	dst = append(dst, byte(kind))
	for i := 0; dec.PeekKind() != '}' && dec.PeekKind() != ']'; i++ {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, '\n')
		dst = append(dst, inner...)
		lineStart := len(dst) - len(inner)
		if kind == '{' {
			name, err := dec.ReadToken()
			if err != nil {
				return nil, err
			}
			if dst, err = jsontext.AppendQuote(dst, name.String()); err != nil {
				return nil, err
			}
			dst = append(dst, ": "...)
		}
		val, err := dec.ReadValue()
		if err != nil {
			return nil, err
		}
		val = val.Clone() // PeekKind may reuse the decoder's buffer
		col := utf8.RuneCount(dst[lineStart:])
		if k := dec.PeekKind(); k != '}' && k != ']' {
			col++ // room for the comma after it
		}
		if dst, err = appendFlat(dst, val, col, inner); err != nil {
			return nil, err
		}
	}
	dst = append(dst, '\n')
	dst = append(dst, indent...)
	if kind == '{' {
		return append(dst, '}'), nil
	}
	return append(dst, ']'), nil
}

// splitText cuts s after each newline and where its quoted form reaches
// width columns, never inside a rune, so a long raw text is written as
// parts that each fit on a line.
func splitText(s string, width int) []string {
	var parts []string
	for s != "" {
		n, cols := 0, 0
		for n < len(s) {
			r, size := utf8.DecodeRuneInString(s[n:])
			q, _ := jsontext.AppendQuote(nil, string(r))
			if n > 0 && r != '\n' && cols+len(q)-2 > width {
				break
			}
			n += size
			cols += len(q) - 2
			if r == '\n' {
				break
			}
		}
		parts = append(parts, s[:n])
		s = s[n:]
	}
	return parts
}
