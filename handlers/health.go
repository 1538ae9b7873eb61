package handlers

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/hookwire/hookwire/core"
	"github.com/hookwire/hookwire/sessions"
)

// Runtime model fallback (PROTOCOL.md 4.8): model.failed takes what
// OpenCode reported about a failed model call, keeps the model's health
// (sessions/health.go) and says what the client should do about the
// session in flight; chat.message (4.7) moves a session off a model that
// cools down.

// Actions model.failed asks of the client.
const (
	actionNone = "none"
	// actionAbort: a subagent's session failed; abort it (OpenCode's own
	// retries would hit the same model), and when the parent's task call
	// fails, run the child again on fallback and put its answer where the
	// error was (4.8).
	actionAbort = "abort"
	// actionResend: the user's own session failed; abort it and send its
	// last user message again on fallback.
	actionResend = "resend"
	// actionSwitch: the client switches the session's model to fallback
	// in place, before the next attempt of the same call (OpenCode 2's
	// session retry hook and switchModel; model.failed's inPlace), so the
	// call itself finishes on the fallback.
	actionSwitch = "switch"
)

// maxInPlaceSwitches bounds the in-place switches of one session: a
// fallback that fails in turn is switched off again at most this many
// times in all (A -> B -> C ...), never back to a model that cools.
const maxInPlaceSwitches = 3

type modelFailedResult struct {
	Counted  bool           `json:"counted"`
	Class    string         `json:"class"`
	Model    string         `json:"model,omitempty"`
	Until    *time.Time     `json:"until,omitempty"`
	Action   string         `json:"action"`
	Fallback *core.ModelRef `json:"fallback,omitempty"`
	Reason   string         `json:"reason,omitempty"`
}

// modelFailed answers model.failed (4.8).
func (s *Server) modelFailed(ctx context.Context, p *modelFailedParams) (modelFailedResult, error) {
	f := core.ProviderFailure{Name: rawString(p.Error.Name), Message: rawString(p.Error.Message)}
	if n, ok := rawNumber(p.Error.StatusCode); ok {
		f.StatusCode = int(n)
	}
	model := ""
	if m, ok := parseMessageModel(p.Model); ok {
		model = m.Name()
	} else if name := strings.TrimSpace(rawString(p.Model)); name != "" {
		model = name
	} else {
		model = s.store.Tracked().Running(p.SessionID)
	}
	now := s.clock()
	retryAfter := core.ParseRetryAfter(rawString(p.RetryAfter), now)
	if at, ok := rawNumber(p.RetryAt); ok && at > 0 {
		retryAfter = max(retryAfter, core.RetryAtDelay(at, now))
	}
	// A client that knows the session's agent or parent better than the
	// store (OpenCode 2: the retry hook names the agent; the child of a
	// subagent call in flight has no session.created yet) says so.
	if p.Agent != "" && len(p.Agent) <= sessions.MaxAgentNameBytes && s.store.Tracked().Agent(p.SessionID) == "" {
		s.store.Tracked().SetAgent(ctx, p.SessionID, p.Agent)
	}
	if p.ParentID != "" && p.ParentID != p.SessionID && len(p.ParentID) <= sessions.MaxIDBytes && s.store.Tracked().Parent(p.SessionID) == "" {
		s.store.Tracked().SetParent(ctx, p.SessionID, p.ParentID)
	}
	res, dup := s.router.countFailure(ctx, p.SessionID, model, f, retryAfter, now)
	if res.Until == nil {
		return res, nil
	}

	agent := s.store.Tracked().Agent(p.SessionID)
	if !s.cfg.FallbackEnabled(agent) || dup {
		return res, nil
	}
	parent := s.store.Tracked().Parent(p.SessionID)
	_, listed := s.cfg.AgentModels[agent]
	var action string
	switch {
	case p.InPlace && (parent != "" || listed):
		// Where 1.x would abort or resend, the same call goes on.
		if len(s.store.Tracked().Switches(p.SessionID)) >= maxInPlaceSwitches {
			return res, nil
		}
		action = actionSwitch
	case parent != "":
		action = actionAbort
	case listed:
		action = actionResend
	default:
		return res, nil
	}
	to, rung, ok := s.router.nextHealthy(p.SessionID, agent, model, now)
	if !ok {
		return res, nil
	}
	res.Action, res.Fallback = action, &to
	res.Reason = switchReason(res.Class, f.Message)
	s.router.recordSwitch(ctx, p.SessionID, agent, model, to, rung, res.Reason, now)
	return res, nil
}

