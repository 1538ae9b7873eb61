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
//
// One failure is one intent of the store (sessions.Store.
// RecordModels): the health, the session's agent and parent the
// report names, its switch and its model decision are read and written in
// one write transaction, so two processes reporting at once give the
// answers of one after the other, and all of a failure's records are kept
// or none.

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

// failureReport is one model.failed's report, as read from its params.
type failureReport struct {
	session, model, agent, parent string
	failure                       core.ProviderFailure
	retryAfter                    string
	retryAt                       float64
	attempt                       int
	inPlace                       bool
}

// failureLog is what one failure logs and counts once its records are
// kept.
type failureLog struct {
	cooling  bool // the model starts cooling
	strikes  int
	applied  string // the pending switch the failure showed applied: its fallback
	switched *sessions.Switch
	agent    string
	again    bool
}

// modelFailed answers model.failed (4.8).
func (s *Server) modelFailed(ctx context.Context, p *modelFailedParams) (modelFailedResult, error) {
	rep := failureReport{session: p.SessionID, agent: p.Agent, parent: p.ParentID, inPlace: p.InPlace, attempt: max(p.Attempt, 0),
		failure: core.ProviderFailure{Name: rawString(p.Error.Name), Message: rawString(p.Error.Message)}, retryAfter: rawString(p.RetryAfter)}
	if n, ok := rawNumber(p.Error.StatusCode); ok {
		rep.failure.StatusCode = int(n)
	}
	if m, ok := parseMessageModel(p.Model); ok {
		rep.model = m.Name()
	} else {
		rep.model = strings.TrimSpace(rawString(p.Model))
	}
	if at, ok := rawNumber(p.RetryAt); ok {
		rep.retryAt = at
	}
	var res modelFailedResult
	var lg failureLog
	err := s.store.RecordModels(ctx, func(rec *sessions.ModelRecords) {
		res, lg = s.router.modelFailed(rec, rep)
	})
	if err != nil {
		// Nothing was kept: the answer changes nothing either (a switch
		// the store does not hold would be counted and shown nowhere).
		s.router.log.Warn().Err(err).Str("session", rep.session).Str("model", res.Model).Msg("model failure not recorded")
		class, counted := core.ClassifyFailure(rep.failure)
		return modelFailedResult{Counted: counted, Class: class, Model: res.Model, Action: actionNone}, nil
	}
	s.router.logFailure(rep.session, res, lg)
	return res, nil
}

