package handlers

import (
	"maps"

	"github.com/hookwire/hookwire/core"
	"github.com/hookwire/hookwire/sessions"
)

// modelChoice is the state of model choice (PROTOCOL.md 4.7, 4.8) the
// Server holds: what the last providers.update said, the counts status
// reports, and OpenCode 2's subagent calls waiting for their
// execute.after. The choices themselves are core's (ChooseModel,
// FallbackModel) over what it holds; the handlers gather their other
// inputs from the config and the store. Dispatch serialises all access.
type modelChoice struct {
	received  bool
	connected []string // nil: unknown
	available []string
	// defaultModel is OpenCode's default model (systemDefaultModel).
	defaultModel string

	decisions, changed, waiting uint64
	// switches counts the runtime fallbacks (health.go).
	switches uint64
	byRung   map[string]uint64

	// pending: OpenCode 2's subagent calls by callID, the model each
	// execute.before decided (subagent_model.go).
	pending map[string]pendingModel
}

// rungNone counts the decisions where no rung answered (status).
const rungNone = "none"

// reach is what the last providers.update said, for core's choices.
func (m *modelChoice) reach() core.Reach {
	return core.Reach{Connected: m.connected, Available: m.available, Default: m.defaultModel}
}

// setProviders replaces what OpenCode can reach (providers.update).
func (m *modelChoice) setProviders(connected, available []string, defaultModel string) {
	m.received, m.connected, m.available, m.defaultModel = true, connected, available, defaultModel
}

// choose is core.ChooseModel over what OpenCode can reach; ok false (and
// counted as waiting) before the first providers.update, when the model
// is left.
func (m *modelChoice) choose(entry core.AgentChoice, current, variant string) (core.ModelChoice, bool) {
	if !m.received {
		m.waiting++
		return core.ModelChoice{}, false
	}
	return core.ChooseModel(entry, m.reach(), current, variant), true
}

// fallback is core.FallbackModel over what OpenCode can reach.
func (m *modelChoice) fallback(entry *core.AgentChoice, failed, parentModel string, cooling func(model string) bool) (core.ModelRef, string, bool) {
	return core.FallbackModel(entry, m.reach(), failed, parentModel, cooling)
}

// count counts d and returns the rung it counts under.
func (m *modelChoice) count(d sessions.ModelDecision) string {
	m.decisions++
	if d.Changed {
		m.changed++
	}
	rung := d.Rung
	if rung == "" {
		rung = rungNone
	}
	if m.byRung == nil {
		m.byRung = map[string]uint64{}
	}
	m.byRung[rung]++
	return rung
}

// switched counts a runtime fallback.
func (m *modelChoice) switched() { m.switches++ }

// notePending keeps what a subagent call's execute.before decided.
func (m *modelChoice) notePending(callID string, p pendingModel) {
	if callID == "" {
		return
	}
	if m.pending == nil || len(m.pending) >= maxPendingModels {
		m.pending = map[string]pendingModel{}
	}
	m.pending[callID] = p
}

// takePending returns and forgets what callID's execute.before decided.
func (m *modelChoice) takePending(callID string) (pendingModel, bool) {
	p, ok := m.pending[callID]
	delete(m.pending, callID)
	return p, ok
}

// statusModels is status.models: the model decisions made since start.
type statusModels struct {
	Decisions uint64 `json:"decisions"`
	Changed   uint64 `json:"changed"`
	// ByRung counts decisions by the rung that answered ("none": no rung
	// did and the message's model was kept).
	ByRung map[string]uint64 `json:"byRung"`
	// WaitingForProviders counts chat.messages of listed agents that came
	// before the first providers.update (their model was left).
	WaitingForProviders uint64          `json:"waitingForProviders"`
	Providers           statusProviders `json:"providers"`
	// Switches counts the sessions moved off a failing or cooling model (4.8).
	Switches uint64 `json:"switches"`
	// Health is every model's health the store keeps (4.8).
	Health []statusHealth `json:"health"`
}

// statusProviders is what the last providers.update said, in counts.
type statusProviders struct {
	Received     bool   `json:"received"`
	Connected    int    `json:"connected"`
	Available    int    `json:"available"`
	DefaultModel string `json:"defaultModel,omitempty"`
}

// status is status.models, with health the store's.
func (m *modelChoice) status(health []statusHealth) statusModels {
	byRung := make(map[string]uint64, len(m.byRung))
	maps.Copy(byRung, m.byRung)
	return statusModels{
		Decisions: m.decisions, Changed: m.changed, ByRung: byRung, WaitingForProviders: m.waiting,
		Providers: statusProviders{Received: m.received, Connected: len(m.connected), Available: len(m.available), DefaultModel: m.defaultModel},
		Switches:  m.switches,
		Health:    health,
	}
}
