package core

import (
	"strings"

	"github.com/hookwire/hookwire/internal/textsafe"
)

// MaxLabelColumns is how wide a task label may be, in terminal columns (a
// CJK character takes 2, a combining mark 0).
const MaxLabelColumns = 48

// TaskLabel derives an entry's label from a task call's arguments: the
// description made safe to show (textsafe.Line: no escape sequences,
// controls, bidi or zero-width characters) with whitespace runs folded to
// one space, else the first non-blank line of the prompt made the same,
// else `recent <agent> task`; cut to MaxLabelColumns columns in whole
// grapheme clusters (an emoji family or a flag is never split).
func TaskLabel(description, prompt, agent string) string {
	label := labelText(description)
	if label == "" {
		for line := range strings.Lines(prompt) {
			if label = labelText(line); label != "" {
				break
			}
		}
	}
	if label == "" {
		label = "recent " + labelText(agent) + " task"
	}
	return textsafe.Cut(label, MaxLabelColumns)
}

// labelText is s safe to show, its whitespace runs folded to one space
// and its ends trimmed.
func labelText(s string) string { return strings.Join(strings.Fields(textsafe.Line(s)), " ") }

// builtinPrefixes are the alias prefixes of the anchors' own agents and
// of OpenCode's stock subagents (explore, general).
var builtinPrefixes = map[string]string{
	"explore":      "exp",
	"general":      "gen",
	"explorer":     "exp",
	"librarian":    "lib",
	"oracle":       "ora",
	"designer":     "des",
	"fixer":        "fix",
	"observer":     "obs",
	"council":      "cnc",
	"councillor":   "clr",
	"orchestrator": "orc",
}

// AliasPrefix returns the alias prefix of agent; "" means the agent does not
// take part. overrides is config.taskSessions.agents.
//
// Agent names are case-sensitive: only the exact name finds a built-in
// prefix or an override. An override is shaped like any other prefix
// (sanitizePrefix), so every alias stays `[a-z0-9-]+-<n>`, easy for a model
// to repeat; an override that sanitises to "" opts the agent out.
func AliasPrefix(agent string, overrides map[string]string) string {
	if p, ok := overrides[agent]; ok {
		return sanitizePrefix(p)
	}
	if p, ok := builtinPrefixes[agent]; ok {
		return p
	}
	return sanitizePrefix(agent)
}

// sanitizePrefix lower-cases name, turns each run of characters outside
// a-z0-9 into one `-` and trims `-` from the ends: `Code Reviewer` gives
// `code-reviewer`, `!!!` gives "".
func sanitizePrefix(name string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(name) {
		if ('a' <= r && r <= 'z') || ('0' <= r && r <= '9') {
			if dash && b.Len() > 0 {
				b.WriteByte('-')
			}
			dash = false
			b.WriteRune(r)
			continue
		}
		dash = true
	}
	return b.String()
}
