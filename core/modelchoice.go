package core

import "strings"

// The model decisions of PROTOCOL.md 4.7 and 4.8, as pure functions of
// what the sidecar knows: an agent's agentModels entry, what OpenCode can
// reach (providers.update), the message's model, and which models cool
// down. The handlers gather these, ask, and patch or record the answer.

// RungParentModel is the rung of a runtime fallback to the parent
// session's model (4.8).
const RungParentModel = "parent-model"

// AgentChoice is an agent's config.agentModels entry, as the decisions
// read it.
type AgentChoice struct {
	Model          string
	FallbackModels []string
	FallbackChain  []FallbackEntry
}

// Reach is what OpenCode can reach: the last providers.update.
type Reach struct {
	// Connected is nil when unknown.
	Connected []string
	Available []string
	// Default is OpenCode's default model (systemDefaultModel).
	Default string
}

// ModelRef is a model as a chat.message carries it: provider, model id
// and variant.
type ModelRef struct {
	ProviderID string `json:"providerID"`
	ModelID    string `json:"modelID"`
	Variant    string `json:"variant,omitempty"`
}

// Name is the model as provider/model.
func (m ModelRef) Name() string { return m.ProviderID + "/" + m.ModelID }

// ModelChoice is the model a session's message gets: Model and Variant
// (the message's own when no rung answered with a usable model), the rung
// that answered ("" when none did), and Changed when they differ from the
// message's.
type ModelChoice struct {
	Model, Variant, Rung string
	Changed              bool
}

// Ref is the choice as a message's model; false when Model is not
// provider/model.
func (c ModelChoice) Ref() (ModelRef, bool) {
	provider, id, ok := strings.Cut(c.Model, "/")
	if !ok || strings.TrimSpace(provider) == "" || strings.TrimSpace(id) == "" {
		return ModelRef{}, false
	}
	return ModelRef{ProviderID: provider, ModelID: id, Variant: c.Variant}, true
}

func (r Reach) deps() ModelDeps {
	return ModelDeps{ConnectedProviders: r.Connected, HasProviderModelsCache: true, HasConnectedProvidersCache: true}
}

// ChooseModel is 4.7 for one message of an agent listed in agentModels:
// MODEL_RESOLUTION.md over the agent's entry, with the message's model
// (current, provider/model or "") as the category default. variant is the
// message's variant. A variant belongs to its model: an answer with
// another model and no variant of its own has none. An answer that is not
// provider/model (a bare system default) leaves the message's model, as
// OpenCode could not take it.
func ChooseModel(entry AgentChoice, reach Reach, current, variant string) ModelChoice {
	answer := ResolveModel(ModelInput{
		UserModel:            entry.Model,
		UserFallbackModels:   entry.FallbackModels,
		CategoryDefaultModel: current,
		FallbackChain:        entry.FallbackChain,
		AvailableModels:      reach.Available,
		SystemDefaultModel:   reach.Default,
	}, reach.deps())
	keep := ModelChoice{Model: current, Variant: variant}
	if answer == nil || answer.Skipped {
		return keep
	}
	keep.Rung = answer.Rung
	d := ModelChoice{Model: answer.Model, Variant: answer.Variant, Rung: answer.Rung}
	if _, ok := d.Ref(); !ok {
		return keep
	}
	if d.Variant == "" && answer.Model == current {
		d.Variant = variant
	}
	d.Changed = d.Model != current || d.Variant != variant
	return d
}

// FallbackModel is 4.8's next healthy model for a session instead of
// failed: the agent's agentModels entry (nil: the agent has none)
// resolved over the models that do not cool down (failed and every model
// cooling says cools down left out), else the parent session's model
// (parentModel, provider/model or "") when that one is healthy. It
// returns the model and the rung that gave it; false when none is.
func FallbackModel(entry *AgentChoice, reach Reach, failed, parentModel string, cooling func(model string) bool) (ModelRef, string, bool) {
	healthy := func(model string) bool { return model != failed && !cooling(model) }
	keepHealthy := func(models []string) []string {
		var out []string
		for _, m := range models {
			base := m
			if e, ok := ModelBase(m); ok {
				base = e
			}
			if healthy(base) {
				out = append(out, m)
			}
		}
		return out
	}
	if entry != nil {
		in := ModelInput{
			UserFallbackModels: keepHealthy(entry.FallbackModels),
			FallbackChain:      entry.FallbackChain,
			AvailableModels:    keepHealthy(reach.Available),
		}
		if base, ok := ModelBase(entry.Model); ok && healthy(base) {
			in.UserModel = entry.Model
		}
		if healthy(reach.Default) {
			in.SystemDefaultModel = reach.Default
		}
		if answer := ResolveModel(in, reach.deps()); answer != nil && !answer.Skipped && healthy(answer.Model) {
			if to, ok := ModelBase(answer.Model); ok {
				provider, id, _ := strings.Cut(to, "/")
				return ModelRef{ProviderID: provider, ModelID: id, Variant: answer.Variant}, answer.Rung, true
			}
		}
	}
	if parentModel != "" && healthy(parentModel) {
		provider, id, ok := strings.Cut(parentModel, "/")
		if ok && provider != "" && id != "" {
			return ModelRef{ProviderID: provider, ModelID: id}, RungParentModel, true
		}
	}
	return ModelRef{}, "", false
}

// ModelBase is the provider/model base of an entry such as
// "openai/gpt-5.4 high" (variant dropped); false when it names no provider.
func ModelBase(entry string) (string, bool) {
	entry = strings.TrimSpace(entry)
	provider, rest, ok := strings.Cut(entry, "/")
	if !ok || strings.TrimSpace(provider) == "" {
		return "", false
	}
	if i := strings.LastIndexAny(rest, " ("); i > 0 {
		rest = strings.TrimSpace(rest[:i])
	}
	if strings.TrimSpace(rest) == "" {
		return "", false
	}
	return strings.TrimSpace(provider) + "/" + rest, true
}
