// Package config reads initialize's config (PROTOCOL.md 7): contract.json's
// config members are the one list of what it may carry (config_gen.go,
// generated from them, says where each goes in Config), decoded member by
// member so a bad member costs only itself, with a warning naming its path
// and, for an unknown name, the known one meant (did you mean). It holds
// no behaviour of the hooks: handlers read the result.
package config

import (
	"bytes"
	"fmt"
	"slices"
	"strings"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/hookwire/hookwire/core"
	"github.com/hookwire/hookwire/rpc"
	"github.com/hookwire/hookwire/sessions"
)

// Config is initialize's config object (PROTOCOL.md 7) with defaults filled.
//
// Its members are contract.json's config members (config_gen.go maps each
// to its field, options_doc_test.go holds the two to each other);
// decodeConfig reads those, and any other member is a warning.
type Config struct {
	// OrchestratorAgent is the older way to name the managed agent; ""
	// when not given. It means managedAgents [X] and, unless
	// phaseReminder.agents is given, phaseReminder.agents [X].
	OrchestratorAgent string `json:"orchestratorAgent"`
	// ManagedAgents is nil when not given: the managed set then defaults
	// to PrimaryAgents, else [orchestrator] (managedSet).
	ManagedAgents []string `json:"managedAgents"`
	// PrimaryAgents and Subagents are supplied by the client (the shim
	// reads them from OpenCode); agents.update replaces them later.
	PrimaryAgents      []string      `json:"primaryAgents"`
	Subagents          []string      `json:"subagents"`
	TaskTools          []string      `json:"taskTools"`
	MaxMessageBytes    int64         `json:"maxMessageBytes"`
	DelegateRetry      RetryConfig   `json:"delegateRetry"`
	TaskSessions       TaskSessions  `json:"taskSessions"`
	PhaseReminder      PhaseReminder `json:"phaseReminder"`
	CacheStable        bool          `json:"cacheStable"`
	MaxParents         int           `json:"maxParents"`
	MaxTrackedSessions int           `json:"maxTrackedSessions"`
	// AgentModels are the agents whose model the sidecar chooses
	// (models.go, PROTOCOL.md 4.7).
	AgentModels map[string]AgentModel `json:"agentModels"`
	// RuntimeFallback is provider health and runtime fallback (health.go,
	// PROTOCOL.md 4.8).
	RuntimeFallback RuntimeFallback `json:"runtimeFallback"`
}

// RetryConfig is config.delegateRetry.
type RetryConfig struct {
	Enabled  bool                `json:"enabled"`
	Patterns []core.RetryPattern `json:"patterns"`
}

// TaskSessions is config.taskSessions.
type TaskSessions struct {
	Enabled             bool              `json:"enabled"`
	MaxSessionsPerAgent int               `json:"maxSessionsPerAgent"`
	MaxPendingCalls     int               `json:"maxPendingCalls"`
	Agents              map[string]string `json:"agents"`
}

// PhaseReminder is config.phaseReminder. Text nil means the default text;
// Agents nil means not given (reminderAgents).
type PhaseReminder struct {
	Enabled     bool     `json:"enabled"`
	Text        *string  `json:"text"`
	SkipMarkers []string `json:"skipMarkers"`
	Agents      []string `json:"agents"`
}

// DefaultConfig returns the configuration a client that sends no config gets.
func DefaultConfig() Config {
	return Config{
		PrimaryAgents:   []string{},
		Subagents:       []string{},
		TaskTools:       []string{"task"},
		MaxMessageBytes: rpc.DefaultMaxMessageBytes,
		DelegateRetry:   RetryConfig{Enabled: true, Patterns: []core.RetryPattern{}},
		TaskSessions: TaskSessions{
			Enabled:             true,
			MaxSessionsPerAgent: sessions.DefaultMaxSessionsPerAgent,
			MaxPendingCalls:     sessions.DefaultMaxPendingCalls,
			Agents:              map[string]string{},
		},
		PhaseReminder:      PhaseReminder{Enabled: true, SkipMarkers: []string{core.SkipMarkerDefault}},
		CacheStable:        true,
		MaxParents:         sessions.DefaultMaxParents,
		MaxTrackedSessions: sessions.DefaultMaxTrackedSessions,
		AgentModels:        map[string]AgentModel{},
		RuntimeFallback:    defaultRuntimeFallback(),
	}
}

