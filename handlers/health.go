package handlers

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/hookwire/hookwire/core"
	"github.com/hookwire/hookwire/sessions"
)

// Runtime model fallback (PROTOCOL.md 4.8): model.failed takes what
// OpenCode reported about a failed model call, keeps the model's health
// (sessions/health.go) and says what the client should do about the
// session in flight; chat.message (4.7) moves a session off a model that
// cools down.

// nextHealthy is the model core's FallbackModel gives session (agent)
// instead of failed (4.8), from its inputs here: the agent's agentModels
// entry, the parent session's model, and the models cooling at now.
func (r *modelRouter) nextHealthy(m modelReader, session, agent, failed string, now time.Time) (core.ModelRef, string, bool) {
	var entry *core.AgentChoice
	if e, ok := r.cfg.AgentModels[agent]; ok {
		c := e.Choice()
		entry = &c
	}
	parentModel := ""
	if parent := m.Parent(session); parent != "" {
		parentModel = m.Running(parent)
	}
	cooling := func(model string) bool { return m.Cooling(model, now) }
	if to, rung, ok := r.models.fallback(entry, failed, parentModel, cooling); ok || entry != nil {
		return to, rung, ok
	}
	return r.borrowedFallback(failed, cooling)
}

// borrowedFallback is the fallback the configuration names for failed,
// for an agent that has no agentModels entry (issue 40): that of the
// first agent, by name, whose entry's model is failed, resolved as its
// own fallback would be. A stock `general` child on the parent's cooling
// model so gets the fallback configured for that model, not the model
// again.
func (r *modelRouter) borrowedFallback(failed string, cooling func(model string) bool) (core.ModelRef, string, bool) {
	for _, name := range slices.Sorted(maps.Keys(r.cfg.AgentModels)) {
		e := r.cfg.AgentModels[name]
		if base, ok := core.ModelBase(e.Model); !ok || base != failed {
			continue
		}
		c := e.Choice()
		if to, rung, ok := r.models.fallback(&c, failed, "", cooling); ok {
			return to, rung, true
		}
	}
	return core.ModelRef{}, "", false
}

// avoidCooling is 4.7 with health: when the model a chat.message leaves the
// session on (after ops) cools down, the session gets the next healthy one.
// It records the model the session runs on, with the switch off the
// cooling model and a pending switch the session is seen to have taken,
// in one write transaction (sessions.Store.RecordModels): all of them
// or none. A message that needs none of these writes nothing.
func (r *modelRouter) avoidCooling(ctx context.Context, c chatMessageModel, ops []Op) []Op {
	if c.session == "" {
		return ops
	}
	model := c.current
	if !c.ok {
		model = core.ModelRef{}
	}
	for _, op := range ops {
		if m, ok := op.Value.(core.ModelRef); ok {
			model = m
		}
	}
	if model.ProviderID == "" {
		return ops
	}
	name := model.Name()
	enabled := r.cfg.FallbackEnabled(c.agent)
	cooling := enabled && r.store.ProviderHealth().Cooling(name, r.clock())
	if !cooling && !r.runsOn(c.session, name) {
		return ops // nothing to record: the records stand as they are
	}
	var mv modelMove
	err := r.store.RecordModels(ctx, func(rec *sessions.ModelRecords) {
		mv = r.moveOff(rec, c, name, enabled)
	})
	if err != nil {
		// Nothing was recorded (status says why); the message still goes
		// to a model that does not cool.
		r.log.Warn().Err(err).Str("session", c.session).Msg("model change not recorded")
		mv = modelMove{}
		if cooling {
			if to, _, ok := r.nextHealthy(storeModels{r.store}, c.session, c.agent, name, r.clock()); ok {
				mv.to = &to
			}
		}
	}
	if mv.applied {
		r.log.Info().Str("session", c.session).Str("to", name).Msg("model switch applied")
	}
	if mv.to == nil {
		return ops
	}
	if mv.switched != nil {
		r.switchLogged(c.session, c.agent, *mv.switched, mv.again)
	}
	op := "replace"
	if !c.onMessage {
		if !c.hasMessage {
			return ops
		}
		op = "add"
	}
	return []Op{{Op: op, Path: "/message/model", Value: *mv.to}}
}

// runsOn reports whether session, tracked, has a record to change when
// it is seen on model: its running model is another, or its pending
// switch went to model.
func (r *modelRouter) runsOn(session, model string) bool {
	if r.store.Tracked().Agent(session) == "" {
		return false // not tracked: nothing is kept of it
	}
	if r.store.Tracked().Running(session) != model {
		return true
	}
	p, ok := r.pendingSwitch(session)
	return ok && p.To == model
}

// modelMove is what avoidCooling did in one transaction: the model the
// message moves to (nil: it stays), the switch recorded, and whether a
// pending switch applied.
type modelMove struct {
	to       *core.ModelRef
	switched *sessions.Switch
	again    bool
	applied  bool
}

// moveOff decides and records, in rec, a chat.message of c on model name:
// off it to the next healthy model when it cools, else on it.
func (r *modelRouter) moveOff(rec *sessions.ModelRecords, c chatMessageModel, name string, enabled bool) modelMove {
	now := r.clock()
	if h, ok := rec.Health(name); ok && h.Cooling(now) && enabled {
		if to, rung, ok := r.nextHealthy(rec, c.session, c.agent, name, now); ok {
			reason := fmt.Sprintf("cooling until %s (%s)", h.Until.UTC().Format(time.RFC3339), switchReason(h.Class, h.Message))
			// A pending switch off the same model (model.failed's, never
			// applied: a resend that failed) is this one: one record.
			pending, ok := pendingOf(rec.Switches(c.session))
			sw := sessions.Switch{From: name, To: to.Name(), Variant: to.Variant, Rung: rung, Reason: reason, At: now}
			again := ok && pending.From == name
			recordSwitch(rec, c.session, sw, again)
			rec.SetRunning(c.session, to.Name())
			return modelMove{to: &to, switched: &sw, again: again}
		}
	}
	rec.SetRunning(c.session, name)
	return modelMove{applied: r.switchAppliedIn(rec, c.session, name)}
}

// sessionCreated learns a new session's agent and parent (session.created).
func (r *modelRouter) sessionCreated(ctx context.Context, session, parent, agent string) {
	if session == "" || parent == "" {
		return
	}
	// The agent and the parent together, or neither.
	err := r.store.RecordModels(ctx, func(rec *sessions.ModelRecords) {
		if agent != "" && rec.Agent(session) == "" {
			rec.SetAgent(session, agent)
		}
		if rec.Parent(session) != parent {
			rec.SetParent(session, parent)
		}
	})
	if err != nil {
		r.log.Warn().Err(err).Str("session", session).Msg("session's agent and parent not recorded")
	}
}

// statusHealth is status.health: every model whose health is kept, the
// latest failure first, with whether it cools down now.
type statusHealth struct {
	sessions.Health
	Cooling bool `json:"cooling"`
}

func (r *modelRouter) healthStatus() []statusHealth {
	now := r.clock()
	list := r.store.ProviderHealth().List()
	out := make([]statusHealth, len(list))
	for i, h := range list {
		out[i] = statusHealth{Health: h, Cooling: now.Before(h.Until)}
	}
	return out
}
