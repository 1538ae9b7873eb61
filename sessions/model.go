package sessions

import "context"

// ModelDecision is the model the sidecar chose for a session at its latest
// chat.message (PROTOCOL.md 4.7): the model it runs on, the variant, the
// rung of MODEL_RESOLUTION.md that decided ("" when none answered and the
// message's own model was kept), and whether the choice changed the model
// OpenCode had put on the message.
type ModelDecision struct {
	Model   string `json:"model"`
	Variant string `json:"variant,omitempty"`
	Rung    string `json:"rung,omitempty"`
	Changed bool   `json:"changed,omitempty"`
}

// MaxModelBytes caps a decision's model and variant (and rung): a decision
// with a longer one is not kept.
const MaxModelBytes = 256

// fits reports whether every string of d is within MaxModelBytes.
func (d *ModelDecision) fits() bool {
	return len(d.Model) <= MaxModelBytes && len(d.Variant) <= MaxModelBytes && len(d.Rung) <= MaxModelBytes
}

// modelCost is what a decision adds to its tracked session (nil: nothing).
func modelCost(d *ModelDecision) int {
	if d == nil {
		return 0
	}
	return modelOverhead + jsonLen(d.Model) + jsonLen(d.Variant) + jsonLen(d.Rung)
}

// modelOverhead is a decision's fixed cost: its struct and the JSON
// around its strings in the state file.
const modelOverhead = 64

// SetModelDecision records d as session's latest model decision. The
// decision lives with the session's agent (SetAgent): a session whose agent
// is not tracked keeps none, and a decision over the string caps is not
// kept (the session's earlier one is dropped too, so none that is out of
// date is shown).
func (s *Store) SetModelDecision(ctx context.Context, session string, d ModelDecision) {
	s.lock(ctx)
	defer s.unlock()
	s.refresh()
	sa := s.cachedAgent(session)
	if sa == nil {
		return
	}
	var next *ModelDecision
	if d.fits() {
		next = &ModelDecision{Model: keep(d.Model), Variant: keep(d.Variant), Rung: keep(d.Rung), Changed: d.Changed}
	}
	if sa.model == nil && next == nil || sa.model != nil && next != nil && *sa.model == *next {
		return
	}
	s.begin()
	if sa = s.cachedAgent(session); sa == nil {
		return
	}
	before := trackedCost(sa)
	sa.model = next
	s.trackedBytes += trackedCost(sa) - before
	s.markTracked(sa)
	s.changed()
	s.enforceBudget()
}

// ModelDecision returns session's latest model decision, if one is kept.
func (s *Store) ModelDecision(session string) (ModelDecision, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.refresh()
	return s.modelDecision(session)
}

// modelDecision is ModelDecision; the caller holds mu.
func (s *Store) modelDecision(session string) (ModelDecision, bool) {
	sa := s.cachedAgent(session)
	if sa == nil || sa.model == nil {
		return ModelDecision{}, false
	}
	d := sa.model
	if d == nil {
		return ModelDecision{}, false
	}
	return *d, true
}

// entryModel is the decision sessions.list shows with an entry: that of
// its task session. The caller holds mu.
func (s *Store) entryModel(taskID string) *ModelDecision {
	if d, ok := s.modelDecision(taskID); ok {
		return &d
	}
	return nil
}

// restoredModel is the decision a state file gave a session, within the
// caps (nil: none).
func restoredModel(d *ModelDecision) *ModelDecision {
	if d == nil || d.Model == "" || !d.fits() {
		return nil
	}
	c := *d
	return &c
}