// Parse reads initialize's config over the defaults. Only a config
// that is not an object (nor absent or null) is an error. Everything else
// applies as far as it can: an unknown member is ignored, a member with a
// bad type or value keeps its default, and each gets a warning naming its
// path (config.phaseReminder.txt), in the order the members came. JSON
// null leaves a member's default in place.
func Parse(raw jsontext.Value) (Config, []string, error) {
	cfg := DefaultConfig()
	trimmed := bytes.TrimSpace(raw)
	if len(trimmed) == 0 || string(trimmed) == "null" {
		return cfg, nil, nil
	}
	if trimmed[0] != '{' {
		return cfg, nil, rpc.Errorf(rpc.CodeInvalidParams, "invalid config: config must be an object")
	}
	w := &warnings{}
	if err := decodeConfig(trimmed, &cfg, w); err != nil {
		// Only JSON that is not valid gets here; the transport has
		// checked every message it dispatches.
		return DefaultConfig(), nil, rpc.Errorf(rpc.CodeInvalidParams, "invalid config: %v", err)
	}
	cfg.validate(w)
	return cfg, w.list(), nil
}

// validate puts back the default of every member whose value is out of
// range, with a warning, and normalises what is matched loosely.
func (c *Config) validate(w *warnings) {
	def := DefaultConfig()
	positive := func(path string, v *int, d int) {
		if *v <= 0 {
			w.add("config.%s must be positive, got %d; using the default %d", path, *v, d)
			*v = d
		}
	}
	if c.MaxMessageBytes <= 0 {
		w.add("config.maxMessageBytes must be positive, got %d; using the default %d", c.MaxMessageBytes, def.MaxMessageBytes)
		c.MaxMessageBytes = def.MaxMessageBytes
	}
	positive("taskSessions.maxSessionsPerAgent", &c.TaskSessions.MaxSessionsPerAgent, def.TaskSessions.MaxSessionsPerAgent)
	positive("taskSessions.maxPendingCalls", &c.TaskSessions.MaxPendingCalls, def.TaskSessions.MaxPendingCalls)
	positive("maxParents", &c.MaxParents, def.MaxParents)
	positive("maxTrackedSessions", &c.MaxTrackedSessions, def.MaxTrackedSessions)

	if c.OrchestratorAgent != "" && strings.TrimSpace(c.OrchestratorAgent) == "" {
		w.add("config.orchestratorAgent must be a non-empty string; ignored")
		c.OrchestratorAgent = ""
	}
	c.ManagedAgents = agentNames(c.ManagedAgents, "managedAgents", w)
	c.PrimaryAgents = agentNames(c.PrimaryAgents, "primaryAgents", w)
	c.Subagents = agentNames(c.Subagents, "subagents", w)
	c.PhaseReminder.Agents = agentNames(c.PhaseReminder.Agents, "phaseReminder.agents", w)
	if c.OrchestratorAgent != "" && c.ManagedAgents != nil {
		if c.PhaseReminder.Agents == nil {
			w.add("config.orchestratorAgent and config.managedAgents are both given: managedAgents wins for managed sessions; orchestratorAgent still names the phase reminder's agent")
		} else {
			w.add("config.orchestratorAgent is ignored: config.managedAgents and config.phaseReminder.agents are given")
		}
	}

	patterns := c.DelegateRetry.Patterns[:0]
	for i, p := range c.DelegateRetry.Patterns {
		if p.Pattern == "" || p.ErrorType == "" {
			w.add("config.delegateRetry.patterns[%d] needs a non-empty pattern and errorType; ignored", i)
			continue
		}
		if p.Flavor != "" && p.Flavor != core.FlavorDelegate && p.Flavor != core.FlavorNative {
			w.add(`config.delegateRetry.patterns[%d].flavor must be "delegate" or "native", got %s; using the default "delegate"`,
				i, quoteShort(string(p.Flavor)))
			p.Flavor = ""
		}
		patterns = append(patterns, p)
	}
	c.DelegateRetry.Patterns = patterns
	c.validateAgentModels(w)
	c.RuntimeFallback.validate(w)
	for i, t := range c.TaskTools {
		c.TaskTools[i] = strings.ToLower(t)
	}
}

// AgentNames drops the blank names of a list of agents the client sent
// (agents.update), quietly: nil stays nil (not given).
func AgentNames(names []string) []string { return agentNames(names, "", &warnings{}) }

