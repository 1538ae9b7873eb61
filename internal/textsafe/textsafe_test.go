package textsafe

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
)

const (
	family = "👨\u200d👩\u200d👧\u200d👦" // one cluster, 2 columns
	flag   = "🇫🇷"                     // two regional indicators, 2 columns
	// england is a subdivision flag: U+1F3F4 and tag characters.
	england = "\U0001F3F4\U000E0067\U000E0062\U000E0065\U000E006E\U000E0067\U000E007F"
	eAcute  = "e\u0301" // e and a combining acute: 1 column
)

func TestLine(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"plain text is kept", "Find the config loader", "Find the config loader"},
		{"OSC 52 (set the clipboard) ended by BEL goes whole", "a\x1b]52;c;ZWNobyBoaQ==\x07b", "ab"},
		{"OSC ended by ST goes whole", "a\x1b]0;title\x1b\\b", "ab"},
		{"an OSC never ended takes the rest", "a\x1b]52;c;ZWNobyBoaQ==", "a"},
		{"ESC [ 2J (clear the screen)", "a\x1b[2Jb", "ab"},
		{"SGR colour", "\x1b[1;31mred\x1b[0m", "red"},
		{"CSI with private parameters", "a\x1b[?1049hb", "ab"},
		{"ESC c (reset) and ESC ( B", "a\x1bcb\x1b(Bc", "abc"},
		{"a lone ESC at the end", "a\x1b", "a"},
		{"C1 CSI", "a\u009b2Jb", "ab"},
		{"C1 OSC ended by C1 ST", "a\u009d52;c;eA==\u009cb", "ab"},
		{"other C0 and DEL removed", "a\x00\x07\x08\x7fb", "ab"},
		{"line breaks and tabs are spaces", "a\tb\nc\r\nd\u2028e\u0085f", "a b c  d e f"},
		{"RLO (U+202E) removed", "abc\u202etxt.exe", "abctxt.exe"},
		{"every bidi embedding, override, isolate and mark", "\u202a1\u202b2\u202c3\u202d4\u202e5\u20666\u20677\u20688\u20699\u200eA\u200fB\u061cC", "123456789ABC"},
		{"zero-width characters removed", "a\u200bb\u200cc\u2060d\ufeffe\u00adf", "abcdef"},
		{"a joiner that joins nothing is removed", "a\u200db", "ab"},
		{"a joiner inside an emoji family stays", "x" + family + "y", "x" + family + "y"},
		{"a flag stays", flag, flag},
		{"a subdivision flag keeps its tags", england, england},
		{"tags outside a flag are removed", "a\U000E0067\U000E0062b", "ab"},
		{"combining marks stay", eAcute, eAcute},
		{"CJK stays", "修复登录页面的错误", "修复登录页面的错误"},
		{"bytes that are not UTF-8 become U+FFFD", "a\xffb\xc2", "a\ufffdb\ufffd"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Line(tt.in)
			assert.Equal(t, tt.want, got)
			assert.Equal(t, got, Line(got), "Line of its own answer changes nothing")
		})
	}
}

func TestCut(t *testing.T) {
	cjk := strings.Repeat("漢", 100)
	tests := []struct {
		name string
		in   string
		cols int
		want string
	}{
		{"fits", "abc", 5, "abc"},
		{"ASCII cut", "abcdef", 4, "abcd"},
		{"100 CJK characters: 2 columns each", cjk, 48, strings.Repeat("漢", 24)},
		{"a wide character never half shown", "a" + cjk, 4, "a漢"},
		{"an emoji family is one cluster of 2 columns", "ab" + family + "cd", 4, "ab" + family},
		{"an emoji family does not fit in 1 column", "a" + family, 2, "a"},
		{"a flag's pair is never split", "a" + flag + flag, 4, "a" + flag},
		{"a letter keeps its combining marks", strings.Repeat(eAcute, 5), 3, strings.Repeat(eAcute, 3)},
		{"a mark on a wide character: 2 columns", "漢\u0301漢\u0301", 3, "漢\u0301"},
		{"zero columns", "abc", 0, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Cut(tt.in, tt.cols)
			assert.Equal(t, tt.want, got)
			assert.LessOrEqual(t, Width(got), tt.cols)
			assert.True(t, utf8.ValidString(got))
		})
	}
}

func TestWidth(t *testing.T) {
	for in, want := range map[string]int{
		"abc":                      3,
		strings.Repeat("漢", 100):   200,
		"ＡＢ":                       4, // fullwidth
		family:                     2,
		flag:                       2,
		eAcute:                     1,
		"e\u0301\u0302\u0303":      1,
		"":                         0,
		Line("\x1b[2J\u202eabc\a"): 3,
	} {
		assert.Equal(t, want, Width(in), "%q", in)
	}
}

func TestFit(t *testing.T) {
	tests := []struct {
		name string
		in   string
		cols int
		want string
	}{
		{"fits: as it is", "abc", 3, "abc"},
		{"cut with an ellipsis in the last column", "abcdef", 4, "abc…"},
		{"a wide character that would pass the width is left out", "漢漢漢", 4, "漢…"},
		{"an emoji family whole or not at all", family + family, 3, family + "…"},
		{"one column: the ellipsis alone", "abc", 1, "…"},
		{"no columns", "abc", 0, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Fit(tt.in, tt.cols)
			assert.Equal(t, tt.want, got)
			assert.LessOrEqual(t, Width(got), tt.cols)
		})
	}
}
