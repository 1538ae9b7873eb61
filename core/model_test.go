package core

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The entries and chain of MODEL_RESOLUTION.md's worked examples.
var (
	solEntry     = FallbackEntry{Providers: []string{"openai", "vercel"}, Model: "gpt-5.6-sol", Variant: "xhigh"}
	copilotEntry = FallbackEntry{Providers: []string{"github-copilot"}, Model: "gpt-5.6-sol", Variant: "high"}
	legacyEntry  = FallbackEntry{Providers: []string{"openai", "github-copilot", "opencode", "vercel"}, Model: "gpt-5.5", Variant: "xhigh"}
)

func solChain() []FallbackEntry { return []FallbackEntry{solEntry, copilotEntry, legacyEntry} }

// warm deps: caches present, connected providers unknown.
var warm = ModelDeps{HasProviderModelsCache: true, HasConnectedProvidersCache: true}

func connectedDeps(providers ...string) ModelDeps {
	if providers == nil {
		providers = []string{}
	}
	return ModelDeps{ConnectedProviders: providers, HasProviderModelsCache: true, HasConnectedProvidersCache: true}
}

func answer(rung, model, variant string) *ModelResolution {
	return &ModelResolution{Model: model, Variant: variant, Rung: rung}
}

func fallbackAnswer(rung, model, variant string) *ModelResolution {
	return &ModelResolution{Model: model, Variant: variant, MatchedFallback: true, Rung: rung}
}

func chainAnswerFor(model, variant string, entry FallbackEntry) *ModelResolution {
	return &ModelResolution{Model: model, Variant: variant, FallbackEntry: &entry, MatchedFallback: true, Rung: RungFallbackChain}
}

type resolveCase struct {
	name string
	in   ModelInput
	deps ModelDeps
	want *ModelResolution
}

func runResolveCases(t *testing.T, tests []resolveCase) {
	t.Helper()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, ResolveModel(tt.in, tt.deps))
		})
	}
}

func TestResolveModelWorkedExamples(t *testing.T) {
	runResolveCases(t, []resolveCase{
		{
			name: "cold caches skip",
			in:   ModelInput{AvailableModels: []string{}, CategoryDefaultModel: "openai/gpt-5.4"},
			want: &ModelResolution{Skipped: true},
		},
		{
			name: "unavailable user model promotes a matching user fallback",
			in: ModelInput{
				UserModel:          "quotio/claude-haiku-4-5-unavailable",
				UserFallbackModels: []string{"openai/gpt-5.4 high"},
				AvailableModels:    []string{"openai/gpt-5.4-preview"},
			},
			want: fallbackAnswer(RungUserFallbackPromoted, "openai/gpt-5.4-preview", "high"),
		},
		{
			name: "no models: chain answers on the first connected provider",
			in: ModelInput{
				AvailableModels: []string{},
				FallbackChain: []FallbackEntry{
					{Providers: []string{"anthropic"}, Model: "claude-sonnet-4-6"},
					{Providers: []string{"openai"}, Model: "gpt-5.4", Variant: "medium"},
				},
			},
			deps: connectedDeps("openai"),
			want: chainAnswerFor("openai/gpt-5.4", "medium", FallbackEntry{Providers: []string{"openai"}, Model: "gpt-5.4", Variant: "medium"}),
		},
		{
			name: "sol chain: vercel gateway id matches the sol entry before the system default",
			in:   ModelInput{AvailableModels: []string{"vercel/openai/gpt-5.6-sol"}, FallbackChain: solChain(), SystemDefaultModel: "system/default"},
			want: chainAnswerFor("vercel/openai/gpt-5.6-sol", "xhigh", solEntry),
		},
		{
			name: "sol chain: vercel on the sol entry beats the copilot rung",
			in:   ModelInput{AvailableModels: []string{"github-copilot/gpt-5.6-sol", "vercel/openai/gpt-5.6-sol"}, FallbackChain: solChain()},
			want: chainAnswerFor("vercel/openai/gpt-5.6-sol", "xhigh", solEntry),
		},
		{
			name: "sol chain: copilot keeps its own rung and variant",
			in:   ModelInput{AvailableModels: []string{"github-copilot/gpt-5.6-sol"}, FallbackChain: solChain()},
			want: chainAnswerFor("github-copilot/gpt-5.6-sol", "high", copilotEntry),
		},
		{
			name: "sol chain: legacy rung on copilot",
			in:   ModelInput{AvailableModels: []string{"github-copilot/gpt-5.5"}, FallbackChain: solChain()},
			want: chainAnswerFor("github-copilot/gpt-5.5", "xhigh", legacyEntry),
		},
		{
			name: "custom provider matches the bare model",
			in: ModelInput{
				AvailableModels: []string{"custom-provider/gpt-5.5"},
				FallbackChain:   []FallbackEntry{{Providers: []string{"openai"}, Model: "gpt-5.5", Variant: "high"}},
			},
			want: chainAnswerFor("custom-provider/gpt-5.5", "high", FallbackEntry{Providers: []string{"openai"}, Model: "gpt-5.5", Variant: "high"}),
		},
		{
			name: "sol chain: unlisted custom provider keeps the earlier rung",
			in:   ModelInput{AvailableModels: []string{"long-custom-provider/gpt-5.6-sol", "github-copilot/gpt-5.6-sol"}, FallbackChain: solChain()},
			want: chainAnswerFor("long-custom-provider/gpt-5.6-sol", "xhigh", solEntry),
		},
		{
			name: "user-configured category default keeps its variant",
			in: ModelInput{CategoryDefaultModel: "openai/gemini-3.1-pro xhigh", IsUserConfiguredCategoryModel: true,
				AvailableModels: []string{"openai/gemini-3.1-pro"}},
			want: answer(RungCategoryDefault, "openai/gemini-3.1-pro", "xhigh"),
		},
		{
			// delegate-core: "user-configured category model has variant ... preserves variant".
			name: "user-configured category default with a variant preserves it",
			in:   ModelInput{CategoryDefaultModel: "openai/gpt-5.4 high", IsUserConfiguredCategoryModel: true},
			deps: warm,
			want: answer(RungCategoryDefault, "openai/gpt-5.4", "high"),
		},
		{
			name: "a category default that is not user-configured stays opaque",
			in:   ModelInput{CategoryDefaultModel: "openai/gpt-5.4 high", AvailableModels: []string{"openai/gpt-5.4 high"}},
			want: answer(RungCategoryDefault, "openai/gpt-5.4 high", ""),
		},
		{
			name: "category default is matched as the whole id",
			in: ModelInput{CategoryDefaultModel: "openai/gemini-3.1-pro xhigh",
				AvailableModels: []string{"openai/gemini-3.1-pro", "openai/gemini-3.1-pro xhigh"}},
			want: answer(RungCategoryDefault, "openai/gemini-3.1-pro xhigh", ""),
		},
	})
}

