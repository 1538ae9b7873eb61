package rpc

import (
	"encoding/binary"
	"math/bits"
	"unicode/utf8"
)

// The fast scan: one pass over a message that is a JSON object, checking
// what the decoder's scan checks (syntax, strict UTF-8, escapes and their
// surrogate pairs) and noting where its top-level members are. It accepts
// only what jsontext accepts, and answers nothing itself: a message it
// does not accept (invalid, not an object, nested deeper than
// fastMaxDepth, a top-level member name with an escape, more than
// fastMaxMembers top-level members) goes to the decoder's own scan, which
// says what is wrong with it. FuzzFastScan holds the two to the same
// result.
//
// It exists for speed: a conversation history is mostly long strings with
// an escape every few dozen bytes (code, logs), which jsontext scans a byte
// at a time; here eight bytes at a time between the bytes a string's scan
// has to look at (a quote, a backslash, a control character, a byte of a
// multi-byte character).

const (
	// fastMaxDepth bounds the nesting the fast scan follows (jsontext's
	// limit is 10000; deeper messages are not worth a fast path).
	fastMaxDepth = 512
	// fastMaxMembers bounds the top-level members noted.
	fastMaxMembers = 16
)

// topMember is one top-level member of a scanned object: its name's
// contents (no escapes) and its value's bytes, both aliasing the message.
type topMember struct {
	name  []byte
	value []byte
	off   int // where value starts in the message
}

// scanObject reports whether data is one JSON object that the fast scan
// accepts, and returns its top-level members (appended to members[:0]).
func scanObject(data []byte, members []topMember) ([]topMember, bool) {
	members = members[:0]
	var (
		stack [fastMaxDepth / 64]uint64 // bit set: an object at that depth
		depth int
		start int // where the current top-level member's value starts
	)
	n := len(data)
	i := skipSpace(data, 0)
	if i >= n || data[i] != '{' {
		return members, false
	}

value: // a value starts at i (blanks skipped)
	if i >= n {
		return members, false
	}
	switch c := data[i]; {
	case c == '"':
		if i, _ = scanString(data, i); i < 0 {
			return members, false
		}
	case c == '{', c == '[':
		if depth == fastMaxDepth {
			return members, false
		}
		if c == '{' {
			stack[depth>>6] |= 1 << (depth & 63)
		} else {
			stack[depth>>6] &^= 1 << (depth & 63)
		}
		depth++
		i = skipSpace(data, i+1)
		if i < n && (data[i] == '}' && c == '{' || data[i] == ']' && c == '[') {
			i++
			depth--
			break // an empty object or array: after a value
		}
		if c == '[' {
			goto value
		}
		goto name
	case c == '-' || c >= '0' && c <= '9':
		if i = scanNumber(data, i); i < 0 {
			return members, false
		}
	case c == 't':
		if !hasLiteral(data, i, "true") {
			return members, false
		}
		i += 4
	case c == 'f':
		if !hasLiteral(data, i, "false") {
			return members, false
		}
		i += 5
	case c == 'n':
		if !hasLiteral(data, i, "null") {
			return members, false
		}
		i += 4
	default:
		return members, false
	}

	// after a value, at i
	for {
		if depth == 1 {
			members[len(members)-1].value = data[start:i:i]
		}
		if depth == 0 {
			return members, skipSpace(data, i) == n
		}
		i = skipSpace(data, i)
		if i >= n {
			return members, false
		}
		object := stack[(depth-1)>>6]&(1<<((depth-1)&63)) != 0
		switch c := data[i]; {
		case c == ',':
			i = skipSpace(data, i+1)
			if object {
				goto name
			}
			goto value
		case c == '}' && object, c == ']' && !object:
			i++
			depth--
			continue
		}
		return members, false
	}

name: // a member name starts at i (blanks skipped)
	{
		if i >= n || data[i] != '"' {
			return members, false
		}
		end, escaped := scanString(data, i)
		if end < 0 {
			return members, false
		}
		if depth == 1 {
			if escaped || len(members) == fastMaxMembers {
				return members, false
			}
			members = append(members, topMember{name: data[i+1 : end-1]})
		}
		i = skipSpace(data, end)
		if i >= n || data[i] != ':' {
			return members, false
		}
		i = skipSpace(data, i+1)
		if depth == 1 {
			start = i
			members[len(members)-1].off = i
		}
		goto value
	}
}

