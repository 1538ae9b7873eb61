package sessions

import (
	"context"
	"time"
)

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

// changeTracked runs change on session's tracked state in a write
// transaction when wanted says it would change something; the caller
// holds mu. A session that is not tracked changes nothing.
func (s *Store) changeTracked(session string, wanted func(*sessionAgent) bool, change func(*sessionAgent)) {
	s.refresh()
	sa := s.cachedAgent(session)
	if sa == nil || !wanted(sa) {
		return
	}
	s.begin()
	if sa = s.cachedAgent(session); sa == nil {
		return
	}
	before := trackedCost(sa)
	change(sa)
	s.trackedBytes += trackedCost(sa) - before
	s.markTracked(sa)
	s.changed()
	s.enforceBudget()
}

// SetParent records session's parent session (from session.created), for a
// tracked session. Ids over the cap are not kept.
func (s *Store) SetParent(ctx context.Context, session, parent string) {
	if len(parent) > MaxIDBytes {
		return
	}
	s.lock(ctx)
	defer s.unlock()
	s.changeTracked(session, func(sa *sessionAgent) bool { return sa.parent != parent },
		func(sa *sessionAgent) { sa.parent = keep(parent) })
}

// Parent returns session's parent ("" unknown).
func (s *Store) Parent(session string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.refresh()
	if sa := s.cachedAgent(session); sa != nil {
		return sa.parent
	}
	return ""
}

// SetRunning records the model session's requests go to now (its latest
// chat.message, after any change the sidecar made).
func (s *Store) SetRunning(ctx context.Context, session, model string) {
	if len(model) > MaxModelBytes {
		return
	}
	s.lock(ctx)
	defer s.unlock()
	s.changeTracked(session, func(sa *sessionAgent) bool { return sa.running != model },
		func(sa *sessionAgent) { sa.running = keep(model) })
}

// Running returns the model session's requests go to ("" unknown).
func (s *Store) Running(session string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.refresh()
	if sa := s.cachedAgent(session); sa != nil {
		return sa.running
	}
	return ""
}

// AddSwitch records sw for a tracked session, keeping the newest
// MaxSwitchesPerSession; the reason is cut to MaxReasonBytes.
func (s *Store) AddSwitch(ctx context.Context, session string, sw Switch) {
	if len(sw.From) > MaxModelBytes || len(sw.To) > MaxModelBytes {
		return
	}
	sw = Switch{From: keep(sw.From), To: keep(sw.To), Reason: keep(cutText(sw.Reason, MaxReasonBytes)), At: sw.At}
	s.lock(ctx)
	defer s.unlock()
	s.changeTracked(session, func(*sessionAgent) bool { return true }, func(sa *sessionAgent) {
		list := append(append([]Switch(nil), sa.switches...), sw)
		if len(list) > MaxSwitchesPerSession {
			list = list[len(list)-MaxSwitchesPerSession:]
		}
		sa.switches = list
	})
}

// Switches returns session's switches, oldest first.
func (s *Store) Switches(session string) []Switch {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.refresh()
	return s.switchesOf(session)
}

// switchesOf is Switches; the caller holds mu.
func (s *Store) switchesOf(session string) []Switch {
	sa := s.cachedAgent(session)
	if sa == nil || len(sa.switches) == 0 {
		return nil
	}
	return append([]Switch(nil), sa.switches...)
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
