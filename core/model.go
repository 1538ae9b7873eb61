package core

import "strings"

// Model resolution follows docs/MODEL_RESOLUTION.md. Where that page is
// silent, these are the choices (each has a test row):
//
//   - A lone variant word (`high`) is a model id, not a variant: the space
//     rule needs a word before it. Any whitespace separates.
//   - A parenthesised variant keeps its case and inner spaces
//     (`gpt-5.4 (x y)` has variant `x y`); `()` means no variant; nested
//     parentheses are not a variant; `(high)` alone leaves an empty id, so
//     the entry is unusable.
//   - "As given" answers are the trimmed text; promotion of a user fallback
//     tests the user model's parsed base with its provider hint.
//   - A user-configured category default is a user model entry: its variant
//     is split off (`openai/gpt-5.4 high` answers `openai/gpt-5.4`, variant
//     `high`, as delegate-core's "user-configured category model has
//     variant ... preserves variant" test says); an entry that does not
//     parse is answered as given. The category default that is not
//     user-configured is an opaque model id, as in the anchor: no variant
//     is split off it. `openai/gemini-3.1-pro xhigh` is matched as that
//     whole (trimmed) string. Its provider, for the connected-provider
//     check and the match's provider hint, is the text before its first
//     `/` when both sides are non-blank.
//   - Explicit `-high` is case-sensitive, needs text before `-high`, and
//     "the match is not itself" / "equals that model's base" are exact
//     comparisons; the chain answers the default's base with no variant.
//   - Blank available models are dropped (the rest kept as they are);
//     connected providers are trimmed, blanks dropped, and the list stays
//     "known" (so [" "] means none connected).
//   - Chain entries are trimmed, blank providers and entries with a blank
//     model dropped; fallbackEntry echoes the cleaned entry with providers
//     always a list. With no models and unknown connected providers, an
//     empty first entry answers nothing rather than trying the next.
//   - An available id without `/` has no provider: a provider filter drops
//     it and no later rung reserves it. A blank target matches nothing.
//   - Provider shaping is case-sensitive; matching is not. The system
//     default is trimmed, with no variant split.

// FallbackEntry is one rung of a fallback chain.
type FallbackEntry struct {
	Providers []string `json:"providers"`
	Model     string   `json:"model"`
	Variant   string   `json:"variant,omitempty"`
}

// ModelInput is delegate.resolveModel's input (MODEL_RESOLUTION.md).
type ModelInput struct {
	UserModel                     string          `json:"userModel,omitempty"`
	UserFallbackModels            []string        `json:"userFallbackModels,omitempty"`
	CategoryDefaultModel          string          `json:"categoryDefaultModel,omitempty"`
	IsUserConfiguredCategoryModel bool            `json:"isUserConfiguredCategoryModel,omitempty"`
	FallbackChain                 []FallbackEntry `json:"fallbackChain,omitempty"`
	AvailableModels               []string        `json:"availableModels"`
	SystemDefaultModel            string          `json:"systemDefaultModel,omitempty"`
}

// ModelDeps is delegate.resolveModel's deps. ConnectedProviders nil means
// JSON null (unknown); a non-nil empty slice means known to be none.
type ModelDeps struct {
	ConnectedProviders         []string `json:"connectedProviders"`
	HasProviderModelsCache     bool     `json:"hasProviderModelsCache"`
	HasConnectedProvidersCache bool     `json:"hasConnectedProvidersCache"`
}

// ModelResolution is the answer. Marshalled, it never carries absent
// fields; Skipped answers marshal as {"skipped":true}.
type ModelResolution struct {
	Model           string         `json:"model,omitempty"`
	Variant         string         `json:"variant,omitempty"`
	FallbackEntry   *FallbackEntry `json:"fallbackEntry,omitempty"`
	MatchedFallback bool           `json:"matchedFallback,omitempty"`
	Rung            string         `json:"rung,omitempty"`
	Skipped         bool           `json:"skipped,omitempty"`
}

// The rungs name the step of MODEL_RESOLUTION.md that decided an answer.
const (
	RungUser                 = "user"
	RungUserFallbackPromoted = "user-fallback-promoted"
	RungCategoryDefault      = "category-default"
	RungUserFallback         = "user-fallback"
	RungFallbackChain        = "fallback-chain"
	RungSystemDefault        = "system-default"
)