func TestResolveModelUserModel(t *testing.T) {
	runResolveCases(t, []resolveCase{
		{
			name: "answered as given, trimmed",
			in:   ModelInput{UserModel: "  openai/gpt-5.4  ", AvailableModels: []string{"anthropic/claude-opus-4.6"}},
			want: answer(RungUser, "openai/gpt-5.4", ""),
		},
		{
			name: "variant split off",
			in:   ModelInput{UserModel: "openai/gpt-5.4 high"},
			want: answer(RungUser, "openai/gpt-5.4", "high"),
		},
		{
			name: "bare model with parenthesised variant",
			in:   ModelInput{UserModel: "gpt-5.4(xhigh)"},
			want: answer(RungUser, "gpt-5.4", "xhigh"),
		},
		{
			name: "without a variant the text is kept as written",
			in:   ModelInput{UserModel: "openai / gpt-5.4"},
			want: answer(RungUser, "openai / gpt-5.4", ""),
		},
		{
			name: "unusable entry answered as given",
			in:   ModelInput{UserModel: "(high)"},
			want: answer(RungUser, "(high)", ""),
		},
		{
			name: "wins over cold caches",
			in:   ModelInput{UserModel: "openai/gpt-5.4", AvailableModels: []string{}},
			want: answer(RungUser, "openai/gpt-5.4", ""),
		},
		{
			name: "reachable user model is not replaced by its fallback",
			in: ModelInput{
				UserModel:          "openai/gpt-5.4",
				UserFallbackModels: []string{"anthropic/claude-opus-4-6"},
				AvailableModels:    []string{"openai/gpt-5.4-preview", "anthropic/claude-opus-4.6"},
			},
			want: answer(RungUser, "openai/gpt-5.4", ""),
		},
		{
			name: "provider hint makes another provider's copy unreachable",
			in: ModelInput{
				UserModel:          "anthropic/gpt-5.4",
				UserFallbackModels: []string{"openai/gpt-5.4 low"},
				AvailableModels:    []string{"openai/gpt-5.4"},
			},
			want: fallbackAnswer(RungUserFallbackPromoted, "openai/gpt-5.4", "low"),
		},
		{
			name: "provider hint ignores a gateway copy of the user model",
			in: ModelInput{
				UserModel:          "openai/gpt-5.4",
				UserFallbackModels: []string{"azure/openai/gpt-5.4 high"},
				AvailableModels:    []string{"azure/openai/gpt-5.4"},
			},
			want: fallbackAnswer(RungUserFallbackPromoted, "azure/openai/gpt-5.4", "high"),
		},
		{
			name: "promotion skips unusable and unmatched fallbacks",
			in: ModelInput{
				UserModel:          "quotio/missing",
				UserFallbackModels: []string{"  ", "(high)", "anthropic/claude-opus-4-6", "claude-haiku-4-5 (max)", "openai/gpt-5.4"},
				AvailableModels:    []string{"openai/gpt-5.4", "anthropic/claude-haiku-4.5"},
			},
			want: fallbackAnswer(RungUserFallbackPromoted, "anthropic/claude-haiku-4.5", "max"),
		},
		{
			name: "no fallback matches: the user model stands",
			in: ModelInput{
				UserModel:          "quotio/missing high",
				UserFallbackModels: []string{"anthropic/claude-opus-4-6"},
				AvailableModels:    []string{"openai/gpt-5.4"},
			},
			want: answer(RungUser, "quotio/missing", "high"),
		},
		{
			name: "no models available: no promotion",
			in: ModelInput{
				UserModel:          "quotio/missing",
				UserFallbackModels: []string{"openai/gpt-5.4"},
				AvailableModels:    []string{},
			},
			deps: connectedDeps("openai"),
			want: answer(RungUser, "quotio/missing", ""),
		},
		{
			name: "only blank fallbacks: no promotion",
			in: ModelInput{
				UserModel:          "quotio/missing",
				UserFallbackModels: []string{" "},
				AvailableModels:    []string{"openai/gpt-5.4"},
			},
			want: answer(RungUser, "quotio/missing", ""),
		},
		{
			name: "blank user model is absent",
			in:   ModelInput{UserModel: " \t ", AvailableModels: []string{}, CategoryDefaultModel: "openai/gpt-5.4"},
			want: &ModelResolution{Skipped: true},
		},
	})
}

