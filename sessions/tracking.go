package sessions

import "time"

// A tracked session's parent, the model it runs on and the switches off
// failing models (PROTOCOL.md 4.7, 4.8): kept with its agent
// (sessionAgent, agents.go), apart from the models' health (health.go).

// Switch is one change of a session's model made because a model failed
// or was cooling: from, to, why and when.
type Switch struct {
	From   string    `json:"from"`
	To     string    `json:"to"`
	Reason string    `json:"reason"`
	At     time.Time `json:"at"`
}

// switchOverhead is a switch's fixed cost: its struct, its time and the
// JSON around its strings.
const switchOverhead = 96

func switchesCost(list []Switch) int {
	n := 0
	for _, sw := range list {
		n += switchOverhead + jsonLen(sw.From) + jsonLen(sw.To) + jsonLen(sw.Reason)
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
		if sw.From == "" || sw.To == "" || len(sw.From) > MaxModelBytes || len(sw.To) > MaxModelBytes {
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