// agentNames drops the blank names of a list of agents, with a warning
// for each. Names are kept exactly as given: they are case-sensitive.
func agentNames(names []string, path string, w *warnings) []string {
	if names == nil {
		return nil
	}
	kept := make([]string, 0, len(names))
	for i, n := range names {
		if strings.TrimSpace(n) == "" {
			w.add("config.%s[%d] must be a non-empty agent name; ignored", path, i)
			continue
		}
		kept = append(kept, n)
	}
	return kept
}

// managedSet is the agents whose sessions are managed (PROTOCOL.md 4):
// managedAgents when given, else [orchestratorAgent] when given, else the
// primary agents the client learned, else [orchestrator].
func (c *Config) ManagedSet() []string {
	switch {
	case c.ManagedAgents != nil:
		return c.ManagedAgents
	case c.OrchestratorAgent != "":
		return []string{c.OrchestratorAgent}
	case len(c.PrimaryAgents) > 0:
		return c.PrimaryAgents
	}
	return []string{core.DefaultOrchestratorAgent}
}

// reminderAgents is the agents the phase reminder is for:
// phaseReminder.agents when given, else [orchestratorAgent] when given,
// else [orchestrator].
func (c *Config) ReminderAgents() []string {
	switch {
	case c.PhaseReminder.Agents != nil:
		return c.PhaseReminder.Agents
	case c.OrchestratorAgent != "":
		return []string{c.OrchestratorAgent}
	}
	return []string{core.DefaultOrchestratorAgent}
}

// isManagedAgent reports whether agent's sessions are managed.
func (c *Config) IsManagedAgent(agent string) bool {
	return agent != "" && slices.Contains(c.ManagedSet(), agent)
}

// reminderConfig is the core view of the phase reminder settings.
func (c *Config) ReminderConfig() core.ReminderConfig {
	text := ""
	if c.PhaseReminder.Text != nil {
		text = *c.PhaseReminder.Text
	}
	return core.ReminderConfig{
		Enabled:     c.PhaseReminder.Enabled,
		Text:        text,
		SkipMarkers: c.PhaseReminder.SkipMarkers,
		Agents:      c.ReminderAgents(),
	}
}

func (c *Config) RetryOptions() core.RetryOptions {
	return core.RetryOptions{Extra: c.DelegateRetry.Patterns, Subagents: c.Subagents}
}

// RetryOptionsFor is RetryOptions for a call of tool (its core.Delegation row).
func (c *Config) RetryOptionsFor(tool string) core.RetryOptions {
	o := c.RetryOptions()
	o.Tool = core.DelegationFor(tool)
	return o
}

// ResumeArg is the resume argument the Resumable Sessions block teaches:
// that of the first configured task tool (1.x task_id by default).
func (c *Config) ResumeArg() string {
	if len(c.TaskTools) == 0 {
		return core.TaskDelegation.ResumeArg
	}
	return core.DelegationFor(c.TaskTools[0]).ResumeArg
}

func (c *Config) StoreConfig() sessions.Config {
	return sessions.Config{
		MaxSessionsPerAgent: c.TaskSessions.MaxSessionsPerAgent,
		MaxPendingCalls:     c.TaskSessions.MaxPendingCalls,
		MaxParents:          c.MaxParents,
		MaxTrackedSessions:  c.MaxTrackedSessions,
		AliasOverrides:      c.TaskSessions.Agents,
	}
}

func (c *Config) IsTaskTool(tool string) bool {
	return slices.Contains(c.TaskTools, strings.ToLower(tool))
}

// maxWarnings bounds the warnings one config can produce: a config with
// thousands of unknown members must not make initialize's result huge.
const maxWarnings = 32

// warnings collects config warnings, at most maxWarnings of them.
type warnings struct {
	items   []string
	dropped int
}

func (w *warnings) add(format string, args ...any) {
	if len(w.items) >= maxWarnings {
		w.dropped++
		return
	}
	w.items = append(w.items, fmt.Sprintf(format, args...))
}

func (w *warnings) list() []string {
	if w.dropped > 0 {
		noun := "warnings"
		if w.dropped == 1 {
			noun = "warning"
		}
		return append(w.items, fmt.Sprintf("config: %d more %s not shown", w.dropped, noun))
	}
	return w.items
}

// defaultText is how a warning names a member's default: its JSON when
// short, else nothing.
func defaultText(v any) string {
	b, err := jsonv2.Marshal(v, jsonv2.FormatNilSliceAsNull(true), jsonv2.FormatNilMapAsNull(true))
	if err != nil || string(b) == "null" || len(b) > 40 {
		return "the default"
	}
	return "the default " + string(b)
}
