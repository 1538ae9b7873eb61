// Package textsafe makes text hookwire did not write (task labels, agent
// names, provider errors, what a config or a binary says) safe to print
// for a person on a terminal, and cuts it to a width in columns.
//
// Safe: nothing a terminal acts on (C0 and C1 controls, whole ESC and C1
// sequences: ESC ] 52 … BEL would set the clipboard, ESC [ 2J clears the
// screen), nothing that reorders or hides text (bidi overrides and
// isolates, marks, zero-width characters), and one line (a line break or
// tab is a space). A zero-width joiner inside an emoji sequence and the
// tags of a subdivision flag are kept: they are part of what is drawn.
//
// Cut: by display width, as a terminal draws it (East Asian Wide and
// Fullwidth characters and emoji take 2 columns, combining marks 0), never
// inside a grapheme cluster (an emoji family, a flag's two regional
// indicators, a letter and its combining marks stay whole). Clusters and
// widths are github.com/rivo/uniseg's, from the Unicode tables.
//
// textsafe does no IO and keeps no state.
package textsafe

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/rivo/uniseg"
)

const (
	esc = 0x1b
	bel = 0x07
	zwj = '\u200d'
	// blackFlag begins a subdivision flag (England's): U+1F3F4 and tag
	// characters up to a cancel tag.
	blackFlag = '\U0001F3F4'
)

// Line returns s safe to print on one line: escape sequences and control
// characters removed (a line break, a tab and the like are a space),
// bidi controls and zero-width characters removed; a byte that is not
// UTF-8 is U+FFFD. Text that is already safe is returned as it is.
func Line(s string) string {
	if isPlain(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			b.WriteRune(utf8.RuneError)
		case isSpaceControl(r):
			b.WriteByte(' ')
		case r == esc:
			n = escapeLen(s[i:])
		case r >= 0x80 && r <= 0x9f:
			n = c1Len(s[i:], r, n)
		case r < 0x20 || r == 0x7f:
			// other C0 controls and DEL: BEL, a backspace that would
			// overwrite what was drawn, NUL: removed.
		case unicode.Is(unicode.Cf, r) && r != zwj && !isTag(r):
			// bidi controls and marks, zero-width spaces, joiners and
			// no-breaks, the soft hyphen, the BOM: removed.
		default:
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return keepJoiners(b.String())
}

// isPlain says s is printable ASCII, Line's answer as it is.
func isPlain(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f {
			return false
		}
	}
	return true
}

// isSpaceControl: the controls that move to a new line or column, and
// the Unicode line and paragraph separators. Each becomes a space.
func isSpaceControl(r rune) bool {
	switch r {
	case '\t', '\n', '\v', '\f', '\r', 0x85, '\u2028', '\u2029':
		return true
	}
	return false
}

func isTag(r rune) bool { return r >= 0xe0020 && r <= 0xe007f }

// escapeLen is the length of the escape sequence at the start of s (which
// begins with ESC), after ECMA-48: a CSI (ESC [ … final byte), a control
// string (OSC, DCS, SOS, PM, APC: up to BEL or ST, or to the end when not
// ended), or ESC and its intermediate and final bytes. A lone ESC is 1.
func escapeLen(s string) int {
	if len(s) < 2 {
		return 1
	}
	switch c := s[1]; {
	case c == '[':
		return 2 + csiLen(s[2:])
	case c == ']' || c == 'P' || c == 'X' || c == '^' || c == '_':
		return 2 + stringLen(s[2:])
	case c >= 0x20 && c <= 0x2f: // nF: intermediates, then a final byte
		j := 2
		for j < len(s) && s[j] >= 0x20 && s[j] <= 0x2f {
			j++
		}
		if j < len(s) && s[j] >= 0x30 && s[j] <= 0x7e {
			j++
		}
		return j
	case c >= 0x30 && c <= 0x7e: // Fp, Fe, Fs: one byte (ESC c resets)
		return 2
	}
	return 1
}

// csiLen is the length of a control sequence's parameter, intermediate
// and final bytes at the start of s; where a byte outside them comes
// first, the sequence ends before it.
func csiLen(s string) int {
	j := 0
	for j < len(s) && s[j] >= 0x30 && s[j] <= 0x3f {
		j++
	}
	for j < len(s) && s[j] >= 0x20 && s[j] <= 0x2f {
		j++
	}
	if j < len(s) && s[j] >= 0x40 && s[j] <= 0x7e {
		j++
	}
	return j
}

// stringLen is the length of a control string's content and terminator
// at the start of s: up to and with BEL, ESC \ or U+009C (ST); all of s
// when none comes (a terminal would swallow the rest as well).
func stringLen(s string) int {
	for j := 0; j < len(s); j++ {
		switch {
		case s[j] == bel:
			return j + 1
		case s[j] == esc && j+1 < len(s) && s[j+1] == '\\':
			return j + 2
		case s[j] == 0xc2 && j+1 < len(s) && s[j+1] == 0x9c:
			return j + 2
		}
	}
	return len(s)
}

// c1Len is the length of what a C1 control r (n bytes) at the start of s
// introduces: CSI and the control strings as their ESC forms, any other
// C1 control alone.
func c1Len(s string, r rune, n int) int {
	switch r {
	case 0x9b: // CSI
		return n + csiLen(s[n:])
	case 0x9d, 0x90, 0x98, 0x9e, 0x9f: // OSC, DCS, SOS, PM, APC
		return n + stringLen(s[n:])
	}
	return n
}

// keepJoiners removes from s each zero-width joiner that joins nothing
// (not inside an emoji sequence: followed in its grapheme cluster by a
// character that is drawn) and each tag character outside a subdivision
// flag. Line has removed every other zero-width character.
func keepJoiners(s string) string {
	if !strings.ContainsRune(s, zwj) && !hasTag(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	state := -1
	for rest := s; rest != ""; {
		var cluster string
		cluster, rest, _, state = uniseg.FirstGraphemeClusterInString(rest, state)
		first, _ := utf8.DecodeRuneInString(cluster)
		for i, r := range cluster {
			switch {
			case r == zwj:
				next, _ := utf8.DecodeRuneInString(cluster[i+len(string(zwj)):])
				if i == 0 || i+len(string(zwj)) == len(cluster) || next == zwj || unicode.In(next, unicode.Mn, unicode.Me) {
					continue
				}
			case isTag(r) && first != blackFlag:
				continue
			}
			b.WriteRune(r)
		}
	}
	return b.String()
}

func hasTag(s string) bool {
	return strings.ContainsFunc(s, isTag)
}

// Width is the number of columns s takes on a terminal (s as Line
// returns it: controls have no width to count).
func Width(s string) int { return uniseg.StringWidth(s) }

// Cut returns the longest beginning of s, in whole grapheme clusters,
// that takes at most cols columns.
func Cut(s string, cols int) string {
	end, used := 0, 0
	state := -1
	for rest := s; rest != ""; {
		var cluster string
		var w int
		cluster, rest, w, state = uniseg.FirstGraphemeClusterInString(rest, state)
		if used+w > cols {
			break
		}
		used += w
		end += len(cluster)
	}
	return s[:end]
}

// Ellipsis ends a text Fit cut.
const Ellipsis = "…"

// Fit returns s when it takes at most cols columns, else its beginning cut
// to cols-1 columns and Ellipsis: a person sees that there was more.
func Fit(s string, cols int) string {
	if Width(s) <= cols {
		return s
	}
	if cols < 1 {
		return ""
	}
	return Cut(s, cols-1) + Ellipsis
}
