package handlers

import (
	"context"
	"strings"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/hookwire/hookwire/core"
	"github.com/hookwire/hookwire/sessions"
)

// Model fallback for agents (PROTOCOL.md 4.7): config.agentModels names the
// agents whose model the sidecar chooses; providers.update says what
// OpenCode can reach; chat.message runs MODEL_RESOLUTION.md for such an
// agent's session and patches the message's model when the answer differs.

// reach is what the last providers.update said, for core's decisions.
func (m *modelState) reach() core.Reach {
	return core.Reach{Connected: m.connected, Available: m.available, Default: m.defaultModel}
}

// modelState is what the sidecar knows for model decisions: the last
// providers.update, and counts for status. Dispatch serialises all access.
type modelState struct {
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

// providersUpdate takes what OpenCode can reach now: it replaces the last
// update whole. Blank strings, and strings over the store's model cap
// (a decision could not be kept), are dropped. Sent as a notification; a
// request gets result null.
func (s *Server) providersUpdate(_ context.Context, p *providersUpdateParams) error {
	m := &s.models
	m.received = true
	m.connected = nil
	if p.ConnectedProviders != nil {
		m.connected = usableModelNames(p.ConnectedProviders)
	}
	m.available = usableModelNames(p.AvailableModels)
	m.defaultModel = ""
	if d := strings.TrimSpace(p.DefaultModel); len(d) <= sessions.MaxModelBytes {
		m.defaultModel = d
	}
	s.log.Info().Int("connectedProviders", len(m.connected)).Int("availableModels", len(m.available)).
		Str("defaultModel", m.defaultModel).Msg("providers updated")
	return nil
}

// usableModelNames keeps the non-blank names within the model cap, trimmed.
func usableModelNames(names []string) []string {
	out := make([]string, 0, len(names))
	for _, n := range names {
		if n = strings.TrimSpace(n); n != "" && len(n) <= sessions.MaxModelBytes {
			out = append(out, n)
		}
	}
	return out
}

// parseMessageModel reads raw leniently: anything that is not an object
// with string providerID and modelID is no model.
func parseMessageModel(raw jsontext.Value) (core.ModelRef, bool) {
	if raw.Kind() != '{' {
		return core.ModelRef{}, false
	}
	var v struct {
		ProviderID jsontext.Value `json:"providerID"`
		ModelID    jsontext.Value `json:"modelID"`
		Variant    jsontext.Value `json:"variant"`
	}
	if jsonv2.Unmarshal(raw, &v) != nil {
		return core.ModelRef{}, false
	}
	m := core.ModelRef{ProviderID: rawString(v.ProviderID), ModelID: rawString(v.ModelID), Variant: rawString(v.Variant)}
	return m, m.ProviderID != "" && m.ModelID != ""
}

// chatMessageModel is what decideModel needs of a chat.message.
type chatMessageModel struct {
	session, agent string
	// current is the message's model (output.message.model, else
	// input.model); ok false when neither is one.
	current core.ModelRef
	ok      bool
	// variant is the message's variant when its model does not carry one
	// (input.variant).
	inputVariant string
	// onMessage: output.message.model exists, so the patch replaces it;
	// hasMessage: output.message is an object, so the patch may add it.
	onMessage, hasMessage bool
}

// decideModel asks core for the model of 4.7 for one chat.message of an
// agent listed in agentModels, records it and returns the patch ops
// (none: the model stays, also when the message has no place for one).
func (s *Server) decideModel(c chatMessageModel) []Op {
	entry, listed := s.cfg.AgentModels[c.agent]
	if !listed || c.session == "" {
		return nil
	}
	m := &s.models
	if !m.received {
		m.waiting++
		s.log.Info().Str("session", c.session).Str("agent", c.agent).Msg("model left: no providers.update yet")
		return nil
	}
	current, variant := "", c.inputVariant
	if c.ok {
		current = c.current.Name()
		if c.current.Variant != "" {
			variant = c.current.Variant
		}
	}
	choice := core.ChooseModel(entry.Choice(), m.reach(), current, variant)
	var ops []Op
	if to, ok := choice.Ref(); ok && choice.Changed {
		switch {
		case c.onMessage:
			ops = append(ops, Op{Op: "replace", Path: "/message/model", Value: to})
		case c.hasMessage:
			ops = append(ops, Op{Op: "add", Path: "/message/model", Value: to})
		}
	}
	d := sessions.ModelDecision{Model: choice.Model, Variant: choice.Variant, Rung: choice.Rung}
	if len(ops) == 0 {
		d.Model, d.Variant = current, variant
	}
	d.Changed = len(ops) > 0
	s.recordDecision(c, d)
	return ops
}

// recordDecision keeps d for the session, counts it, and logs it (model
// names only).
func (s *Server) recordDecision(c chatMessageModel, d sessions.ModelDecision) {
	s.countDecision(c, d)
	if d.Model != "" {
		s.store.SetModelDecision(c.session, d)
	}
}

// countDecision counts d and logs it (model names only).
func (s *Server) countDecision(c chatMessageModel, d sessions.ModelDecision) {
	m := &s.models
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
	from := ""
	if c.ok {
		from = c.current.Name()
	}
	s.log.Info().Str("session", c.session).Str("agent", c.agent).Str("from", from).
		Str("model", d.Model).Str("variant", d.Variant).Str("rung", rung).Bool("changed", d.Changed).
		Msg("model decision")
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

func (s *Server) modelStatus() statusModels {
	m := &s.models
	byRung := make(map[string]uint64, len(m.byRung))
	for k, v := range m.byRung {
		byRung[k] = v
	}
	return statusModels{
		Decisions: m.decisions, Changed: m.changed, ByRung: byRung, WaitingForProviders: m.waiting,
		Providers: statusProviders{Received: m.received, Connected: len(m.connected), Available: len(m.available), DefaultModel: m.defaultModel},
		Switches:  m.switches,
		Health:    s.healthStatus(),
	}
}
