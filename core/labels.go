package core

import (
	"strings"
	"unicode/utf8"
)

// MaxLabelRunes is how long a task label may be, in code points.
const MaxLabelRunes = 48

// TaskLabel derives an entry's label from a task call's arguments: the
// description with whitespace runs folded to one space, else the first
// non-blank line of the prompt folded the same way, else
// `recent <agent> task`; cut to MaxLabelRunes code points.
func TaskLabel(description, prompt, agent string) string {
	label := foldSpace(description)
	if label == "" {
		for line := range strings.Lines(prompt) {
			if label = foldSpace(line); label != "" {
				break
			}
		}
	}
	if label == "" {
		label = "recent " + foldSpace(agent) + " task"
	}
	return cutRunes(label, MaxLabelRunes)
}

// foldSpace folds each whitespace run to one space and trims the ends.
func foldSpace(s string) string { return strings.Join(strings.Fields(s), " ") }

// cutRunes keeps the first n code points of s, without re-encoding it.
func cutRunes(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	count := 0
	for i := range s {
		if count == n {
			return s[:i]
		}
		count++
	}
	return s
}

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