// modelFailed decides and records one failure in rec (the write
// transaction of its intent): the model's health, the agent and parent the
// report names, and the switch off the model.
func (r *modelRouter) modelFailed(rec *sessions.ModelRecords, p failureReport) (modelFailedResult, failureLog) {
	now := r.clock()
	model := p.model
	if model == "" {
		model = rec.Running(p.session)
	}
	retryAfter := core.ParseRetryAfter(p.retryAfter, now)
	if p.retryAt > 0 {
		retryAfter = max(retryAfter, core.RetryAtDelay(p.retryAt, now))
	}
	// A client that knows the session's agent or parent better than the
	// store (OpenCode 2: the retry hook names the agent; the child of a
	// subagent call in flight has no session.created yet) says so.
	if p.agent != "" && len(p.agent) <= sessions.MaxAgentNameBytes && rec.Agent(p.session) == "" {
		rec.SetAgent(p.session, p.agent)
	}
	if p.parent != "" && p.parent != p.session && len(p.parent) <= sessions.MaxIDBytes && rec.Parent(p.session) == "" {
		rec.SetParent(p.session, p.parent)
	}
	// A failure on the model a pending switch went to: the session ran on it.
	var applied string
	if r.switchAppliedIn(rec, p.session, model) {
		applied = model
	}
	res, lg := r.countFailure(rec, model, p.failure, retryAfter, now)
	lg.applied = applied
	if res.Until == nil {
		return res, lg
	}
	again, dup := askedAgain(rec.Switches(p.session), model, p.attempt, lg.wasCooling())
	agent := rec.Agent(p.session)
	if !r.cfg.FallbackEnabled(agent) || dup {
		return res, lg
	}
	parent := rec.Parent(p.session)
	_, listed := r.cfg.AgentModels[agent]
	var action string
	switch {
	case p.inPlace && (parent != "" || listed):
		// Where 1.x would abort or resend, the same call goes on.
		if !again && len(rec.Switches(p.session)) >= maxInPlaceSwitches {
			return res, lg
		}
		action = actionSwitch
	case parent != "":
		action = actionAbort
	case listed:
		action = actionResend
	default:
		return res, lg
	}
	to, rung, ok := r.nextHealthy(rec, p.session, agent, model, now)
	if !ok {
		return res, lg
	}
	res.Action, res.Fallback = action, &to
	res.Reason = switchReason(res.Class, p.failure.Message)
	sw := sessions.Switch{From: model, To: to.Name(), Variant: to.Variant, Rung: rung, Reason: res.Reason, At: now, Attempt: p.attempt, Pending: true}
	if prev, ok := pendingOf(rec.Switches(p.session)); again && ok && prev.To == sw.To {
		// The same switch asked again keeps when it was first asked (one
		// switch for the views, one toast).
		sw.At = prev.At
	}
	recordSwitch(rec, p.session, sw, again)
	lg.switched, lg.agent, lg.again = &sw, agent, again
	return res, lg
}

// wasCooling: the model already cooled before the failure.
func (lg failureLog) wasCooling() bool { return !lg.cooling }