// ResolveModel runs the steps of MODEL_RESOLUTION.md; nil means no answer.
// It never modifies in or deps, and the answer shares no memory with them.
func ResolveModel(in ModelInput, deps ModelDeps) *ModelResolution {
	available := nonBlank(in.AvailableModels)
	fallbacks := nonBlank(in.UserFallbackModels)

	if user := strings.TrimSpace(in.UserModel); user != "" {
		return resolveUserModel(user, fallbacks, available)
	}

	if len(available) == 0 && deps.ConnectedProviders == nil &&
		!deps.HasProviderModelsCache && !deps.HasConnectedProvidersCache {
		// Cold caches: the caller waits for its model cache rather than guess.
		return &ModelResolution{Skipped: true}
	}

	// Which providers are connected only matters when no models are known;
	// with models available, the models themselves say what is reachable.
	var connected []string
	if len(available) == 0 && deps.ConnectedProviders != nil {
		connected = nonBlankTrimmed(deps.ConnectedProviders)
	}

	var highModel, highBase string
	if category := strings.TrimSpace(in.CategoryDefaultModel); category != "" {
		if base, isHigh := explicitHighBase(category); isHigh {
			highModel, highBase = category, base
		}
		if answer := resolveCategoryDefault(category, in.IsUserConfiguredCategoryModel, available, connected); answer != nil {
			return answer
		}
	}

	if answer := resolveUserFallbacks(fallbacks, available, connected); answer != nil {
		return answer
	}

	chain := normalizeChain(in.FallbackChain)
	if answer := resolveFallbackChain(chain, available, connected, highModel, highBase); answer != nil {
		return answer
	}

	if system := strings.TrimSpace(in.SystemDefaultModel); system != "" {
		return &ModelResolution{Model: system, Rung: RungSystemDefault}
	}
	return nil
}

// resolveUserModel is step 1: the user's own model wins, unless models are
// known, it matches none of them, and a user fallback does.
func resolveUserModel(user string, fallbacks, available []string) *ModelResolution {
	entry, ok := parseModelEntry(user)
	answer := asGiven(user, entry, ok, RungUser)
	if len(available) == 0 || len(fallbacks) == 0 {
		return answer
	}
	target, hint := user, []string(nil)
	if ok {
		target, hint = entry.base, entry.providerHint()
	}
	if fuzzyMatchModel(target, available, hint) != "" {
		return answer
	}
	for _, fallback := range fallbacks {
		fb, ok := parseModelEntry(fallback)
		if !ok {
			continue
		}
		if match := fuzzyMatchModel(fb.base, available, fb.providerHint()); match != "" {
			return &ModelResolution{Model: match, Variant: fb.variant, MatchedFallback: true, Rung: RungUserFallbackPromoted}
		}
	}
	return answer
}

// resolveCategoryDefault is step 3; nil means go on. category is trimmed
// and non-blank. A user-configured one is parsed as a user model entry (its
// variant kept); otherwise it is opaque: no variant is split off it.
func resolveCategoryDefault(category string, userConfigured bool, available, connected []string) *ModelResolution {
	if userConfigured {
		entry, ok := parseModelEntry(category)
		return asGiven(category, entry, ok, RungCategoryDefault)
	}
	given := &ModelResolution{Model: category, Rung: RungCategoryDefault}
	provider := opaqueModelProvider(category)
	if len(available) == 0 {
		if connected != nil && provider != "" && !containsString(connected, provider) {
			return nil
		}
		return given
	}
	var hint []string
	if provider != "" {
		hint = []string{provider}
	}
	match := fuzzyMatchModel(category, available, hint)
	if match == "" {
		return nil
	}
	if _, isHigh := explicitHighBase(category); isHigh && match != category {
		// Never silently downgrade an explicit -high model to a sibling.
		return given
	}
	return &ModelResolution{Model: match, Rung: RungCategoryDefault}
}

// resolveUserFallbacks is step 4; nil means go on.
func resolveUserFallbacks(fallbacks, available, connected []string) *ModelResolution {
	for _, fallback := range fallbacks {
		entry, ok := parseModelEntry(fallback)
		if !ok {
			continue
		}
		if len(available) == 0 {
			if connected != nil && entry.provider != "" && !containsString(connected, entry.provider) {
				continue
			}
			return &ModelResolution{Model: entry.base, Variant: entry.variant, MatchedFallback: true, Rung: RungUserFallback}
		}
		if match := fuzzyMatchModel(entry.base, available, entry.providerHint()); match != "" {
			return &ModelResolution{Model: match, Variant: entry.variant, MatchedFallback: true, Rung: RungUserFallback}
		}
	}
	return nil
}