func TestResolveModelColdCaches(t *testing.T) {
	in := ModelInput{AvailableModels: []string{}, CategoryDefaultModel: "openai/gpt-5.4", SystemDefaultModel: "system/default"}
	runResolveCases(t, []resolveCase{
		{
			name: "all unknown: skipped",
			in:   in,
			want: &ModelResolution{Skipped: true},
		},
		{
			name: "blank available models count as none",
			in:   ModelInput{AvailableModels: []string{"", "  "}, CategoryDefaultModel: "openai/gpt-5.4"},
			want: &ModelResolution{Skipped: true},
		},
		{
			name: "nil available models count as none",
			in:   ModelInput{CategoryDefaultModel: "openai/gpt-5.4"},
			want: &ModelResolution{Skipped: true},
		},
		{
			name: "provider models cache present: not skipped",
			in:   in,
			deps: ModelDeps{HasProviderModelsCache: true},
			want: answer(RungCategoryDefault, "openai/gpt-5.4", ""),
		},
		{
			name: "connected providers cache present: not skipped",
			in:   in,
			deps: ModelDeps{HasConnectedProvidersCache: true},
			want: answer(RungCategoryDefault, "openai/gpt-5.4", ""),
		},
		{
			name: "connected providers known empty: not skipped, nothing connected",
			in:   in,
			deps: ModelDeps{ConnectedProviders: []string{}},
			want: answer(RungSystemDefault, "system/default", ""),
		},
		{
			name: "connected providers all blank: known, nothing connected",
			in:   in,
			deps: ModelDeps{ConnectedProviders: []string{" "}},
			want: answer(RungSystemDefault, "system/default", ""),
		},
		{
			name: "models available: not skipped even with cold deps",
			in:   ModelInput{AvailableModels: []string{"openai/gpt-5.4"}, CategoryDefaultModel: "openai/gpt-5.4"},
			want: answer(RungCategoryDefault, "openai/gpt-5.4", ""),
		},
		{
			name: "nothing configured, caches warm: null",
			in:   ModelInput{AvailableModels: []string{}},
			deps: warm,
			want: nil,
		},
	})
}

