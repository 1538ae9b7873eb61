package sessions

import "time"

// A tracked session's parent, the model it runs on and the switches off
// failing models (PROTOCOL.md 4.7, 4.8): kept with its agent
// (sessionAgent, agents.go), apart from the models' health (health.go).

// Switch is one change of a session's model made because a model failed
// or was cooling: from, to, why and when. A switch model.failed asks of the
// client is Pending until the session is seen on To (PROTOCOL.md 4.8):
// the client may never have applied it. Attempt is the retry attempt it
// answered (0: none given); Variant and Rung are those of the fallback,
// the model decision the session gets once the switch applied.
type Switch struct {
	From    string    `json:"from"`
	To      string    `json:"to"`
	Variant string    `json:"variant,omitempty"`
	Rung    string    `json:"rung,omitempty"`
	Reason  string    `json:"reason"`
	At      time.Time `json:"at"`
	Attempt int       `json:"attempt,omitempty"`
	Pending bool      `json:"pending,omitempty"`
}

// switchOverhead is a switch's fixed cost: its struct, its time and the
// JSON around its strings.
const switchOverhead = 96

func switchesCost(list []Switch) int {
	n := 0
	for _, sw := range list {
		n += switchOverhead + jsonLen(sw.From) + jsonLen(sw.To) + jsonLen(sw.Reason) + jsonLen(sw.Variant) + jsonLen(sw.Rung)
	}
	return n
}

// sessionExtraCost is what a session's parent, running model and switches
// add to it.
func sessionExtraCost(sa *sessionAgent) int {
	return jsonLen(sa.parent) + jsonLen(sa.running) + switchesCost(sa.switches)
}

// restoredSwitches keeps the well-formed switches of a state file, within
// the caps.
func restoredSwitches(list []Switch) []Switch {
	var out []Switch
	for _, sw := range list {
		if sw.From == "" || sw.To == "" || !sw.fits() {
			continue
		}
		sw.Reason = cutText(sw.Reason, MaxReasonBytes)
		out = append(out, sw)
	}
	if len(out) > MaxSwitchesPerSession {
		out = out[len(out)-MaxSwitchesPerSession:]
	}
	return out
}

// fits: the switch's strings are within the caps (the reason is cut).
func (sw Switch) fits() bool {
	return len(sw.From) <= MaxModelBytes && len(sw.To) <= MaxModelBytes && len(sw.Variant) <= MaxModelBytes && len(sw.Rung) <= MaxModelBytes && sw.Attempt >= 0
}

// kept is sw as the store keeps it: its strings interned, the reason cut.
func (sw Switch) kept() Switch {
	sw.From, sw.To, sw.Variant, sw.Rung = keep(sw.From), keep(sw.To), keep(sw.Variant), keep(sw.Rung)
	sw.Reason = keep(cutText(sw.Reason, MaxReasonBytes))
	return sw
}

// sameAs: o is the same switch as sw (from, to and the attempt it answered).
func (sw Switch) sameAs(o Switch) bool {
	return sw.From == o.From && sw.To == o.To && sw.Attempt == o.Attempt
}
