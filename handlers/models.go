package handlers

import (
	"context"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/hookwire/hookwire/core"
	"github.com/hookwire/hookwire/sessions"
)

// Model fallback for agents (PROTOCOL.md 4.7): config.agentModels names the
// agents whose model the sidecar chooses; providers.update says what
// OpenCode can reach; chat.message runs MODEL_RESOLUTION.md for such an
// agent's session and patches the message's model when the answer differs.

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

// chatMessageModel is what modelPatch needs of a chat.message.
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

// modelPatch is the patch of one chat.message of an agent listed in
// agentModels for the model core chooses (4.7, through s.models), which it
// records (no ops: the model stays, also when the message has no place
// for one).
func (r *modelRouter) modelPatch(ctx context.Context, c chatMessageModel) []Op {
	entry, listed := r.cfg.AgentModels[c.agent]
	if !listed || c.session == "" {
		return nil
	}
	current, variant := "", c.inputVariant
	if c.ok {
		current = c.current.Name()
		if c.current.Variant != "" {
			variant = c.current.Variant
		}
	}
	choice, ok := r.models.choose(entry.Choice(), current, variant)
	if !ok {
		r.log.Info().Str("session", c.session).Str("agent", c.agent).Msg("model left: no providers.update yet")
		return nil
	}
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
	r.recordDecision(ctx, c, d)
	return ops
}

// recordDecision keeps d for the session, counts it, and logs it (model
// names only).
func (r *modelRouter) recordDecision(ctx context.Context, c chatMessageModel, d sessions.ModelDecision) {
	r.countDecision(c, d)
	if d.Model != "" {
		r.store.Tracked().SetModelDecision(ctx, c.session, d)
	}
}

// countDecision counts d and logs it (model names only).
func (r *modelRouter) countDecision(c chatMessageModel, d sessions.ModelDecision) {
	rung := r.models.count(d)
	from := ""
	if c.ok {
		from = c.current.Name()
	}
	r.log.Info().Str("session", c.session).Str("agent", c.agent).Str("from", from).
		Str("model", d.Model).Str("variant", d.Variant).Str("rung", rung).Bool("changed", d.Changed).
		Msg("model decision")
}

func (r *modelRouter) modelStatus() statusModels { return r.models.status(r.healthStatus()) }
