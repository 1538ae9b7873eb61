package handlers

import (
	"bytes"
	"fmt"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	jsonv1 "github.com/go-json-experiment/json/v1"

	"github.com/hookwire/hookwire/core"
	"github.com/hookwire/hookwire/rpc"
	"github.com/hookwire/hookwire/sessions"
)

// Config is initialize's config object (PROTOCOL.md 7) with defaults filled.
//
// Every object type here ends with an Unknown field (`json:",embed"`):
// the decoder puts there the members the type does not define, and
// ParseConfig reports them by path. Unknown is nil once ParseConfig returns.
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
	Unknown            unknownFields `json:",embed"`
}

// unknownFields catches the members of a config object its type does not
// define (name → raw value).
type unknownFields = map[string]jsontext.Value

// RetryConfig is config.delegateRetry.
type RetryConfig struct {
	Enabled  bool           `json:"enabled"`
	Patterns []RetryPattern `json:"patterns"`
	Unknown  unknownFields  `json:",embed"`
}

// RetryPattern is one of config.delegateRetry.patterns: a core.RetryPattern
// as the client writes it.
type RetryPattern struct {
	core.RetryPattern
	Unknown unknownFields `json:",embed"`
}

// TaskSessions is config.taskSessions.
type TaskSessions struct {
	Enabled             bool              `json:"enabled"`
	MaxSessionsPerAgent int               `json:"maxSessionsPerAgent"`
	MaxPendingCalls     int               `json:"maxPendingCalls"`
	Agents              map[string]string `json:"agents"`
	Unknown             unknownFields     `json:",embed"`
}

// PhaseReminder is config.phaseReminder. Text nil means the default text.
type PhaseReminder struct {
	Enabled     bool          `json:"enabled"`
	Text        *string       `json:"text"`
	SkipMarkers []string      `json:"skipMarkers"`
	Unknown     unknownFields `json:",embed"`
}

// DefaultConfig returns the configuration a client that sends no config gets.
func DefaultConfig() Config {
	return Config{
		OrchestratorAgent: core.DefaultOrchestratorAgent,
		TaskTools:         []string{"task"},
		MaxMessageBytes:   rpc.DefaultMaxMessageBytes,
		DelegateRetry:     RetryConfig{Enabled: true, Patterns: []RetryPattern{}},
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

// ParseConfig reads initialize's config over the defaults, with the JSON v2
// decoder that reads every request. Member names match exactly. Unknown
// members are an error naming every one of them, so typos are caught: each
// config object type has an embedded fallback field (Unknown,
// `json:",embed"`) where the decoder puts the members the type does not
// define, and unknownMembers collects them. JSON null leaves a member's
// default in place, as it always has.
func ParseConfig(raw jsontext.Value) (Config, error) {
	cfg := DefaultConfig()
	trimmed := bytes.TrimSpace(raw)
	if len(trimmed) == 0 || string(trimmed) == "null" {
		return cfg, nil
	}
	if trimmed[0] != '{' {
		return cfg, rpc.Errorf(rpc.CodeInvalidParams, "invalid config: config must be an object")
	}
	decodeErr := jsonv2.Unmarshal(trimmed, &cfg, jsonv1.MergeWithLegacySemantics(true))
	if unknown := unknownMembers(reflect.ValueOf(&cfg), "config"); len(unknown) > 0 {
		return cfg, rpc.Errorf(rpc.CodeInvalidParams, "unknown config field(s): %s", strings.Join(unknown, ", "))
	}
	if decodeErr != nil {
		return cfg, rpc.Errorf(rpc.CodeInvalidParams, "invalid config: %s", describeDecodeError(decodeErr, "config"))
	}
	return cfg, cfg.validate()
}

// unknownMembers returns, sorted, the JSON path of every member that the
// embedded fallback fields under v caught (config.phaseReminder.txt,
// config.delegateRetry.patterns[0].hint), and clears those fields. It
// walks v's struct fields by their JSON names, so the Go types stay the
// one list of what config may carry. Maps that are members (not
// fallbacks) are not walked: their keys are free.
func unknownMembers(v reflect.Value, path string) []string {
	var found []string
	var walk func(v reflect.Value, path string)
	walk = func(v reflect.Value, path string) {
		switch v.Kind() {
		case reflect.Pointer:
			if !v.IsNil() {
				walk(v.Elem(), path)
			}
		case reflect.Slice:
			for i := range v.Len() {
				walk(v.Index(i), path+"["+strconv.Itoa(i)+"]")
			}
		case reflect.Struct:
			t := v.Type()
			for i := range t.NumField() {
				f, fv := t.Field(i), v.Field(i)
				name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
				embedded := (f.Anonymous && name == "") || slices.Contains(strings.Split(opts, ","), "embed")
				switch {
				case !f.IsExported() || name == "-":
				case embedded && fv.Kind() == reflect.Map:
					for _, key := range fv.MapKeys() {
						found = append(found, path+"."+key.String())
					}
					fv.SetZero()
				case embedded:
					walk(fv, path)
				default:
					if name == "" {
						name = f.Name
					}
					walk(fv, path+"."+name)
				}
			}
		}
	}
	walk(v, path)
	sort.Strings(found)
	return found
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
	extra := make([]core.RetryPattern, len(c.DelegateRetry.Patterns))
	for i, p := range c.DelegateRetry.Patterns {
		extra[i] = p.RetryPattern
	}
	return core.RetryOptions{Extra: extra, Subagents: c.Subagents}
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
