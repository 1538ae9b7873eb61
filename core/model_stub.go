package core

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
// JSON null (unknown).
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

// ResolveModel runs the steps of MODEL_RESOLUTION.md; nil means no answer.
func ResolveModel(in ModelInput, deps ModelDeps) *ModelResolution { panic("todo") }
