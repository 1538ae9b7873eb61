package config

import (
	"time"

	"github.com/hookwire/hookwire/core"
)

// Runtime model fallback (PROTOCOL.md 4.8): its settings.

// RuntimeFallback is config.runtimeFallback.
type RuntimeFallback struct {
	Enabled            bool    `json:"enabled"`
	CooldownSeconds    float64 `json:"cooldownSeconds"`
	WindowSeconds      float64 `json:"windowSeconds"`
	MaxCooldownSeconds float64 `json:"maxCooldownSeconds"`
}

// Defaults of config.runtimeFallback.
func defaultRuntimeFallback() RuntimeFallback {
	return RuntimeFallback{
		Enabled:            true,
		CooldownSeconds:    core.DefaultCooldown.Seconds(),
		WindowSeconds:      core.DefaultHealthWindow.Seconds(),
		MaxCooldownSeconds: core.DefaultMaxCooldown.Seconds(),
	}
}

// validate puts back the default of a duration that is not positive.
func (r *RuntimeFallback) validate(w *warnings) {
	def := defaultRuntimeFallback()
	for _, d := range []struct {
		name string
		v    *float64
		def  float64
	}{
		{"cooldownSeconds", &r.CooldownSeconds, def.CooldownSeconds},
		{"windowSeconds", &r.WindowSeconds, def.WindowSeconds},
		{"maxCooldownSeconds", &r.MaxCooldownSeconds, def.MaxCooldownSeconds},
	} {
		if !(*d.v > 0) || *d.v > 7*24*3600 {
			w.add("config.runtimeFallback.%s must be a number of seconds between 0 and a week, got %g; using the default %g", d.name, *d.v, d.def)
			*d.v = d.def
		}
	}
}

// Policy is the health policy these settings give (core, PROTOCOL.md 4.8).
func (r RuntimeFallback) Policy() core.HealthPolicy {
	sec := func(v float64) time.Duration { return time.Duration(v * float64(time.Second)) }
	return core.HealthPolicy{Cooldown: sec(r.CooldownSeconds), Window: sec(r.WindowSeconds), MaxCooldown: sec(r.MaxCooldownSeconds)}
}

// FallbackEnabled reports whether runtime fallback (4.8) is on for agent:
// on in config.runtimeFallback, and not turned off by the agent's
// agentModels entry.
func (c *Config) FallbackEnabled(agent string) bool {
	if !c.RuntimeFallback.Enabled {
		return false
	}
	if e, ok := c.AgentModels[agent]; ok && e.RuntimeFallback != nil && !*e.RuntimeFallback {
		return false
	}
	return true
}