func TestResolveModelCategoryDefault(t *testing.T) {
	runResolveCases(t, []resolveCase{
		{
			// Step 3 before step 4: with both reachable the category
			// default answers, by its rung.
			name: "category default comes before a user fallback when both match",
			in: ModelInput{CategoryDefaultModel: "openai/gpt-5.4", UserFallbackModels: []string{"anthropic/claude-opus-4-6"},
				AvailableModels: []string{"anthropic/claude-opus-4-6", "openai/gpt-5.4"}},
			want: answer(RungCategoryDefault, "openai/gpt-5.4", ""),
		},
		{
			name: "no models: category default comes before a user fallback when both are connected",
			in: ModelInput{CategoryDefaultModel: "openai/gpt-5.4", UserFallbackModels: []string{"anthropic/claude-opus-4-6"},
				AvailableModels: []string{}},
			deps: connectedDeps("anthropic", "openai"),
			want: answer(RungCategoryDefault, "openai/gpt-5.4", ""),
		},
		{
			name: "user-configured answered as given despite no match, its variant split off",
			in:   ModelInput{CategoryDefaultModel: "custom/foo high", IsUserConfiguredCategoryModel: true, AvailableModels: []string{"openai/gpt-5.4"}},
			want: answer(RungCategoryDefault, "custom/foo", "high"),
		},
		{
			name: "user-configured: parsed as an entry, trimmed, variant split off",
			in:   ModelInput{CategoryDefaultModel: " openai/gemini-3.1-pro xhigh ", IsUserConfiguredCategoryModel: true, AvailableModels: []string{"openai/gemini-3.1-pro"}},
			want: answer(RungCategoryDefault, "openai/gemini-3.1-pro", "xhigh"),
		},
		{
			name: "user-configured: a parenthesised variant is split off too",
			in:   ModelInput{CategoryDefaultModel: "openai/gpt-5.4(high)", IsUserConfiguredCategoryModel: true},
			deps: warm,
			want: answer(RungCategoryDefault, "openai/gpt-5.4", "high"),
		},
		{
			name: "user-configured: no variant, answered as given",
			in:   ModelInput{CategoryDefaultModel: " gpt-5.4 ", IsUserConfiguredCategoryModel: true, AvailableModels: []string{"openai/gpt-5.4"}},
			want: answer(RungCategoryDefault, "gpt-5.4", ""),
		},
		{
			name: "opaque id: matched as the whole string",
			in:   ModelInput{CategoryDefaultModel: "openai/gemini-3.1-pro xhigh", AvailableModels: []string{"openai/gemini-3.1-pro", "openai/gemini-3.1-pro xhigh"}},
			want: answer(RungCategoryDefault, "openai/gemini-3.1-pro xhigh", ""),
		},
		{
			name: "opaque id: the base alone does not match, the next rung decides",
			in: ModelInput{CategoryDefaultModel: "openai/gemini-3.1-pro xhigh", UserFallbackModels: []string{"openai/gpt-5.4 low"},
				AvailableModels: []string{"openai/gemini-3.1-pro", "openai/gpt-5.4"}},
			want: fallbackAnswer(RungUserFallback, "openai/gpt-5.4", "low"),
		},
		{
			name: "opaque id: a parenthesised variant is kept too",
			in:   ModelInput{CategoryDefaultModel: "openai/gpt-5.4(high)", AvailableModels: []string{}},
			deps: connectedDeps("openai"),
			want: answer(RungCategoryDefault, "openai/gpt-5.4(high)", ""),
		},
		{
			name: "opaque id: its provider still decides when no models are known",
			in:   ModelInput{CategoryDefaultModel: "openai/gpt-5.4 xhigh", SystemDefaultModel: "system/default", AvailableModels: []string{}},
			deps: connectedDeps("anthropic"),
			want: answer(RungSystemDefault, "system/default", ""),
		},
		{
			name: "user-configured without variant is the trimmed text",
			in:   ModelInput{CategoryDefaultModel: " custom/foo ", IsUserConfiguredCategoryModel: true, AvailableModels: []string{"custom/foo-2"}},
			want: answer(RungCategoryDefault, "custom/foo", ""),
		},
		{
			name: "user-configured on a disconnected provider still answers",
			in:   ModelInput{CategoryDefaultModel: "openai/gpt-5.4", IsUserConfiguredCategoryModel: true, AvailableModels: []string{}},
			deps: connectedDeps("anthropic"),
			want: answer(RungCategoryDefault, "openai/gpt-5.4", ""),
		},
		{
			name: "no models, connected unknown: as given",
			in:   ModelInput{CategoryDefaultModel: "openai/gpt-5.4 medium", AvailableModels: []string{}},
			deps: warm,
			want: answer(RungCategoryDefault, "openai/gpt-5.4 medium", ""),
		},
		{
			name: "no models, provider connected: as given",
			in:   ModelInput{CategoryDefaultModel: "openai/gpt-5.4", AvailableModels: []string{}},
			deps: connectedDeps("anthropic", "openai"),
			want: answer(RungCategoryDefault, "openai/gpt-5.4", ""),
		},
		{
			name: "no models, provider not connected: go on",
			in:   ModelInput{CategoryDefaultModel: "openai/gpt-5.4", UserFallbackModels: []string{"anthropic/claude-opus-4-6"}, AvailableModels: []string{}},
			deps: connectedDeps("anthropic"),
			want: fallbackAnswer(RungUserFallback, "anthropic/claude-opus-4-6", ""),
		},
		{
			name: "no models, default names no provider: as given",
			in:   ModelInput{CategoryDefaultModel: "gpt-5.4", AvailableModels: []string{}},
			deps: connectedDeps(),
			want: answer(RungCategoryDefault, "gpt-5.4", ""),
		},
		{
			name: "fuzzy match of the whole id carries no variant",
			in:   ModelInput{CategoryDefaultModel: "openai/gpt-5.4 medium", AvailableModels: []string{"openai/gpt-5.4-preview", "openai/gpt-5.4 medium-fast"}},
			want: answer(RungCategoryDefault, "openai/gpt-5.4 medium-fast", ""),
		},
		{
			name: "fuzzy match without a variant word",
			in:   ModelInput{CategoryDefaultModel: "openai/gpt-5.4", AvailableModels: []string{"openai/gpt-5.4-preview"}},
			want: answer(RungCategoryDefault, "openai/gpt-5.4-preview", ""),
		},
		{
			name: "fuzzy match by canonical form",
			in:   ModelInput{CategoryDefaultModel: "anthropic/claude-opus-4-6", AvailableModels: []string{"anthropic/claude-opus-4.6"}},
			want: answer(RungCategoryDefault, "anthropic/claude-opus-4.6", ""),
		},
		{
			name: "provider hint filters candidates",
			in:   ModelInput{CategoryDefaultModel: "openai/gpt-5.4", AvailableModels: []string{"azure/openai/gpt-5.4"}, SystemDefaultModel: "system/default"},
			want: answer(RungSystemDefault, "system/default", ""),
		},
		{
			name: "no match goes on to user fallbacks",
			in:   ModelInput{CategoryDefaultModel: "openai/gpt-9", UserFallbackModels: []string{"gpt-5.4 low"}, AvailableModels: []string{"openai/gpt-5.4"}},
			want: fallbackAnswer(RungUserFallback, "openai/gpt-5.4", "low"),
		},
		{
			name: "explicit high never downgraded to a sibling",
			in:   ModelInput{CategoryDefaultModel: "openai/gpt-5.4-high", AvailableModels: []string{"openai/gpt-5.4-high-fast"}},
			want: answer(RungCategoryDefault, "openai/gpt-5.4-high", ""),
		},
		{
			name: "a trailing word after -high: not an explicit high id, and no match",
			in:   ModelInput{CategoryDefaultModel: "openai/gpt-5.4-high max", AvailableModels: []string{"openai/gpt-5.4-high-fast"}, SystemDefaultModel: "system/default"},
			want: answer(RungSystemDefault, "system/default", ""),
		},
		{
			name: "explicit high that is itself available",
			in:   ModelInput{CategoryDefaultModel: "openai/gpt-5.4-high", AvailableModels: []string{"openai/gpt-5.4-high-fast", "openai/gpt-5.4-high"}},
			want: answer(RungCategoryDefault, "openai/gpt-5.4-high", ""),
		},
		{
			name: "non-high default takes the longer match",
			in:   ModelInput{CategoryDefaultModel: "openai/gpt-5.4-pro", AvailableModels: []string{"openai/gpt-5.4-pro-fast"}},
			want: answer(RungCategoryDefault, "openai/gpt-5.4-pro-fast", ""),
		},
	})
}

