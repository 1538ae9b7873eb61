package handlers

import (
	"context"
	"strings"
	"time"

	"github.com/hookwire/hookwire/core"
	"github.com/hookwire/hookwire/sessions"
)

// model.failed (PROTOCOL.md 4.8): what OpenCode reported about a failed
// model call. It keeps the model's health (countFailure) and says what the
// client should do about the session in flight; the switch it asks for is
// recorded pending until the session is seen on the fallback
// (switchApplied), so a switch the client never made is asked again at the
// next attempt and no listing says the session runs on it.

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
// times in all (A -> B -> C ...), never back to a model that cools. A
// switch asked again (it did not apply) replaces its record and is not
// counted twice.
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
	// A failure on the model a pending switch went to: the session ran on it.
	s.router.switchApplied(ctx, p.SessionID, model)
	res, wasCooling := s.router.countFailure(ctx, p.SessionID, model, f, retryAfter, now)
	if res.Until == nil {
		return res, nil
	}
	again, dup := s.router.askedAgain(p.SessionID, model, max(p.Attempt, 0), wasCooling)
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
		if !again && len(s.store.Tracked().Switches(p.SessionID)) >= maxInPlaceSwitches {
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
	sw := sessions.Switch{From: model, To: to.Name(), Variant: to.Variant, Rung: rung, Reason: res.Reason, At: now, Attempt: max(p.Attempt, 0), Pending: true}
	if prev, ok := s.router.pendingSwitch(p.SessionID); again && ok && prev.To == sw.To {
		// The same switch asked again keeps when it was first asked (one
		// switch for the views, one toast).
		sw.At = prev.At
	}
	s.router.recordSwitch(ctx, p.SessionID, agent, sw, again)
	return res, nil
}

// askedAgain decides a counted failure of session on model that its
// latest switch left (4.8): dup when it is one already answered (model
// cooled before it, and it names no attempt, or the attempt the switch
// answered), again when it is a later attempt still on that model (the
// switch did not apply: it is asked again, in place of its record).
func (r *modelRouter) askedAgain(session, model string, attempt int, wasCooling bool) (again, dup bool) {
	sw := r.store.Tracked().Switches(session)
	if len(sw) == 0 || !wasCooling {
		return false, false
	}
	last := sw[len(sw)-1]
	if last.From != model {
		return false, false
	}
	if attempt == 0 || attempt == last.Attempt {
		return false, true
	}
	return true, false
}

// countFailure classifies a failed model call of session on model and,
// when it counts, keeps the model's health (4.8): the result with Until
// set, and whether the model already cooled before it. model.failed and
// OpenCode 2's failed subagent calls (subagent_model.go) both come here.
func (r *modelRouter) countFailure(ctx context.Context, session, model string, f core.ProviderFailure, retryAfter time.Duration, now time.Time) (modelFailedResult, bool) {
	class, counted := core.ClassifyFailure(f)
	res := modelFailedResult{Counted: counted, Class: class, Action: actionNone, Model: model}
	if !counted || model == "" || len(model) > sessions.MaxModelBytes {
		return res, false
	}
	prev, _ := r.store.ProviderHealth().Of(model)
	next := core.NextHealth(prev, now, retryAfter, class, f.Message, r.cfg.RuntimeFallback.Policy())
	r.store.ProviderHealth().Set(ctx, model, next)
	until := next.Until
	res.Until = &until
	if !prev.Cooling(now) {
		r.log.Info().Str("model", model).Str("class", class).Int("strikes", next.Strikes).Time("until", next.Until).
			Msg("model cooling")
	}
	return res, prev.Cooling(now)
}

// switchReason is a switch's why: the failure's class and message.
func switchReason(class, message string) string {
	message = strings.TrimSpace(message)
	if message == "" {
		return class
	}
	return class + ": " + message
}

// recordSwitch keeps a switch of session, in place of its latest when
// replace, and logs it. An applied switch (not Pending) makes the
// session's model decision at once; a pending one when it applies
// (switchApplied).
func (r *modelRouter) recordSwitch(ctx context.Context, session, agent string, sw sessions.Switch, replace bool) {
	if replace {
		r.store.Tracked().ReplaceSwitch(ctx, session, sw)
	} else {
		r.store.Tracked().AddSwitch(ctx, session, sw)
	}
	if !sw.Pending {
		r.store.Tracked().SetModelDecision(ctx, session, switchDecision(sw))
	}
	if !replace {
		r.models.switched() // a switch asked again is the same switch
	}
	ev := r.log.Info().Str("session", session).Str("agent", agent).Str("from", sw.From).Str("to", sw.To).
		Str("rung", sw.Rung).Str("reason", sw.Reason)
	if sw.Attempt > 0 {
		ev = ev.Int("attempt", sw.Attempt)
	}
	if replace {
		ev = ev.Bool("again", true)
	}
	ev.Msg("model switched")
}

// switchDecision is the model decision a switch makes.
func switchDecision(sw sessions.Switch) sessions.ModelDecision {
	return sessions.ModelDecision{Model: sw.To, Variant: sw.Variant, Rung: sw.Rung, Changed: true}
}

// switchApplied: session was seen on model (a request, a message, a
// failure or OpenCode 2's session.model.selected on it); when its latest
// switch is pending and went to model, the switch applied: it is no
// longer pending, the session's model decision becomes its fallback and
// the session runs on it (a subagent call that ended before OpenCode 2's
// event came left it on the call's model).
func (r *modelRouter) switchApplied(ctx context.Context, session, model string) {
	if session == "" || model == "" {
		return
	}
	sw := r.store.Tracked().Switches(session)
	if len(sw) == 0 {
		return
	}
	last := sw[len(sw)-1]
	if !last.Pending || last.To != model {
		return
	}
	last.Pending = false
	r.store.Tracked().ReplaceSwitch(ctx, session, last)
	r.store.Tracked().SetModelDecision(ctx, session, switchDecision(last))
	r.store.Tracked().SetRunning(ctx, session, model)
	r.log.Info().Str("session", session).Str("to", model).Msg("model switch applied")
}

// pendingSwitch is session's latest switch when it is pending.
func (r *modelRouter) pendingSwitch(session string) (sessions.Switch, bool) {
	sw := r.store.Tracked().Switches(session)
	if len(sw) == 0 || !sw[len(sw)-1].Pending {
		return sessions.Switch{}, false
	}
	return sw[len(sw)-1], true
}
