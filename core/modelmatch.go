package core

import (
	"regexp"
	"strings"
	"unicode"
)

// This file holds the string helpers of MODEL_RESOLUTION.md: variant
// splitting, provider/model parsing, the canonical form used for matching,
// fuzzy matching and provider id shaping. ResolveModel (model.go) composes
// them.

// knownVariants are the words a trailing space-separated word must be to
// count as a variant; a parenthesised variant may be any word.
var knownVariants = map[string]bool{
	"low": true, "medium": true, "high": true, "xhigh": true, "max": true,
	"minimal": true, "none": true, "auto": true, "thinking": true,
}

// variantWord is the shape a trailing word must have before it is looked up
// in knownVariants.
var variantWord = regexp.MustCompile(`^[a-zA-Z][a-zA-Z0-9_-]*$`)

// splitVariant splits a trailing variant off a model id: `gpt-5.4 high` and
// `gpt-5.4(high)` both give ("gpt-5.4", "high"). A blank variant counts as
// none. id may be empty (`(high)`); callers decide whether that is usable.
func splitVariant(s string) (id, variant string) {
	s = strings.TrimSpace(s)
	if open := strings.LastIndexByte(s, '('); open >= 0 && strings.HasSuffix(s, ")") {
		// LastIndexByte guarantees no '(' after open; the only ')' allowed
		// is the closing one.
		if inner := s[open+1 : len(s)-1]; !strings.ContainsRune(inner, ')') {
			return strings.TrimSpace(s[:open]), strings.TrimSpace(inner)
		}
	}
	// A single word is an id, never a variant: `high` alone names no model.
	cut := strings.LastIndexFunc(s, unicode.IsSpace)
	if cut < 0 {
		return s, ""
	}
	word := s[cut+1:]
	if variantWord.MatchString(word) && knownVariants[strings.ToLower(word)] {
		return strings.TrimSpace(s[:cut]), strings.ToLower(word)
	}
	return s, ""
}

// parseProviderModel parses `provider/model variant`. ok is false when s has
// no `/`, or the provider or the model (after splitting the variant off) is
// blank.
func parseProviderModel(s string) (provider, model, variant string, ok bool) {
	s = strings.TrimSpace(s)
	slash := strings.IndexByte(s, '/')
	if slash < 0 {
		return "", "", "", false
	}
	provider = strings.TrimSpace(s[:slash])
	model, variant = splitVariant(s[slash+1:])
	if provider == "" || model == "" {
		return "", "", "", false
	}
	return provider, model, variant, true
}

// modelEntry is a user-written model string (user model, user fallback)
// taken apart. The category default is opaque and never parsed this way.
type modelEntry struct {
	base     string // `provider/model` or a bare id, variant removed
	provider string // "" when the entry names no provider
	variant  string // "" when none
}

// parseModelEntry parses a user-written model string; ok is false for an
// unusable entry (blank, or nothing left once the variant is split off).
func parseModelEntry(s string) (e modelEntry, ok bool) {
	if strings.TrimSpace(s) == "" {
		return modelEntry{}, false
	}
	if provider, model, variant, ok := parseProviderModel(s); ok {
		return modelEntry{base: provider + "/" + model, provider: provider, variant: variant}, true
	}
	id, variant := splitVariant(s)
	if id == "" {
		return modelEntry{}, false
	}
	return modelEntry{base: id, variant: variant}, true
}

// opaqueModelProvider is the provider of an opaque `provider/model` id (the
// category default): the trimmed text before the first `/`, or "" when
// there is no `/` or either side is blank. No variant is split off.
func opaqueModelProvider(s string) string {
	provider, model, found := strings.Cut(s, "/")
	provider = strings.TrimSpace(provider)
	if !found || provider == "" || strings.TrimSpace(model) == "" {
		return ""
	}
	return provider
}

// providerHint is the provider filter an entry brings to fuzzy matching.
func (e modelEntry) providerHint() []string {
	if e.provider == "" {
		return nil
	}
	return []string{e.provider}
}

var (
	canonicalClaude = regexp.MustCompile(`claude-(opus|sonnet|haiku)-(\d+)[.-](\d+)`)
	canonicalKimi   = regexp.MustCompile(`kimi-k2[.-](\d+)`)
	canonicalGLMGPT = regexp.MustCompile(`\b(glm|gpt)-(\d+)[.-](\d+)`)
)

// canonicalModel is the form two spellings of one model share, so that
// `claude-opus-4-6` and `claude-opus-4.6` match each other.
func canonicalModel(s string) string {
	s = strings.ToLower(s)
	// The substring checks skip the regexps for ids they cannot change;
	// matching runs them over every available model.
	if strings.Contains(s, "claude-") {
		s = canonicalClaude.ReplaceAllString(s, "claude-${1}-${2}.${3}")
	}
	if strings.Contains(s, "kimi-k2") {
		s = canonicalKimi.ReplaceAllString(s, "kimi-k2.${1}")
	}
	if strings.Contains(s, "glm-") || strings.Contains(s, "gpt-") {
		s = canonicalGLMGPT.ReplaceAllString(s, "${1}-${2}.${3}")
	}
	return s
}