const (
	ones  = 0x0101010101010101
	highs = 0x8080808080808080
)

// stopBytes has the high bit set in each byte of x that a string's scan
// must look at: '"', '\\', a control character, or a byte >= 0x80. Bits
// above the lowest may be wrong (borrows), the lowest is exact.
func stopBytes(x uint64) uint64 {
	q := x ^ (ones * '"')
	s := x ^ (ones * '\\')
	return ((q-ones)&^q | (s-ones)&^s | (x-ones*0x20)&^x | x) & highs
}

// scanString returns the index after the JSON string that opens at
// data[i], and whether it has an escape; -1 when it is not a valid string
// (unterminated, a control character, invalid UTF-8, a bad escape, an
// escaped surrogate not in a high-low pair).
func scanString(data []byte, i int) (int, bool) {
	escaped := false
	i++
	for {
		for i+8 <= len(data) {
			if m := stopBytes(binary.LittleEndian.Uint64(data[i:])); m != 0 {
				i += bits.TrailingZeros64(m) >> 3
				break
			}
			i += 8
		}
		if i >= len(data) {
			return -1, escaped
		}
		switch c := data[i]; {
		case c == '"':
			return i + 1, escaped
		case c == '\\':
			escaped = true
			if i+1 < len(data) && simpleEscape[data[i+1]] {
				i += 2
				continue
			}
			if i = scanEscape(data, i); i < 0 {
				return -1, escaped
			}
		case c < 0x20:
			return -1, escaped
		case c >= utf8.RuneSelf:
			r, size := utf8.DecodeRune(data[i:])
			if r == utf8.RuneError && size == 1 {
				return -1, escaped
			}
			i += size
		default:
			i++
		}
	}
}

// simpleEscape holds the bytes that follow a backslash in a two-byte escape.
var simpleEscape = [256]bool{'"': true, '\\': true, '/': true, 'b': true, 'f': true, 'n': true, 'r': true, 't': true}

// scanEscape returns the index after the escape at data[i] ('\\'), or -1
// when it is not one jsontext reads (with \u surrogates in pairs).
func scanEscape(data []byte, i int) int {
	if i+1 >= len(data) {
		return -1
	}
	switch data[i+1] {
	case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
		return i + 2
	case 'u':
	default:
		return -1
	}
	v, ok := hex4(data, i+2)
	if !ok {
		return -1
	}
	i += 6
	if v < 0xD800 || v > 0xDFFF {
		return i
	}
	if v >= 0xDC00 || i+6 > len(data) || data[i] != '\\' || data[i+1] != 'u' {
		return -1
	}
	if low, ok := hex4(data, i+2); !ok || low < 0xDC00 || low > 0xDFFF {
		return -1
	}
	return i + 6
}

// hex4 parses the four hex digits at data[i:].
func hex4(data []byte, i int) (rune, bool) {
	if i+4 > len(data) {
		return 0, false
	}
	var r rune
	for _, c := range data[i : i+4] {
		switch {
		case '0' <= c && c <= '9':
			r = r<<4 | rune(c-'0')
		case 'a' <= c && c <= 'f':
			r = r<<4 | rune(c-'a'+10)
		case 'A' <= c && c <= 'F':
			r = r<<4 | rune(c-'A'+10)
		default:
			return 0, false
		}
	}
	return r, true
}

// scanNumber returns the index after the JSON number at data[i], or -1.
func scanNumber(data []byte, i int) int {
	n := len(data)
	if data[i] == '-' {
		i++
	}
	switch {
	case i < n && data[i] == '0':
		i++
	case i < n && data[i] >= '1' && data[i] <= '9':
		i = digits(data, i+1)
	default:
		return -1
	}
	if i < n && data[i] == '.' {
		j := digits(data, i+1)
		if j == i+1 {
			return -1
		}
		i = j
	}
	if i < n && (data[i] == 'e' || data[i] == 'E') {
		i++
		if i < n && (data[i] == '+' || data[i] == '-') {
			i++
		}
		j := digits(data, i)
		if j == i {
			return -1
		}
		i = j
	}
	return i
}

func digits(data []byte, i int) int {
	for i < len(data) && data[i] >= '0' && data[i] <= '9' {
		i++
	}
	return i
}

func hasLiteral(data []byte, i int, lit string) bool {
	return len(data)-i >= len(lit) && string(data[i:i+len(lit)]) == lit
}