// askedAgain decides a counted failure on model of a session whose
// switches are sw (4.8): dup when it is one already answered (model cooled
// before it, and it names no attempt, or the attempt the switch
// answered), again when it is a later attempt still on that model (the
// switch did not apply: it is asked again, in place of its record).
func askedAgain(sw []sessions.Switch, model string, attempt int, wasCooling bool) (again, dup bool) {
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

// countFailure classifies a failed model call on model and, when it
// counts, keeps the model's health (4.8) in rec: the result with Until
// set. model.failed and OpenCode 2's failed subagent calls
// (subagent_model.go) both come here.
func (r *modelRouter) countFailure(rec *sessions.ModelRecords, model string, f core.ProviderFailure, retryAfter time.Duration, now time.Time) (modelFailedResult, failureLog) {
	class, counted := core.ClassifyFailure(f)
	res := modelFailedResult{Counted: counted, Class: class, Action: actionNone, Model: model}
	if !counted || model == "" || len(model) > sessions.MaxModelBytes {
		return res, failureLog{}
	}
	prev, _ := rec.Health(model)
	next := core.NextHealth(prev, now, retryAfter, class, f.Message, r.cfg.RuntimeFallback.Policy())
	rec.SetHealth(model, next)
	until := next.Until
	res.Until = &until
	return res, failureLog{cooling: !prev.Cooling(now), strikes: next.Strikes}
}

// logFailure logs what one recorded failure did, and counts its switch.
func (r *modelRouter) logFailure(session string, res modelFailedResult, lg failureLog) {
	if lg.applied != "" {
		r.log.Info().Str("session", session).Str("to", lg.applied).Msg("model switch applied")
	}
	if lg.cooling && res.Until != nil {
		r.log.Info().Str("model", res.Model).Str("class", res.Class).Int("strikes", lg.strikes).Time("until", *res.Until).
			Msg("model cooling")
	}
	if lg.switched != nil {
		r.switchLogged(session, lg.agent, *lg.switched, lg.again)
	}
}

// switchReason is a switch's why: the failure's class and message.
func switchReason(class, message string) string {
	message = strings.TrimSpace(message)
	if message == "" {
		return class
	}
	return class + ": " + message
}

// modelReader is what the fallback choice reads of the sessions and the
// models' health (nextHealthy): a model intent's records
// (sessions.ModelRecords), or the store's own (storeModels).
type modelReader interface {
	Parent(session string) string
	Running(session string) string
	Cooling(model string, now time.Time) bool
}

// modelState is what the model decisions of 4.7 and 4.8 read and write of
// the sessions and the models' health, inside a model intent's
// transaction (sessions.ModelRecords).
type modelState interface {
	modelReader
	Switches(session string) []sessions.Switch
	AddSwitch(session string, sw sessions.Switch)
	ReplaceSwitch(session string, sw sessions.Switch)
	SetModelDecision(session string, d sessions.ModelDecision)
	SetRunning(session, model string)
}

var _ modelState = (*sessions.ModelRecords)(nil)

// storeModels reads the store itself, outside a model intent.
type storeModels struct{ store Store }

func (m storeModels) Parent(session string) string  { return m.store.Tracked().Parent(session) }
func (m storeModels) Running(session string) string { return m.store.Tracked().Running(session) }
func (m storeModels) Cooling(model string, now time.Time) bool {
	return m.store.ProviderHealth().Cooling(model, now)
}

// recordSwitch keeps a switch of session in m, in place of its latest
// when replace. An applied switch (not Pending) makes the session's model
// decision at once; a pending one when it applies (switchApplied).
func recordSwitch(m modelState, session string, sw sessions.Switch, replace bool) {
	if replace {
		m.ReplaceSwitch(session, sw)
	} else {
		m.AddSwitch(session, sw)
	}
	if !sw.Pending {
		m.SetModelDecision(session, switchDecision(sw))
	}
}

// switchLogged counts and logs a switch kept (a switch asked again, in
// place of its record, is counted once).
func (r *modelRouter) switchLogged(session, agent string, sw sessions.Switch, again bool) {
	if !again {
		r.models.switched() // a switch asked again is the same switch
	}
	ev := r.log.Info().Str("session", session).Str("agent", agent).Str("from", sw.From).Str("to", sw.To).
		Str("rung", sw.Rung).Str("reason", sw.Reason)
	if sw.Attempt > 0 {
		ev = ev.Int("attempt", sw.Attempt)
	}
	if again {
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
// event came left it on the call's model), in one transaction.
func (r *modelRouter) switchApplied(ctx context.Context, session, model string) {
	if p, ok := r.pendingSwitch(session); !ok || p.To != model || session == "" {
		return // nothing to change: no write
	}
	applied := false
	err := r.store.RecordModels(ctx, func(rec *sessions.ModelRecords) {
		applied = r.switchAppliedIn(rec, session, model)
	})
	if err != nil {
		r.log.Warn().Err(err).Str("session", session).Msg("model switch applied, not recorded")
		return
	}
	if applied {
		r.log.Info().Str("session", session).Str("to", model).Msg("model switch applied")
	}
}

// switchAppliedIn is switchApplied in m; it reports whether the switch
// applied.
func (r *modelRouter) switchAppliedIn(m modelState, session, model string) bool {
	if session == "" || model == "" {
		return false
	}
	sw := m.Switches(session)
	if len(sw) == 0 {
		return false
	}
	last := sw[len(sw)-1]
	if !last.Pending || last.To != model {
		return false
	}
	last.Pending = false
	m.ReplaceSwitch(session, last)
	m.SetModelDecision(session, switchDecision(last))
	m.SetRunning(session, model)
	return true
}

// pendingSwitch is session's latest switch when it is pending.
func (r *modelRouter) pendingSwitch(session string) (sessions.Switch, bool) {
	return pendingOf(r.store.Tracked().Switches(session))
}

// pendingOf is the latest of sw when it is pending.
func pendingOf(sw []sessions.Switch) (sessions.Switch, bool) {
	if len(sw) == 0 || !sw[len(sw)-1].Pending {
		return sessions.Switch{}, false
	}
	return sw[len(sw)-1], true
}