// modelProvider is the provider of an available model: the text before the
// first `/` (`a` for `a/b/c`), "" for an id without one.
func modelProvider(model string) string {
	provider, _, found := strings.Cut(model, "/")
	if !found {
		return ""
	}
	return provider
}

// fuzzyMatchModel picks the available model that best matches target, or ""
// when none does. With providers non-empty only models of those providers
// are considered. Order of available decides ties.
func fuzzyMatchModel(target string, available []string, providers []string) string {
	want := canonicalModel(target)
	if strings.TrimSpace(want) == "" {
		return ""
	}
	var (
		shortest, shortestID string
		found, foundID       bool
	)
	for _, model := range available {
		if len(providers) > 0 && !containsString(providers, modelProvider(model)) {
			continue
		}
		canonical := canonicalModel(model)
		if !strings.Contains(canonical, want) {
			continue
		}
		if canonical == want {
			return model
		}
		// Strict < keeps the earlier model on ties in length.
		if !found || len(model) < len(shortest) {
			shortest, found = model, true
		}
		if _, id, ok := strings.Cut(model, "/"); ok && canonicalModel(id) == want {
			if !foundID || len(model) < len(shortestID) {
				shortestID, foundID = model, true
			}
		}
	}
	if foundID {
		return shortestID
	}
	return shortest
}

func containsString(list []string, s string) bool {
	for _, item := range list {
		if item == s {
			return true
		}
	}
	return false
}

// vercelSubProviders infers the sub-provider of a bare id on the vercel
// gateway, in the order the prefixes are tried.
var vercelSubProviders = []struct{ prefix, provider string }{
	{"claude-", "anthropic"},
	{"gpt-", "openai"},
	{"gemini-", "google"},
	{"grok-", "xai"},
	{"minimax-", "minimax"},
	{"kimi-", "moonshotai"},
	{"glm-", "zai"},
}

var claudeVersionDash = regexp.MustCompile(`claude-(\w+)-(\d+)-(\d+)`)

// shapeModelForProvider spells a fallback-chain model id the way provider
// lists it (gateways use dotted versions and preview suffixes).
func shapeModelForProvider(provider, model string) string {
	switch provider {
	case "vercel":
		if sub, id, ok := strings.Cut(model, "/"); ok {
			return sub + "/" + gatewayRewrites(id)
		}
		for _, p := range vercelSubProviders {
			if strings.HasPrefix(model, p.prefix) {
				return p.provider + "/" + gatewayRewrites(model)
			}
		}
		return model
	case "github-copilot":
		return rewriteGemini3Flash(rewriteGemini31Pro(dotClaudeVersions(model)))
	case "google":
		return rewriteGemini3Flash(rewriteGemini31Pro(model))
	default:
		return model
	}
}

func gatewayRewrites(model string) string {
	return rewriteGemini31Pro(dotClaudeVersions(model))
}

// dotClaudeVersions rewrites every `claude-<word>-N-M` to `claude-<word>-N.M`.
func dotClaudeVersions(model string) string {
	return claudeVersionDash.ReplaceAllString(model, "claude-${1}-${2}.${3}")
}

// rewriteGemini31Pro rewrites `gemini-3.1-pro` not followed by `-` to
// `gemini-3.1-pro-preview`, so an id already carrying a suffix is kept.
func rewriteGemini31Pro(model string) string {
	return rewriteUnsuffixed(model, "gemini-3.1-pro", "gemini-3.1-pro-preview", "")
}

// rewriteGemini3Flash rewrites `gemini-3-flash` not followed by `-` and not
// preceded by `antigravity-` to `gemini-3-flash-preview`.
func rewriteGemini3Flash(model string) string {
	return rewriteUnsuffixed(model, "gemini-3-flash", "gemini-3-flash-preview", "antigravity-")
}

// rewriteUnsuffixed replaces each occurrence of old that is not followed by
// `-` (and, when notAfter is set, not preceded by notAfter) with repl. It
// stands in for a look-around regexp, which Go's regexp lacks.
func rewriteUnsuffixed(s, old, repl, notAfter string) string {
	var b strings.Builder
	rest, done := s, 0
	for {
		i := strings.Index(rest, old)
		if i < 0 {
			break
		}
		at := done + i
		end := at + len(old)
		followedByDash := end < len(s) && s[end] == '-'
		precededBy := notAfter != "" && strings.HasSuffix(s[:at], notAfter)
		b.WriteString(s[done:at])
		if followedByDash || precededBy {
			b.WriteString(old)
		} else {
			b.WriteString(repl)
		}
		done = end
		rest = s[done:]
	}
	if done == 0 {
		return s
	}
	b.WriteString(s[done:])
	return b.String()
}

// explicitHighBase reports whether model's last path segment ends in `-high`
// after a non-empty stem (`openai/gpt-5.4-high`) and returns model without
// that suffix.
func explicitHighBase(model string) (base string, ok bool) {
	segment := model[strings.LastIndexByte(model, '/')+1:]
	if len(segment) <= len("-high") || !strings.HasSuffix(segment, "-high") {
		return "", false
	}
	return strings.TrimSuffix(model, "-high"), true
}
