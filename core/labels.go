package core

import (
	"strings"
	"unicode"
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

// cutRunes keeps at most the first n code points of s, without
// re-encoding it and without splitting a character a user sees as one
// (ClusterStart): a cut inside an emoji family or a flag keeps less.
func cutRunes(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	count := 0
	for i := range s {
		if count == n {
			return s[:ClusterStart(s, i)]
		}
		count++
	}
	return s
}

// ClusterStart moves the byte index i of s (a rune's start) back to the
// start of the user-perceived character it falls in, so that s[:i] splits
// none: not before a combining mark, a zero-width joiner, a variation
// selector, an emoji modifier or tag, nor after a joiner, nor between the
// two regional indicators of a flag. An approximation of Unicode's
// grapheme clusters (UAX #29) for cutting labels, with no tables.
func ClusterStart(s string, i int) int {
	for i > 0 && i < len(s) {
		r, _ := utf8.DecodeRuneInString(s[i:])
		prev, size := utf8.DecodeLastRuneInString(s[:i])
		switch {
		case extendsCluster(r), prev == zwj:
			i -= size
		case isRegional(r) && isRegional(prev):
			// A flag is a pair: cut before the pair when r is its second.
			n := 0
			for j := i; j > 0; {
				p, sz := utf8.DecodeLastRuneInString(s[:j])
				if !isRegional(p) {
					break
				}
				n++
				j -= sz
			}
			if n%2 == 0 {
				return i
			}
			i -= size
		default:
			return i
		}
	}
	return i
}

const zwj = '\u200d'

// extendsCluster: a rune that belongs to the character before it.
func extendsCluster(r rune) bool {
	return r == zwj || unicode.In(r, unicode.Mn, unicode.Me, unicode.Mc) ||
		(r >= 0xFE00 && r <= 0xFE0F) || (r >= 0x1F3FB && r <= 0x1F3FF) || (r >= 0xE0020 && r <= 0xE007F) || (r >= 0xE0100 && r <= 0xE01EF)
}

func isRegional(r rune) bool { return r >= 0x1F1E6 && r <= 0x1F1FF }

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