func TestResolveModelUserFallbacks(t *testing.T) {
	runResolveCases(t, []resolveCase{
		{
			name: "no models, connected unknown: first usable entry",
			in:   ModelInput{UserFallbackModels: []string{"", "(high)", "anthropic/claude-opus-4-6 max", "openai/gpt-5.4"}, AvailableModels: []string{}},
			deps: warm,
			want: fallbackAnswer(RungUserFallback, "anthropic/claude-opus-4-6", "max"),
		},
		{
			name: "no models: first entry whose provider is connected",
			in:   ModelInput{UserFallbackModels: []string{"anthropic/claude-opus-4-6", "openai/gpt-5.4 high"}, AvailableModels: []string{}},
			deps: connectedDeps("openai"),
			want: fallbackAnswer(RungUserFallback, "openai/gpt-5.4", "high"),
		},
		{
			name: "no models: an entry without provider needs no connection",
			in:   ModelInput{UserFallbackModels: []string{"anthropic/claude-opus-4-6", "gpt-5.4"}, AvailableModels: []string{}},
			deps: connectedDeps(),
			want: fallbackAnswer(RungUserFallback, "gpt-5.4", ""),
		},
		{
			name: "no models, nothing connected: go on",
			in:   ModelInput{UserFallbackModels: []string{"anthropic/claude-opus-4-6"}, AvailableModels: []string{}, SystemDefaultModel: " system/default "},
			deps: connectedDeps(),
			want: answer(RungSystemDefault, "system/default", ""),
		},
		{
			name: "models: first entry that matches, with its hint",
			in: ModelInput{
				UserFallbackModels: []string{"azure/gpt-5.4", "claude-opus-4-6 thinking", "openai/gpt-5.4"},
				AvailableModels:    []string{"openai/gpt-5.4", "anthropic/claude-opus-4.6"},
			},
			want: fallbackAnswer(RungUserFallback, "anthropic/claude-opus-4.6", "thinking"),
		},
		{
			name: "models: connected providers ignored",
			in:   ModelInput{UserFallbackModels: []string{"openai/gpt-5.4"}, AvailableModels: []string{"openai/gpt-5.4"}},
			deps: connectedDeps(),
			want: fallbackAnswer(RungUserFallback, "openai/gpt-5.4", ""),
		},
		{
			name: "user fallback comes before the chain",
			in: ModelInput{
				UserFallbackModels: []string{"gpt-5.5"},
				AvailableModels:    []string{"github-copilot/gpt-5.5", "github-copilot/gpt-5.6-sol"},
				FallbackChain:      solChain(),
			},
			want: fallbackAnswer(RungUserFallback, "github-copilot/gpt-5.5", ""),
		},
	})
}

