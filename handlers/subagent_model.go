package handlers

import (
	"context"
	"regexp"
	"strings"
	"time"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/hookwire/hookwire/core"
	"github.com/hookwire/hookwire/sessions"
)

// Model choice on OpenCode 2 (PROTOCOL.md 4.7, 4.8). v2 has no
// chat.message and no hook may change a request's model, but its subagent
// tool takes the child's model as an input, `model`
// ("provider/model#variant"; an explicit model wins over the agent's
// configured one, which wins over the parent's: subagent.ts). So the
// decision 4.7 makes in a child's chat.message on 1.x is made here, in
// tool.execute.before of the call that starts or resumes the child, by
// the same core functions: the agent's agentModels entry over what
// OpenCode can reach, and a model that cools down replaced by its
// fallback. A call that names a model itself keeps it: v2's tool tells
// the model to pass one only when the user asked for that model.

// maxPendingModels bounds the calls whose model waits for their
// execute.after (a call that never gets one is forgotten at the bound).
const maxPendingModels = 256

// pendingModel is what a subagent call's execute.before decided, kept for
// the child its execute.after names.
type pendingModel struct {
	// agent is the call's agent, for the child.
	agent string
	// model is provider/model the call runs on ("" when unknown: the
	// call left v2 to choose).
	model    string
	decision *sessions.ModelDecision
	sw       *sessions.Switch
}

// subagentModelRef is a model as the subagent tool's input takes it.
func subagentModelRef(m core.ModelRef) string {
	if m.Variant != "" {
		return m.Name() + "#" + m.Variant
	}
	return m.Name()
}

// subagentModelBase is provider/model of a subagent model input, variant
// dropped; "" when it is not one (v2 refuses it: Invalid model).
func subagentModelBase(ref string) string {
	base, _, _ := strings.Cut(strings.TrimSpace(ref), "#")
	provider, id, ok := strings.Cut(base, "/")
	if !ok || provider == "" || id == "" {
		return ""
	}
	return base
}

// subagentModel is 4.7 (with health) for one call of OpenCode 2's
// subagent tool from session to agent: the op that sets its `model`
// input, or none. It remembers the call's model for its execute.after.
func (r *modelRouter) subagentModel(in *toolInput, args map[string]jsontext.Value, agent string) []Op {
	if raw, explicit := args["model"]; explicit {
		// The model's own choice (the user asked for it) is respected.
		ref, _ := stringValue(raw)
		r.models.notePending(in.CallID, pendingModel{agent: agent, model: subagentModelBase(ref)})
		return nil
	}
	r.models.notePending(in.CallID, pendingModel{agent: agent})
	entry, listed := r.cfg.AgentModels[agent]
	if !listed {
		return r.unlistedSubagentModel(in, agent)
	}
	if strings.TrimSpace(entry.Model) == "" {
		// An entry without a model keeps the model OpenCode gives the
		// session unless it is not available (4.7's category default).
		// Here that is v2's own choice, which the sidecar does not know:
		// answering the fallbacks would replace a model that is fine.
		return nil
	}
	// v2 chooses the child's model when the call names none (the agent's
	// configured one, else the parent's): it is not known here, so the
	// entry answers alone and no answer leaves v2's choice.
	choice, chosen := r.models.choose(entry.Choice(), "", "")
	if !chosen {
		r.log.Info().Str("session", in.SessionID).Str("agent", agent).Msg("model left: no providers.update yet")
		return nil
	}
	c := chatMessageModel{session: in.SessionID, agent: agent}
	to, ok := choice.Ref()
	if !ok {
		r.countDecision(c, sessions.ModelDecision{Rung: choice.Rung})
		return nil
	}
	p := pendingModel{agent: agent}
	now := r.clock()
	if h, cooling := r.store.ProviderHealth().Of(to.Name()); cooling && h.Cooling(now) && r.cfg.FallbackEnabled(agent) {
		ec := entry.Choice()
		if fb, rung, ok := r.models.fallback(&ec, to.Name(), r.store.Tracked().Running(in.SessionID),
			func(model string) bool { return r.store.ProviderHealth().Cooling(model, now) }); ok {
			reason := "cooling until " + h.Until.UTC().Format(time.RFC3339) + " (" + switchReason(h.Class, h.Message) + ")"
			p.sw = &sessions.Switch{From: to.Name(), To: fb.Name(), Reason: reason, At: now}
			r.models.switched()
			r.log.Info().Str("parent", in.SessionID).Str("agent", agent).Str("from", to.Name()).Str("to", fb.Name()).
				Str("rung", rung).Str("reason", reason).Msg("model switched")
			to, choice.Rung = fb, rung
		}
	}
	d := sessions.ModelDecision{Model: to.Name(), Variant: to.Variant, Rung: choice.Rung, Changed: true}
	r.countDecision(c, d)
	p.model, p.decision = to.Name(), &d
	r.models.notePending(in.CallID, p)
	return []Op{{Op: "add", Path: "/args/model", Value: subagentModelRef(to)}}
}

