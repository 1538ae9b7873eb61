package main

import (
	"bytes"
	"io"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/go-json-experiment/json/jsontext"
)

// The log is JSON lines on stderr (or --log-file), read by people as often
// as by programs. Two things a client sends must not make it mislead or
// swamp them (issue 49 item 5): a name with a look-alike letter
// (maxPаrents, a Cyrillic а) shows escaped, and a huge value (a config
// listing a million managed agents) does not make a line of megabytes.

// maxLogLine bounds one log line, its newline included.
const maxLogLine = 64 << 10

// maxLogValue is the largest member value a line that is too long keeps
// whole; a larger one keeps its first logValueHead bytes.
const (
	maxLogValue  = 4 << 10
	logValueHead = 1 << 10
)

// logLines is the log's writer: zerolog writes each event as one JSON
// line with one Write, and logLines writes it with every character beyond
// ASCII as a JSON \u escape (the same JSON to a program; to a person, a
// name that cannot pass for another) and cut to maxLogLine. It keeps no
// state, so zerolog may call it from any goroutine, as it calls the
// writer it wraps.
type logLines struct{ w io.Writer }

func (l logLines) Write(p []byte) (int, error) {
	line := asciiJSON(p)
	if len(line) > maxLogLine {
		line = cutLogLine(line, len(p))
	}
	if _, err := l.w.Write(line); err != nil {
		return 0, err
	}
	return len(p), nil
}

// asciiJSON is the JSON text p with every rune beyond ASCII written as a
// \u escape (a surrogate pair past U+FFFF; U+FFFD for a byte that is not
// UTF-8). Outside strings JSON has no such rune, so p stays the same JSON.
func asciiJSON(p []byte) []byte {
	i := 0
	for i < len(p) && p[i] < utf8.RuneSelf {
		i++
	}
	if i == len(p) {
		return p
	}
	out := make([]byte, 0, len(p)+len(p)/2)
	out = append(out, p[:i]...)
	for i < len(p) {
		if c := p[i]; c < utf8.RuneSelf {
			out = append(out, c)
			i++
			continue
		}
		r, n := utf8.DecodeRune(p[i:])
		i += n
		if r > 0xFFFF {
			r1, r2 := utf16.EncodeRune(r)
			out = appendEscape(appendEscape(out, r1), r2)
			continue
		}
		out = appendEscape(out, r)
	}
	return out
}

func appendEscape(out []byte, r rune) []byte {
	const hex = "0123456789abcdef"
	return append(out, '\\', 'u', hex[r>>12&0xf], hex[r>>8&0xf], hex[r>>4&0xf], hex[r&0xf])
}

// cutLogLine makes the JSON line p, longer than maxLogLine, fit: each
// member's value longer than maxLogValue becomes a string holding its
// first logValueHead bytes and its size, and logCutBytes says size, the
// line's as it was written; the level, time and message stay as they were. A
// line that is not a JSON object, or still too long, becomes a line of
// its own saying so, with its beginning.
func cutLogLine(p []byte, size int) []byte {
	if out, ok := cutLogMembers(p, size); ok && len(out) <= maxLogLine {
		return out
	}
	out := []byte(`{"level":"warn","message":"log line cut","logCutBytes":`)
	out = strconv.AppendInt(out, int64(size), 10)
	out = append(out, `,"head":`...)
	out, _ = jsontext.AppendQuote(out, p[:logValueHead])
	return append(out, "}\n"...)
}

// cutLogMembers is cutLogLine's cut of each large value; false when p is
// not one JSON object.
func cutLogMembers(p []byte, size int) ([]byte, bool) {
	dec := jsontext.NewDecoder(bytes.NewReader(p), jsontext.AllowDuplicateNames(true))
	if tok, err := dec.ReadToken(); err != nil || tok.Kind() != '{' {
		return nil, false
	}
	out := []byte{'{'}
	for dec.PeekKind() != '}' {
		tok, err := dec.ReadToken()
		if err != nil {
			return nil, false
		}
		if len(out) > 1 {
			out = append(out, ',')
		}
		out, _ = jsontext.AppendQuote(out, tok.String())
		out = append(out, ':')
		value, err := dec.ReadValue()
		if err != nil {
			return nil, false
		}
		if len(value) <= maxLogValue {
			out = append(out, value...)
			continue
		}
		head := string(value[:logValueHead]) + "... (cut: " + strconv.Itoa(len(value)) + " bytes)"
		out, _ = jsontext.AppendQuote(out, head)
	}
	out = append(out, `,"logCutBytes":`...)
	out = strconv.AppendInt(out, int64(size), 10)
	return append(out, "}\n"...), true
}