func TestResolveModelFallbackChain(t *testing.T) {
	highEntry := FallbackEntry{Providers: []string{"openai"}, Model: "gpt-5.4", Variant: "high"}
	runResolveCases(t, []resolveCase{
		{
			name: "no models, connected unknown: first entry's first provider, shaped",
			in: ModelInput{
				AvailableModels: []string{},
				FallbackChain:   []FallbackEntry{{Providers: []string{"vercel", "anthropic"}, Model: "claude-opus-4-6", Variant: "max"}, solEntry},
			},
			deps: warm,
			want: chainAnswerFor("vercel/anthropic/claude-opus-4.6", "max", FallbackEntry{Providers: []string{"vercel", "anthropic"}, Model: "claude-opus-4-6", Variant: "max"}),
		},
		{
			name: "no models, connected unknown: first entry without providers goes on",
			in: ModelInput{
				AvailableModels:    []string{},
				FallbackChain:      []FallbackEntry{{Providers: []string{" "}, Model: "gpt-5.4"}, solEntry},
				SystemDefaultModel: "system/default",
			},
			deps: warm,
			want: answer(RungSystemDefault, "system/default", ""),
		},
		{
			name: "no models: connected provider shaped for copilot",
			in: ModelInput{
				AvailableModels: []string{},
				FallbackChain:   []FallbackEntry{{Providers: []string{"google", "github-copilot"}, Model: "gemini-3-flash"}},
			},
			deps: connectedDeps("github-copilot"),
			want: chainAnswerFor("github-copilot/gemini-3-flash-preview", "", FallbackEntry{Providers: []string{"google", "github-copilot"}, Model: "gemini-3-flash"}),
		},
		{
			name: "no models, no provider connected: go on",
			in:   ModelInput{AvailableModels: []string{}, FallbackChain: solChain(), SystemDefaultModel: "system/default"},
			deps: connectedDeps("anthropic"),
			want: answer(RungSystemDefault, "system/default", ""),
		},
		{
			name: "no models, nothing connected and no system default: null",
			in:   ModelInput{AvailableModels: []string{}, FallbackChain: solChain()},
			deps: connectedDeps(),
			want: nil,
		},
		{
			name: "shaped id picks the preview model",
			in: ModelInput{
				AvailableModels: []string{"google/gemini-3.1-pro-x", "google/gemini-3.1-pro-preview"},
				FallbackChain:   []FallbackEntry{{Providers: []string{"google"}, Model: "gemini-3.1-pro"}},
			},
			want: chainAnswerFor("google/gemini-3.1-pro-preview", "", FallbackEntry{Providers: []string{"google"}, Model: "gemini-3.1-pro"}),
		},
		{
			name: "provider rung matches only that provider's models",
			in: ModelInput{
				AvailableModels: []string{"openai/gpt-5.4-long-name", "azure/gpt-5.4"},
				FallbackChain:   []FallbackEntry{{Providers: []string{"openai"}, Model: "gpt-5.4"}},
			},
			want: chainAnswerFor("openai/gpt-5.4-long-name", "", FallbackEntry{Providers: []string{"openai"}, Model: "gpt-5.4"}),
		},
		{
			name: "later entry with another model reserves nothing",
			in: ModelInput{
				AvailableModels: []string{"github-copilot/gpt-5.5"},
				FallbackChain:   []FallbackEntry{{Providers: []string{"openai"}, Model: "gpt-5.5", Variant: "xhigh"}, {Providers: []string{"github-copilot"}, Model: "gpt-5.6-sol", Variant: "high"}},
			},
			want: chainAnswerFor("github-copilot/gpt-5.5", "xhigh", FallbackEntry{Providers: []string{"openai"}, Model: "gpt-5.5", Variant: "xhigh"}),
		},
		{
			name: "entry without providers matches the bare model",
			in: ModelInput{
				AvailableModels: []string{"custom/gpt-5.5"},
				FallbackChain:   []FallbackEntry{{Model: "gpt-5.5"}},
			},
			want: chainAnswerFor("custom/gpt-5.5", "", FallbackEntry{Providers: []string{}, Model: "gpt-5.5"}),
		},
		{
			name: "blank fields are absent and blank-model entries skipped",
			in: ModelInput{
				AvailableModels: []string{"openai/gpt-5.4"},
				FallbackChain:   []FallbackEntry{{Providers: []string{"openai"}, Model: "  "}, {Providers: []string{" ", " openai "}, Model: " gpt-5.4 ", Variant: " "}},
			},
			want: chainAnswerFor("openai/gpt-5.4", "", FallbackEntry{Providers: []string{"openai"}, Model: "gpt-5.4"}),
		},
		{
			name: "nothing matches: system default",
			in:   ModelInput{AvailableModels: []string{"anthropic/claude-opus-4.6"}, FallbackChain: solChain(), SystemDefaultModel: "system/default"},
			want: answer(RungSystemDefault, "system/default", ""),
		},
		{
			name: "explicit high category default restored on its base",
			in: ModelInput{
				CategoryDefaultModel: "openai/gpt-5.4-high",
				AvailableModels:      []string{"openai/gpt-5.4"},
				FallbackChain:        []FallbackEntry{highEntry},
			},
			want: chainAnswerFor("openai/gpt-5.4-high", "", highEntry),
		},
		{
			name: "a default with a trailing word after -high restores nothing",
			in: ModelInput{
				CategoryDefaultModel: " openai/gpt-5.4-high max ",
				AvailableModels:      []string{"openai/gpt-5.4"},
				FallbackChain:        []FallbackEntry{highEntry},
			},
			want: chainAnswerFor("openai/gpt-5.4", "high", highEntry),
		},
		{
			name: "explicit high restored from a trimmed default",
			in: ModelInput{
				CategoryDefaultModel: " openai/gpt-5.4-high ",
				AvailableModels:      []string{"openai/gpt-5.4"},
				FallbackChain:        []FallbackEntry{highEntry},
			},
			want: chainAnswerFor("openai/gpt-5.4-high", "", highEntry),
		},
		{
			name: "explicit high restored through the bare-model match",
			in: ModelInput{
				CategoryDefaultModel: "openai/gpt-5.4-high",
				AvailableModels:      []string{"openai/gpt-5.4"},
				FallbackChain:        []FallbackEntry{{Providers: []string{"azure"}, Model: "gpt-5.4", Variant: "high"}},
			},
			want: chainAnswerFor("openai/gpt-5.4-high", "", FallbackEntry{Providers: []string{"azure"}, Model: "gpt-5.4", Variant: "high"}),
		},
		{
			name: "explicit high not restored for another variant",
			in: ModelInput{
				CategoryDefaultModel: "openai/gpt-5.4-high",
				AvailableModels:      []string{"openai/gpt-5.4"},
				FallbackChain:        []FallbackEntry{{Providers: []string{"openai"}, Model: "gpt-5.4", Variant: "xhigh"}},
			},
			want: chainAnswerFor("openai/gpt-5.4", "xhigh", FallbackEntry{Providers: []string{"openai"}, Model: "gpt-5.4", Variant: "xhigh"}),
		},
		{
			name: "explicit high not restored on another model",
			in: ModelInput{
				CategoryDefaultModel: "openai/gpt-5.4-high",
				AvailableModels:      []string{"openai/gpt-5.4-mini"},
				FallbackChain:        []FallbackEntry{highEntry},
			},
			want: chainAnswerFor("openai/gpt-5.4-mini", "high", highEntry),
		},
		{
			name: "non-high category default restores nothing",
			in: ModelInput{
				CategoryDefaultModel: "openai/gpt-9",
				AvailableModels:      []string{"openai/gpt-5.4"},
				FallbackChain:        []FallbackEntry{highEntry},
			},
			want: chainAnswerFor("openai/gpt-5.4", "high", highEntry),
		},
	})
}

