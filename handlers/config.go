package handlers

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/hookwire/hookwire/core"
	"github.com/hookwire/hookwire/rpc"
	"github.com/hookwire/hookwire/sessions"
)

// Config is initialize's config object (PROTOCOL.md 7) with defaults filled.
type Config struct {
	OrchestratorAgent  string        `json:"orchestratorAgent"`
	TaskTools          []string      `json:"taskTools"`
	MaxMessageBytes    int64         `json:"maxMessageBytes"`
	DelegateRetry      RetryConfig   `json:"delegateRetry"`
	TaskSessions       TaskSessions  `json:"taskSessions"`
	PhaseReminder      PhaseReminder `json:"phaseReminder"`
	CacheStable        bool          `json:"cacheStable"`
	Subagents          []string      `json:"subagents"`
	MaxParents         int           `json:"maxParents"`
	MaxTrackedSessions int           `json:"maxTrackedSessions"`
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

// PhaseReminder is config.phaseReminder. Text nil means the default text.
type PhaseReminder struct {
	Enabled     bool     `json:"enabled"`
	Text        *string  `json:"text"`
	SkipMarkers []string `json:"skipMarkers"`
}

// DefaultConfig returns the configuration a client that sends no config gets.
func DefaultConfig() Config {
	return Config{
		OrchestratorAgent: core.DefaultOrchestratorAgent,
		TaskTools:         []string{"task"},
		MaxMessageBytes:   rpc.DefaultMaxMessageBytes,
		DelegateRetry:     RetryConfig{Enabled: true, Patterns: []core.RetryPattern{}},
		TaskSessions: TaskSessions{
			Enabled:             true,
			MaxSessionsPerAgent: sessions.DefaultMaxSessionsPerAgent,
			MaxPendingCalls:     sessions.DefaultMaxPendingCalls,
			Agents:              map[string]string{},
		},
		PhaseReminder:      PhaseReminder{Enabled: true, SkipMarkers: []string{core.SkipMarkerDefault}},
		Subagents:          []string{},
		MaxParents:         sessions.DefaultMaxParents,
		MaxTrackedSessions: sessions.DefaultMaxTrackedSessions,
	}
}

// knownConfigFields lists, per object path, the fields config may carry;
// "*" marks a map whose keys are free.
var knownConfigFields = map[string][]string{
	"config": {"orchestratorAgent", "taskTools", "maxMessageBytes", "delegateRetry", "taskSessions",
		"phaseReminder", "cacheStable", "subagents", "maxParents", "maxTrackedSessions"},
	"config.delegateRetry":            {"enabled", "patterns"},
	"config.delegateRetry.patterns[]": {"pattern", "errorType", "fixHint", "flavor"},
	"config.taskSessions":             {"enabled", "maxSessionsPerAgent", "maxPendingCalls", "agents"},
	"config.phaseReminder":            {"enabled", "text", "skipMarkers"},
}

// ParseConfig reads initialize's config over the defaults. Unknown fields
// are an error naming every one of them, so typos are caught.
func ParseConfig(raw json.RawMessage) (Config, error) {
	cfg := DefaultConfig()
	if len(bytes.TrimSpace(raw)) == 0 || string(bytes.TrimSpace(raw)) == "null" {
		return cfg, nil
	}
	var unknown []string
	if err := findUnknown(raw, "config", &unknown); err != nil {
		return cfg, err
	}
	if len(unknown) > 0 {
		sort.Strings(unknown)
		return cfg, rpc.Errorf(rpc.CodeInvalidParams, "unknown config field(s): %s", strings.Join(unknown, ", "))
	}
	if err := json.Unmarshal(raw, &cfg); err != nil {
		return cfg, rpc.Errorf(rpc.CodeInvalidParams, "invalid config: %s", describeJSONError(err, "config"))
	}
	return cfg, cfg.validate()
}

func findUnknown(raw json.RawMessage, path string, unknown *[]string) error {
	known, ok := knownConfigFields[path]
	if !ok {
		return nil
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(raw, &obj); err != nil {
		if path == "config" {
			return rpc.Errorf(rpc.CodeInvalidParams, "invalid config: config must be an object")
		}
		return nil // the typed decode names the wrong type
	}
	for k, v := range obj {
		if !slices.Contains(known, k) {
			*unknown = append(*unknown, path+"."+k)
			continue
		}
		child := path + "." + k
		if _, nested := knownConfigFields[child+"[]"]; nested {
			var items []json.RawMessage
			if json.Unmarshal(v, &items) == nil {
				for i, item := range items {
					var sub []string
					if err := findUnknown(item, child+"[]", &sub); err != nil {
						return err
					}
					for _, s := range sub {
						*unknown = append(*unknown, strings.Replace(s, child+"[]", fmt.Sprintf("%s[%d]", child, i), 1))
					}
				}
			}
			continue
		}
		if err := findUnknown(v, child, unknown); err != nil {
			return err
		}
	}
	return nil
}

func (c *Config) validate() error {
	bad := func(field, why string) error {
		return rpc.Errorf(rpc.CodeInvalidParams, "invalid config: config.%s %s", field, why)
	}
	switch {
	case strings.TrimSpace(c.OrchestratorAgent) == "":
		return bad("orchestratorAgent", "must be a non-empty string")
	case c.MaxMessageBytes <= 0:
		return bad("maxMessageBytes", "must be positive")
	case c.TaskSessions.MaxSessionsPerAgent <= 0:
		return bad("taskSessions.maxSessionsPerAgent", "must be positive")
	case c.TaskSessions.MaxPendingCalls <= 0:
		return bad("taskSessions.maxPendingCalls", "must be positive")
	case c.MaxParents <= 0:
		return bad("maxParents", "must be positive")
	case c.MaxTrackedSessions <= 0:
		return bad("maxTrackedSessions", "must be positive")
	}
	for i, p := range c.DelegateRetry.Patterns {
		if p.Pattern == "" || p.ErrorType == "" {
			return bad(fmt.Sprintf("delegateRetry.patterns[%d]", i), "needs a non-empty pattern and errorType")
		}
		if p.Flavor != "" && p.Flavor != core.FlavorDelegate && p.Flavor != core.FlavorNative {
			return bad(fmt.Sprintf("delegateRetry.patterns[%d].flavor", i), `must be "delegate" or "native"`)
		}
	}
	if c.TaskTools == nil {
		c.TaskTools = []string{}
	}
	for i, t := range c.TaskTools {
		c.TaskTools[i] = strings.ToLower(t)
	}
	return nil
}

// reminderConfig is the core view of the phase reminder settings.
func (c *Config) reminderConfig() core.ReminderConfig {
	text := ""
	if c.PhaseReminder.Text != nil {
		text = *c.PhaseReminder.Text
	}
	return core.ReminderConfig{
		Enabled:           c.PhaseReminder.Enabled,
		Text:              text,
		SkipMarkers:       c.PhaseReminder.SkipMarkers,
		OrchestratorAgent: c.OrchestratorAgent,
	}
}

func (c *Config) retryOptions() core.RetryOptions {
	return core.RetryOptions{Extra: c.DelegateRetry.Patterns, Subagents: c.Subagents}
}

func (c *Config) storeConfig() sessions.Config {
	return sessions.Config{
		MaxSessionsPerAgent: c.TaskSessions.MaxSessionsPerAgent,
		MaxPendingCalls:     c.TaskSessions.MaxPendingCalls,
		MaxParents:          c.MaxParents,
		MaxTrackedSessions:  c.MaxTrackedSessions,
		AliasOverrides:      c.TaskSessions.Agents,
	}
}

func (c *Config) isTaskTool(tool string) bool {
	return slices.Contains(c.TaskTools, strings.ToLower(tool))
}
