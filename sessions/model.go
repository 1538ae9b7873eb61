package sessions

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

// restoredModel is the decision a state file gave a session, within the
// caps (nil: none).
func restoredModel(d *ModelDecision) *ModelDecision {
	if d == nil || d.Model == "" || !d.fits() {
		return nil
	}
	c := *d
	return &c
}