func TestResolveModelSystemDefault(t *testing.T) {
	runResolveCases(t, []resolveCase{
		{
			name: "system default trimmed, variant not split",
			in:   ModelInput{AvailableModels: []string{"openai/gpt-5.4"}, SystemDefaultModel: " system/default high "},
			want: answer(RungSystemDefault, "system/default high", ""),
		},
		{
			name: "blank system default: null",
			in:   ModelInput{AvailableModels: []string{"openai/gpt-5.4"}, SystemDefaultModel: "  "},
			want: nil,
		},
		{
			name: "nothing at all with models: null",
			in:   ModelInput{AvailableModels: []string{"openai/gpt-5.4"}},
			want: nil,
		},
	})
}

// TestResolveModelConnectedProvidersJSON checks that the wire's null and []
// reach ResolveModel as unknown and known-none.
func TestResolveModelConnectedProvidersJSON(t *testing.T) {
	in := ModelInput{AvailableModels: []string{}, CategoryDefaultModel: "openai/gpt-5.4"}
	tests := []struct {
		name     string
		deps     string
		wantNil  bool
		expected *ModelResolution
	}{
		{"null is unknown: cold caches skip", `{"connectedProviders":null,"hasProviderModelsCache":false,"hasConnectedProvidersCache":false}`, true, &ModelResolution{Skipped: true}},
		{"absent is unknown", `{"hasProviderModelsCache":false,"hasConnectedProvidersCache":false}`, true, &ModelResolution{Skipped: true}},
		{"[] is known none: disconnected default skipped", `{"connectedProviders":[],"hasProviderModelsCache":false,"hasConnectedProvidersCache":false}`, false, nil},
		{"[openai]: default answers", `{"connectedProviders":["openai"],"hasProviderModelsCache":false,"hasConnectedProvidersCache":false}`, false, answer(RungCategoryDefault, "openai/gpt-5.4", "")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var deps ModelDeps
			require.NoError(t, json.Unmarshal([]byte(tt.deps), &deps))
			assert.Equal(t, tt.wantNil, deps.ConnectedProviders == nil)
			assert.Equal(t, tt.expected, ResolveModel(in, deps))
		})
	}
}

