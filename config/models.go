package config

import (
	"maps"
	"slices"
	"strings"

	"github.com/hookwire/hookwire/core"
)

// Model fallback for agents (PROTOCOL.md 4.7): config.agentModels names the
// agents whose model the sidecar chooses.

// AgentModel is one entry of config.agentModels.
type AgentModel struct {
	// Model is an explicit override, answered as given (rung user).
	Model          string               `json:"model"`
	FallbackModels []string             `json:"fallbackModels"`
	FallbackChain  []core.FallbackEntry `json:"fallbackChain"`
	// RuntimeFallback false turns runtime fallback (4.8) off for the agent.
	RuntimeFallback *bool `json:"runtimeFallback"`
}

// validateAgentModels drops what config.agentModels cannot use, with a
// warning each: a blank agent name, blank fallback models, chain entries
// without a model.
func (c *Config) validateAgentModels(w *warnings) {
	// In the order of the names, so the same config gives the same warnings.
	for _, name := range slices.Sorted(maps.Keys(c.AgentModels)) {
		entry := c.AgentModels[name]
		path := "config.agentModels." + displayName(name)
		if strings.TrimSpace(name) == "" {
			w.add("config.agentModels: %s is not an agent name; ignored", quoteShort(name))
			delete(c.AgentModels, name)
			continue
		}
		models := entry.FallbackModels[:0:0]
		for i, m := range entry.FallbackModels {
			if strings.TrimSpace(m) == "" {
				w.add("%s.fallbackModels[%d] must be a non-empty model; ignored", path, i)
				continue
			}
			models = append(models, m)
		}
		entry.FallbackModels = models
		chain := entry.FallbackChain[:0:0]
		for i, e := range entry.FallbackChain {
			if strings.TrimSpace(e.Model) == "" {
				w.add("%s.fallbackChain[%d] needs a non-empty model; ignored", path, i)
				continue
			}
			chain = append(chain, e)
		}
		entry.FallbackChain = chain
		c.AgentModels[name] = entry
	}
}

// Choice is the entry as core's model decisions read it.
func (a AgentModel) Choice() core.AgentChoice {
	return core.AgentChoice{Model: a.Model, FallbackModels: a.FallbackModels, FallbackChain: a.FallbackChain}
}