// unlistedSubagentModel is the call's model for an agent without an
// agentModels entry (issue 40): v2 runs its child on the parent's model,
// and when that model cools down and the configuration names a fallback
// for it (borrowedFallback), the call gets the fallback instead of a
// model that fails again. Otherwise the call is left to v2.
func (r *modelRouter) unlistedSubagentModel(in *toolInput, agent string) []Op {
	parentModel := r.store.Tracked().Running(in.SessionID)
	if parentModel == "" || !r.cfg.FallbackEnabled(agent) {
		return nil
	}
	now := r.clock()
	h, ok := r.store.ProviderHealth().Of(parentModel)
	if !ok || !h.Cooling(now) {
		return nil
	}
	to, rung, ok := r.borrowedFallback(parentModel, func(model string) bool { return r.store.ProviderHealth().Cooling(model, now) })
	if !ok {
		return nil
	}
	reason := "cooling until " + h.Until.UTC().Format(time.RFC3339) + " (" + switchReason(h.Class, h.Message) + ")"
	r.models.switched()
	r.log.Info().Str("parent", in.SessionID).Str("agent", agent).Str("from", parentModel).Str("to", to.Name()).
		Str("rung", rung).Str("reason", reason).Msg("model switched")
	d := sessions.ModelDecision{Model: to.Name(), Variant: to.Variant, Rung: rung, Changed: true}
	r.countDecision(chatMessageModel{session: in.SessionID, agent: agent}, d)
	r.models.notePending(in.CallID, pendingModel{agent: agent, model: to.Name(), decision: &d,
		sw: &sessions.Switch{From: parentModel, To: to.Name(), Reason: reason, At: now}})
	return []Op{{Op: "add", Path: "/args/model", Value: subagentModelRef(to)}}
}

// subagentFailedRe is a failed child's error: `Subagent failed (sessionID: X): <its run's error>`.
var subagentFailedRe = regexp.MustCompile(`^Subagent failed \(sessionID: ([^\s()]+)\): (.*)`)

// subagentDone is a subagent call's execute.after for the model: the child
// it names keeps the call's decision and switch and runs on its model; a
// child that failed on a provider's error (a rate limit, a 5xx: 4.8's
// classes) makes that model's health as model.failed would. v2 has
// already failed the call, so nothing is aborted or resent: the next call
// for the agent skips the cooling model.
func (r *modelRouter) subagentDone(ctx context.Context, in *toolInput, child, text string, failed bool) {
	p, ok := r.models.takePending(in.CallID)
	if child == "" {
		return
	}
	if !ok || p.model == "" {
		// No model known for the call: nothing to keep (v2 chose it).
		return
	}
	// A child that failed on a provider's error counts for its model's
	// health, as model.failed would.
	var fail *core.ProviderFailure
	if failed {
		first, _, _ := strings.Cut(strings.TrimSpace(text), "\n")
		if mm := subagentFailedRe.FindStringSubmatch(first); mm != nil && mm[1] == child {
			fail = &core.ProviderFailure{Message: mm[2]}
		}
	}
	// What the child keeps is one intent of the store: its agent and
	// parent, its model and switch, and its failure's health, together.
	var res modelFailedResult
	var lg failureLog
	err := r.store.RecordModels(ctx, func(rec *sessions.ModelRecords) {
		res, lg = r.childDone(rec, p, in.SessionID, child, fail)
	})
	if err != nil {
		r.log.Warn().Err(err).Str("session", child).Msg("subagent's model not recorded")
		return
	}
	if res.Until != nil {
		r.logFailure(child, res, lg)
	}
}

// childDone records, in rec, what a subagent call's execute.after keeps
// of its child: the child is tracked with its agent and parent, as
// session.created makes it on 1.x (its model and health need both); it
// runs on the call's model with the call's decision and switch, or on the
// fallback a switch during the call moved it to; and fail, a provider's
// error it failed on, makes its model's health.
func (r *modelRouter) childDone(rec *sessions.ModelRecords, p pendingModel, parent, child string, fail *core.ProviderFailure) (modelFailedResult, failureLog) {
	if p.agent != "" && rec.Agent(child) == "" {
		rec.SetAgent(child, p.agent)
	}
	if rec.Parent(child) == "" {
		rec.SetParent(child, parent)
	}
	if sw := rec.Switches(child); len(sw) > 0 && sw[len(sw)-1].From == p.model && !sw[len(sw)-1].Pending {
		// Switched off the call's model during the call (the same-call
		// rescue, model.failed with inPlace): the switch's decision and
		// model stand.
		rec.SetRunning(child, sw[len(sw)-1].To)
	} else if len(sw) > 0 && sw[len(sw)-1].From == p.model {
		// The switch never applied (4.8): the child ran on the call's
		// model; its pending record stays as it is.
		if p.decision != nil {
			rec.SetModelDecision(child, *p.decision)
		}
		rec.SetRunning(child, p.model)
	} else {
		if p.decision != nil {
			rec.SetModelDecision(child, *p.decision)
		}
		if p.sw != nil {
			rec.AddSwitch(child, *p.sw)
		}
		rec.SetRunning(child, p.model)
	}
	model := rec.Running(child)
	if fail == nil || model == "" {
		return modelFailedResult{}, failureLog{}
	}
	return r.countFailure(rec, model, *fail, 0, r.clock())
}