func TestModelResolutionJSON(t *testing.T) {
	tests := []struct {
		name string
		in   *ModelResolution
		want string
	}{
		{"null", nil, `null`},
		{"skipped", &ModelResolution{Skipped: true}, `{"skipped":true}`},
		{"user without variant", answer(RungUser, "openai/gpt-5.4", ""), `{"model":"openai/gpt-5.4","rung":"user"}`},
		{"user fallback", fallbackAnswer(RungUserFallback, "openai/gpt-5.4", "high"), `{"model":"openai/gpt-5.4","variant":"high","matchedFallback":true,"rung":"user-fallback"}`},
		{
			"fallback chain",
			chainAnswerFor("vercel/openai/gpt-5.6-sol", "xhigh", solEntry),
			`{"model":"vercel/openai/gpt-5.6-sol","variant":"xhigh","fallbackEntry":{"providers":["openai","vercel"],"model":"gpt-5.6-sol","variant":"xhigh"},"matchedFallback":true,"rung":"fallback-chain"}`,
		},
		{
			"chain entry without providers or variant",
			ResolveModel(ModelInput{AvailableModels: []string{"custom/gpt-5.5"}, FallbackChain: []FallbackEntry{{Model: "gpt-5.5"}}}, ModelDeps{}),
			`{"model":"custom/gpt-5.5","fallbackEntry":{"providers":[],"model":"gpt-5.5"},"matchedFallback":true,"rung":"fallback-chain"}`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := json.Marshal(tt.in)
			require.NoError(t, err)
			assert.Equal(t, tt.want, string(got))
		})
	}
}

// TestResolveModelLeavesInputAlone guards purity: the caller's slices are
// not changed and the answer shares no memory with them.
func TestResolveModelLeavesInputAlone(t *testing.T) {
	chain := []FallbackEntry{{Providers: []string{"openai", "vercel"}, Model: "gpt-5.6-sol", Variant: "xhigh"}}
	available := []string{"  ", "vercel/openai/gpt-5.6-sol"}
	connected := []string{" openai "}
	in := ModelInput{FallbackChain: chain, AvailableModels: available}

	got := ResolveModel(in, ModelDeps{ConnectedProviders: connected})
	require.NotNil(t, got)
	require.NotNil(t, got.FallbackEntry)
	got.FallbackEntry.Providers[0] = "changed"

	assert.Equal(t, []FallbackEntry{{Providers: []string{"openai", "vercel"}, Model: "gpt-5.6-sol", Variant: "xhigh"}}, chain)
	assert.Equal(t, []string{"  ", "vercel/openai/gpt-5.6-sol"}, available)
	assert.Equal(t, []string{" openai "}, connected)
}

// TestResolveModelAvailableOrderDecidesTies: the order of availableModels is
// the only tie-break (MODEL_RESOLUTION.md, fuzzy match), at every rung that
// matches. Each case lists two equally good matches in both orders; the
// earlier one answers each time, so neither sorting the list nor a
// tie-break by name or map order passes.
func TestResolveModelAvailableOrderDecidesTies(t *testing.T) {
	tests := []struct {
		name   string
		in     ModelInput
		a, b   string // two matches of equal length and quality
		answer func(model string) *ModelResolution
	}{
		{
			name: "category default",
			in:   ModelInput{CategoryDefaultModel: "gpt-5.4"},
			a:    "aaa/gpt-5.4", b: "bbb/gpt-5.4",
			answer: func(m string) *ModelResolution { return answer(RungCategoryDefault, m, "") },
		},
		{
			name: "user fallback",
			in:   ModelInput{UserFallbackModels: []string{"gpt-5.4 high"}},
			a:    "openai/gpt-5.4-aaa", b: "openai/gpt-5.4-bbb",
			answer: func(m string) *ModelResolution { return fallbackAnswer(RungUserFallback, m, "high") },
		},
		{
			name: "promoted user fallback",
			in:   ModelInput{UserModel: "missing/model", UserFallbackModels: []string{"claude-opus-4-6"}},
			a:    "aaa/claude-opus-4.6", b: "bbb/claude-opus-4-6",
			answer: func(m string) *ModelResolution { return fallbackAnswer(RungUserFallbackPromoted, m, "") },
		},
		{
			name: "fallback chain, bare model across providers",
			in:   ModelInput{FallbackChain: []FallbackEntry{{Providers: []string{"openai"}, Model: "gpt-5.6-sol", Variant: "xhigh"}}},
			a:    "aaa/gpt-5.6-sol", b: "bbb/gpt-5.6-sol",
			answer: func(m string) *ModelResolution {
				return chainAnswerFor(m, "xhigh", FallbackEntry{Providers: []string{"openai"}, Model: "gpt-5.6-sol", Variant: "xhigh"})
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, order := range [][]string{{tt.a, tt.b}, {tt.b, tt.a}} {
				in := tt.in
				in.AvailableModels = order
				assert.Equal(t, tt.answer(order[0]), ResolveModel(in, warm), "available %q", order)
			}
		})
	}
}

func BenchmarkResolveModel(b *testing.B) {
	cases := []struct {
		name      string
		available []string
	}{
		{"vercel", []string{"github-copilot/gpt-5.6-sol", "vercel/openai/gpt-5.6-sol"}},
		{"copilot", []string{"github-copilot/gpt-5.6-sol"}},
		{"legacy", []string{"github-copilot/gpt-5.5"}},
		{"custom", []string{"long-custom-provider/gpt-5.6-sol", "github-copilot/gpt-5.6-sol"}},
	}
	for _, c := range cases {
		in := ModelInput{AvailableModels: c.available, FallbackChain: solChain(), SystemDefaultModel: "system/default"}
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if ResolveModel(in, ModelDeps{}) == nil {
					b.Fatal("no answer")
				}
			}
		})
	}
}
