package core

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/hookwire/hookwire/internal/textsafe"
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
		{"cut counts columns not bytes", strings.Repeat("é", 50), "", "explorer", strings.Repeat("é", 48)},
		{"an emoji takes 2 columns", strings.Repeat("😀", 49), "", "explorer", strings.Repeat("😀", 24)},
		{"cjk", "修复登录页面的错误", "", "fixer", "修复登录页面的错误"},
		// Issue 51: 100 CJK characters took 100 code points' room, 200 columns.
		{"100 CJK characters: 24 of them, 48 columns", strings.Repeat("漢", 100), "", "fixer", strings.Repeat("漢", 24)},
		{"a wide character past column 48 is left out whole", "a" + strings.Repeat("漢", 30), "", "fixer", "a" + strings.Repeat("漢", 23)},
		{"combining marks take no column and stay on their letter", strings.Repeat("e\u0301", 50), "", "fixer", strings.Repeat("e\u0301", 48)},
		{"an emoji family is never split", strings.Repeat("x", 47) + "👨\u200d👩\u200d👧", "", "fixer", strings.Repeat("x", 47)},
		{"a flag is never split", strings.Repeat("x", 45) + "🇫🇷🇫🇷", "", "fixer", strings.Repeat("x", 45) + "🇫🇷"},
		{"escape sequences and bidi controls are removed", "\x1b]52;c;aGk=\x07Fix \x1b[2Jthe\u202e bug\u200b", "", "fixer", "Fix the bug"},
		{"a prompt line of controls only is blank", "", "\x1b[2J\u202e\n real line", "fixer", "real line"},
		{"cut after folding", strings.Repeat("a  ", 30), "", "explorer", strings.TrimSpace(strings.Repeat("a ", 24)) + " "},
		{"long fallback cut", "", "", strings.Repeat("x", 60), "recent " + strings.Repeat("x", 41)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := TaskLabel(tt.description, tt.prompt, tt.agent)
			assert.Equal(t, tt.want, got)
			assert.LessOrEqual(t, textsafe.Width(got), MaxLabelColumns)
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
