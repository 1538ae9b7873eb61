package core

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
)

func TestTaskLabel(t *testing.T) {
	long := strings.Repeat("abcdefghij", 6) // 60 runes
	tests := []struct {
		name        string
		description string
		prompt      string
		agent       string
		want        string
	}{
		{"description folded", "  Find   the\tconfig\nloader ", "ignored", "explorer", "Find the config loader"},
		{"blank description uses prompt", " \t\n", "Read main.go and report", "explorer", "Read main.go and report"},
		{"first non-blank prompt line", "", "\n  \n  first   real line \nsecond line", "explorer", "first real line"},
		{"crlf prompt", "", "\r\n\r\nline one\r\nline two", "explorer", "line one"},
		{"nothing given", "", " \n\t", "explorer", "recent explorer task"},
		{"nothing given, agent with spaces", "", "", " code  reviewer ", "recent code reviewer task"},
		{"cut to 48", long, "", "explorer", long[:48]},
		{"exactly 48 kept", long[:48], "", "explorer", long[:48]},
		{"cut counts runes not bytes", strings.Repeat("é", 50), "", "explorer", strings.Repeat("é", 48)},
		{"cut beyond the BMP counts code points", strings.Repeat("😀", 49), "", "explorer", strings.Repeat("😀", 48)},
		{"cjk", "修复登录页面的错误", "", "fixer", "修复登录页面的错误"},
		{"cut after folding", strings.Repeat("a  ", 30), "", "explorer", strings.TrimSpace(strings.Repeat("a ", 24)) + " "},
		{"long fallback cut", "", "", strings.Repeat("x", 60), "recent " + strings.Repeat("x", 41)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := TaskLabel(tt.description, tt.prompt, tt.agent)
			assert.Equal(t, tt.want, got)
			assert.LessOrEqual(t, utf8.RuneCountInString(got), MaxLabelRunes)
		})
	}
}

func TestAliasPrefix(t *testing.T) {
	overrides := map[string]string{
		"explorer":  "x",
		"reviewer":  "rev",
		"oracle":    "!!!",
		"Librarian": "Big Lib",
	}
	tests := []struct {
		name      string
		agent     string
		overrides map[string]string
		want      string
	}{
		{"explorer", "explorer", nil, "exp"},
		{"librarian", "librarian", nil, "lib"},
		{"oracle", "oracle", nil, "ora"},
		{"designer", "designer", nil, "des"},
		{"fixer", "fixer", nil, "fix"},
		{"observer", "observer", nil, "obs"},
		{"council", "council", nil, "cnc"},
		{"councillor", "councillor", nil, "clr"},
		{"orchestrator", "orchestrator", nil, "orc"},
		{"OpenCode's explore", "explore", nil, "exp"},
		{"OpenCode's general", "general", nil, "gen"},
		{"stock names are case-sensitive too", "General", nil, "general"},
		{"case-sensitive name is its own prefix", "Explorer", nil, "explorer"},
		{"spaces become one dash", "code reviewer", nil, "code-reviewer"},
		{"runs and ends trimmed", "  __Code--Reviewer!! v2 ", nil, "code-reviewer-v2"},
		{"digits kept", "agent007", nil, "agent007"},
		{"nothing left", "!!!", nil, ""},
		{"empty name", "", nil, ""},
		{"non-ascii letters are separators", "Ünïcode", nil, "n-code"},
		{"only non-ascii", "探索者", nil, ""},
		{"override replaces built-in", "explorer", overrides, "x"},
		{"override adds an agent", "reviewer", overrides, "rev"},
		{"override is case-sensitive", "Reviewer", overrides, "reviewer"},
		{"override that sanitises empty opts out", "oracle", overrides, ""},
		{"override value is sanitised", "Librarian", overrides, "big-lib"},
		{"built-in untouched by other overrides", "fixer", overrides, "fix"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, AliasPrefix(tt.agent, tt.overrides))
		})
	}
}

// A label is cut where a user sees a character end: an emoji family (joined
// by zero-width joiners), a flag (two regional indicators), a letter with
// its combining accent stay whole (issue 51).
func TestCutKeepsCharactersWhole(t *testing.T) {
	family := "\U0001F468\u200d\U0001F469\u200d\U0001F467" // 5 code points
	flag := "\U0001F1EF\U0001F1F5"                         // 2 code points
	tests := []struct {
		name, in string
		n        int
		want     string
	}{
		{"ascii", "abcdef", 3, "abc"},
		{"a family is not split", "ab" + family, 4, "ab"},
		{"a whole family fits", "ab" + family + "c", 7, "ab" + family},
		{"a flag is not split", "a" + flag + flag, 4, "a" + flag},
		{"flags in a row: cut between pairs", flag + flag + flag, 5, flag + flag},
		{"an accent stays with its letter", "cafe\u0301s", 4, "caf"},
		{"CJK: whole code points", "漢字漢字", 2, "漢字"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := cutRunes(tt.in, tt.n)
			assert.Equal(t, tt.want, got)
			assert.True(t, utf8.ValidString(got))
		})
	}
}
