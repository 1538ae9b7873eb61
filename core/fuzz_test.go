package core

import (
	"reflect"
	"slices"
	"strings"
	"testing"
)

// FuzzResolveModel runs ResolveModel on arbitrary strings and lists and
// checks: no panic; the same input twice gives the same answer; the input
// is not modified; an answer is either {"skipped":true} alone or has a
// non-empty model and a known rung.
//
// Lists are fuzzed as newline-separated strings; a fallback chain as lines
// of "provider,provider|model|variant". Seeds: f.Add below (the worked
// examples of MODEL_RESOLUTION.md) and testdata/fuzz/FuzzResolveModel.
func FuzzResolveModel(f *testing.F) {
	type seed struct {
		user, fallbacks, category string
		userConfigured            bool
		chain, available, system  string
		connected                 string
		connectedNull             bool
		modelsCache, connCache    bool
	}
	seeds := []seed{
		{category: "openai/gpt-5.4", connectedNull: true},
		{user: "quotio/claude-haiku-4-5-unavailable", fallbacks: "openai/gpt-5.4 high", available: "openai/gpt-5.4-preview", connectedNull: true},
		{user: "anthropic/claude-opus-4-6(max)", available: "anthropic/claude-opus-4.6\nvercel/anthropic/claude-opus-4.6"},
		{category: "openai/gpt-5.4 xhigh", userConfigured: true, available: "openai/gpt-5.4\nopenai/gpt-5.4-mini", connectedNull: true},
		{chain: "vercel,openai|gpt-5.6-sol|high\nanthropic|claude-opus-4-6|max", connected: "vercel", modelsCache: true},
		{chain: "github-copilot|gemini-3-flash|\ngoogle|gemini-3.1-pro|", connected: "google\ngithub-copilot", connCache: true},
		{chain: "vercel|kimi-k2-5|\nvercel|glm-4-6|\nvercel|grok-4|", available: "vercel/moonshotai/kimi-k2.5\nvercel/zai/glm-4.6"},
		{fallbacks: "  \nopenai/gpt-5.4(high)\nclaude-sonnet-4-5 thinking", available: "anthropic/claude-sonnet-4.5", connectedNull: true},
		{system: "openai/gpt-5.4", connected: "", modelsCache: true},
		{user: " ", category: "/", chain: "|/|", available: " / \n/\n", system: " "},
		{user: "a/b(", fallbacks: "(x)\n()", category: "x/y (low)", available: "x/y\nx/y-z"},
		{chain: "antigravity|antigravity-gemini-3-flash|", available: "google/gemini-3-flash-preview\ngoogle/antigravity-gemini-3-flash"},
	}
	for _, s := range seeds {
		f.Add(s.user, s.fallbacks, s.category, s.userConfigured, s.chain, s.available, s.system,
			s.connected, s.connectedNull, s.modelsCache, s.connCache)
	}
	f.Fuzz(func(t *testing.T, user, fallbacks, category string, userConfigured bool, chain, available, system,
		connected string, connectedNull, modelsCache, connCache bool) {
		in := ModelInput{
			UserModel:                     user,
			UserFallbackModels:            fuzzList(fallbacks),
			CategoryDefaultModel:          category,
			IsUserConfiguredCategoryModel: userConfigured,
			FallbackChain:                 fuzzChain(chain),
			AvailableModels:               fuzzList(available),
			SystemDefaultModel:            system,
		}
		deps := ModelDeps{HasProviderModelsCache: modelsCache, HasConnectedProvidersCache: connCache}
		if !connectedNull {
			deps.ConnectedProviders = fuzzList(connected)
			if deps.ConnectedProviders == nil {
				deps.ConnectedProviders = []string{}
			}
		}
		inCopy, depsCopy := cloneModelInput(in), cloneModelDeps(deps)

		first := ResolveModel(in, deps)
		if !reflect.DeepEqual(in, inCopy) || !reflect.DeepEqual(deps, depsCopy) {
			t.Fatalf("ResolveModel modified its input:\nbefore %+v %+v\nafter  %+v %+v", inCopy, depsCopy, in, deps)
		}
		second := ResolveModel(cloneModelInput(in), cloneModelDeps(deps))
		if !reflect.DeepEqual(first, second) {
			t.Fatalf("not deterministic: %+v then %+v for %+v %+v", first, second, in, deps)
		}
		if first == nil {
			return
		}
		if first.Skipped {
			if *first != (ModelResolution{Skipped: true}) {
				t.Fatalf("a skipped answer carries more: %+v", first)
			}
			return
		}
		if first.Model == "" {
			t.Fatalf("answer with an empty model: %+v for %+v %+v", first, in, deps)
		}
		switch first.Rung {
		case RungUser, RungUserFallbackPromoted, RungCategoryDefault, RungUserFallback, RungFallbackChain, RungSystemDefault:
		default:
			t.Fatalf("answer with unknown rung %q: %+v", first.Rung, first)
		}
		// The answer shares no memory with the input.
		if first.FallbackEntry != nil && len(first.FallbackEntry.Providers) > 0 {
			first.FallbackEntry.Providers[0] = "\x00mutated"
			if !reflect.DeepEqual(in, inCopy) {
				t.Fatalf("the answer's fallbackEntry aliases the input's fallback chain")
			}
		}
	})
}

// fuzzList splits s into lines; "" is a nil list.
func fuzzList(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}

// fuzzChain reads lines of "providers|model|variant", providers separated
// by commas.
func fuzzChain(s string) []FallbackEntry {
	var chain []FallbackEntry
	for _, line := range fuzzList(s) {
		fields := strings.SplitN(line, "|", 3)
		for len(fields) < 3 {
			fields = append(fields, "")
		}
		var providers []string
		if fields[0] != "" {
			providers = strings.Split(fields[0], ",")
		}
		chain = append(chain, FallbackEntry{Providers: providers, Model: fields[1], Variant: fields[2]})
	}
	return chain
}

func cloneModelInput(in ModelInput) ModelInput {
	out := in
	out.UserFallbackModels = slices.Clone(in.UserFallbackModels)
	out.AvailableModels = slices.Clone(in.AvailableModels)
	if in.FallbackChain != nil {
		out.FallbackChain = make([]FallbackEntry, len(in.FallbackChain))
		for i, e := range in.FallbackChain {
			e.Providers = slices.Clone(e.Providers)
			out.FallbackChain[i] = e
		}
	}
	return out
}

func cloneModelDeps(d ModelDeps) ModelDeps {
	out := d
	out.ConnectedProviders = slices.Clone(d.ConnectedProviders)
	return out
}