// countFailure classifies a failed model call of session on model and,
// when it counts, keeps the model's health (4.8): the result with Until
// set, and dup when the session was already moved off the model in its
// current cooldown. model.failed and OpenCode 2's failed subagent calls
// (subagent_model.go) both come here.
func (r *modelRouter) countFailure(ctx context.Context, session, model string, f core.ProviderFailure, retryAfter time.Duration, now time.Time) (modelFailedResult, bool) {
	class, counted := core.ClassifyFailure(f)
	res := modelFailedResult{Counted: counted, Class: class, Action: actionNone, Model: model}
	if !counted || model == "" || len(model) > sessions.MaxModelBytes {
		return res, false
	}
	prev, _ := r.store.ProviderHealth().Of(model)
	// Moved off this model in its current cooldown already: OpenCode's
	// retries and its events report one failure several times.
	dup := prev.Cooling(now) && r.switchedFrom(session, model)
	next := core.NextHealth(prev, now, retryAfter, class, f.Message, r.cfg.RuntimeFallback.Policy())
	r.store.ProviderHealth().Set(ctx, model, next)
	until := next.Until
	res.Until = &until
	if !prev.Cooling(now) {
		r.log.Info().Str("model", model).Str("class", class).Int("strikes", next.Strikes).Time("until", next.Until).
			Msg("model cooling")
	}
	return res, dup
}

// switchedFrom: session's latest switch left model.
func (r *modelRouter) switchedFrom(session, model string) bool {
	sw := r.store.Tracked().Switches(session)
	return len(sw) > 0 && sw[len(sw)-1].From == model
}

// nextHealthy is the model core's FallbackModel gives session (agent)
// instead of failed (4.8), from its inputs here: the agent's agentModels
// entry, the parent session's model, and the models cooling at now.
func (r *modelRouter) nextHealthy(session, agent, failed string, now time.Time) (core.ModelRef, string, bool) {
	var entry *core.AgentChoice
	if e, ok := r.cfg.AgentModels[agent]; ok {
		c := e.Choice()
		entry = &c
	}
	parentModel := ""
	if parent := r.store.Tracked().Parent(session); parent != "" {
		parentModel = r.store.Tracked().Running(parent)
	}
	cooling := func(model string) bool { return r.store.ProviderHealth().Cooling(model, now) }
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

// switchReason is a switch's why: the failure's class and message.
func switchReason(class, message string) string {
	message = strings.TrimSpace(message)
	if message == "" {
		return class
	}
	return class + ": " + message
}

// recordSwitch keeps a switch of session from one model to another, with
// its model decision, and logs it.
func (r *modelRouter) recordSwitch(ctx context.Context, session, agent, from string, to core.ModelRef, rung, reason string, now time.Time) {
	r.store.Tracked().AddSwitch(ctx, session, sessions.Switch{From: from, To: to.Name(), Reason: reason, At: now})
	r.store.Tracked().SetModelDecision(ctx, session, sessions.ModelDecision{Model: to.Name(), Variant: to.Variant, Rung: rung, Changed: true})
	r.models.switched()
	r.log.Info().Str("session", session).Str("agent", agent).Str("from", from).Str("to", to.Name()).
		Str("rung", rung).Str("reason", reason).Msg("model switched")
}

// avoidCooling is 4.7 with health: when the model a chat.message leaves the
// session on (after ops) cools down, the session gets the next healthy one.
// It records the model the session runs on.
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
	now := r.clock()
	name := model.Name()
	if h, ok := r.store.ProviderHealth().Of(name); ok && h.Cooling(now) && r.cfg.FallbackEnabled(c.agent) {
		if to, rung, ok := r.nextHealthy(c.session, c.agent, name, now); ok {
			reason := fmt.Sprintf("cooling until %s (%s)", h.Until.UTC().Format(time.RFC3339), switchReason(h.Class, h.Message))
			r.recordSwitch(ctx, c.session, c.agent, name, to, rung, reason, now)
			r.store.Tracked().SetRunning(ctx, c.session, to.Name())
			path := "/message/model"
			op := "replace"
			if !c.onMessage {
				if !c.hasMessage {
					return ops
				}
				op = "add"
			}
			return []Op{{Op: op, Path: path, Value: to}}
		}
	}
	r.store.Tracked().SetRunning(ctx, c.session, name)
	return ops
}

// sessionCreated learns a new session's agent and parent (session.created).
func (r *modelRouter) sessionCreated(ctx context.Context, session, parent, agent string) {
	if session == "" || parent == "" {
		return
	}
	if agent != "" && r.store.Tracked().Agent(session) == "" {
		r.store.Tracked().SetAgent(ctx, session, agent)
	}
	r.store.Tracked().SetParent(ctx, session, parent)
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
