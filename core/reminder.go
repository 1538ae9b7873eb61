package core

import (
	"slices"
	"strings"
)

// SkipMarkerDefault marks a user message the plugins wrote themselves; such
// a message gets no reminder.
const SkipMarkerDefault = "<!-- SLIM_INTERNAL_INITIATOR -->"

// DefaultOrchestratorAgent is the agent that managed sessions and the phase
// reminder are for when the config names none (config.managedAgents,
// config.phaseReminder.agents).
const DefaultOrchestratorAgent = "orchestrator"

// DefaultPhaseReminder is the reminder text when config.phaseReminder.text
// is not set.
const DefaultPhaseReminder = "<internal_reminder>\n" +
	"Work in phases: understand the request; plan, and delegate each piece to the specialist subagent that fits it; " +
	"verify what comes back before you rely on it; then report the result. " +
	"To continue a thread a subagent already started, resume its session by passing its alias from Resumable Sessions as task_id; " +
	"anything new gets a fresh task.\n" +
	"</internal_reminder>"

// ReminderConfig is config.phaseReminder with its agents resolved.
//
// SkipMarkers nil means the default ([SkipMarkerDefault]); a non-nil empty
// slice means none (config `"skipMarkers": []`). Empty markers are ignored,
// since every text contains "". Agents nil means
// [DefaultOrchestratorAgent]; a non-nil empty slice means no agent (only
// messages without an agent get the reminder).
type ReminderConfig struct {
	Enabled     bool
	Text        string // "" means DefaultPhaseReminder
	SkipMarkers []string
	Agents      []string
}

// ReminderText is the text of the reminder part.
func (cfg ReminderConfig) ReminderText() string {
	if cfg.Text == "" {
		return DefaultPhaseReminder
	}
	return cfg.Text
}

func (cfg ReminderConfig) skipMarkers() []string {
	if cfg.SkipMarkers == nil {
		return []string{SkipMarkerDefault}
	}
	return cfg.SkipMarkers
}

// ForAgent reports whether the reminder is for agent's messages. A
// message without an agent ("") is, as it always was (PROTOCOL.md 4.3).
func (cfg ReminderConfig) ForAgent(agent string) bool {
	if agent == "" {
		return true
	}
	if cfg.Agents == nil {
		return agent == DefaultOrchestratorAgent
	}
	return slices.Contains(cfg.Agents, agent)
}

// WantsReminder applies the per-message skip rules of 4.3 to one user
// message (agent, text part, skip markers, reminder already present). It is
// false for a disabled config and for messages whose role is not "user".
func WantsReminder(m Message, cfg ReminderConfig) bool {
	if !cfg.Enabled || m.Role != "user" {
		return false
	}
	if !cfg.ForAgent(m.Agent) {
		return false
	}
	first := -1
	for i, p := range m.Parts {
		if p.Type == "text" && p.HasText {
			first = i
			break
		}
	}
	if first < 0 {
		return false
	}
	for _, marker := range cfg.skipMarkers() {
		if marker != "" && strings.Contains(m.Parts[first].Text, marker) {
			return false
		}
	}
	reminder := cfg.ReminderText()
	for _, p := range m.Parts {
		if p.HasText && strings.Contains(p.Text, reminder) {
			return false
		}
	}
	return true
}

// ReminderTarget returns the index of the message that gets the reminder
// part under 4.3, or -1: only the last user message is considered, and it
// gets the reminder when it wants it (WantsReminder); when it does not, no
// earlier one takes its place. at(i) reports whether message i of n is a
// user message and, when it is, whether it wants the reminder.
func ReminderTarget(n int, at func(i int) (user, wants bool)) int {
	for i := n - 1; i >= 0; i-- {
		if user, wants := at(i); user {
			if wants {
				return i
			}
			return -1
		}
	}
	return -1
}