// resolveFallbackChain is step 5; nil means go on. highModel and highBase
// are the category default's explicit -high model and its base, or "".
func resolveFallbackChain(chain []FallbackEntry, available, connected []string, highModel, highBase string) *ModelResolution {
	if len(chain) == 0 {
		return nil
	}
	if len(available) == 0 {
		if connected == nil {
			// Nothing is known: trust the chain's first choice.
			first := chain[0]
			if len(first.Providers) == 0 {
				return nil
			}
			return chainAnswer(first, first.Providers[0]+"/"+shapeModelForProvider(first.Providers[0], first.Model), first.Variant)
		}
		for _, entry := range chain {
			for _, provider := range entry.Providers {
				if containsString(connected, provider) {
					return chainAnswer(entry, provider+"/"+shapeModelForProvider(provider, entry.Model), entry.Variant)
				}
			}
		}
		return nil
	}

	answer := func(entry FallbackEntry, match string) *ModelResolution {
		if highModel != "" && entry.Variant == "high" && match == highBase {
			return chainAnswer(entry, highModel, "")
		}
		return chainAnswer(entry, match, entry.Variant)
	}
	for i, entry := range chain {
		for _, provider := range entry.Providers {
			target := provider + "/" + shapeModelForProvider(provider, entry.Model)
			if match := fuzzyMatchModel(target, available, []string{provider}); match != "" {
				return answer(entry, match)
			}
		}
		if match := fuzzyMatchModel(entry.Model, crossProviderPool(chain, i, available), nil); match != "" {
			return answer(entry, match)
		}
	}
	return nil
}

// crossProviderPool is the available models the bare model of chain[i] may
// match: those of providers a later entry with the same model lists are left
// to that later, dedicated rung (and its variant).
func crossProviderPool(chain []FallbackEntry, i int, available []string) []string {
	var reserved []string
	for _, later := range chain[i+1:] {
		if later.Model == chain[i].Model {
			reserved = append(reserved, later.Providers...)
		}
	}
	if len(reserved) == 0 {
		return available
	}
	pool := make([]string, 0, len(available))
	for _, model := range available {
		if !containsString(reserved, modelProvider(model)) {
			pool = append(pool, model)
		}
	}
	return pool
}

func chainAnswer(entry FallbackEntry, model, variant string) *ModelResolution {
	// entry comes from normalizeChain, which copied it: the answer shares
	// no memory with the caller's chain.
	return &ModelResolution{Model: model, Variant: variant, FallbackEntry: &entry, MatchedFallback: true, Rung: RungFallbackChain}
}

// asGiven answers a user-written model as written: base and variant when it
// had a variant, else the trimmed text.
func asGiven(text string, entry modelEntry, ok bool, rung string) *ModelResolution {
	if ok && entry.variant != "" {
		return &ModelResolution{Model: entry.base, Variant: entry.variant, Rung: rung}
	}
	return &ModelResolution{Model: strings.TrimSpace(text), Rung: rung}
}

// normalizeChain trims every field of the chain, drops blank providers and
// entries without a model, so blanks count as absent.
func normalizeChain(chain []FallbackEntry) []FallbackEntry {
	out := make([]FallbackEntry, 0, len(chain))
	for _, entry := range chain {
		model := strings.TrimSpace(entry.Model)
		if model == "" {
			continue
		}
		out = append(out, FallbackEntry{
			Providers: nonBlankTrimmed(entry.Providers),
			Model:     model,
			Variant:   strings.TrimSpace(entry.Variant),
		})
	}
	return out
}

// nonBlank drops blank strings and keeps the rest as given.
func nonBlank(list []string) []string {
	out := make([]string, 0, len(list))
	for _, s := range list {
		if strings.TrimSpace(s) != "" {
			out = append(out, s)
		}
	}
	return out
}

// nonBlankTrimmed trims every string and drops blank ones; the result is
// never nil, so a known-empty list stays known.
func nonBlankTrimmed(list []string) []string {
	out := make([]string, 0, len(list))
	for _, s := range list {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}
