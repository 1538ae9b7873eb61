package sessions

import (
	"context"
	"sort"
	"time"

	"github.com/hookwire/hookwire/core"
)

// Provider health and model switches (PROTOCOL.md 4.8): per provider/model,
// whether it cools down after a counted failure and until when; per
// session, its parent, the model its requests go to now, and the switches
// the sidecar made for it. Health is kept with the rest of the store, in
// the state file (snapshot.go, member "health"), so the next process on the
// project avoids a model this one saw fail. It is its own part of the
// store so it can move to another backing (a database) on its own.

// Bounds of the health part.
const (
	// MaxHealthModels is how many models' health is kept; beyond it the
	// model whose latest failure is oldest is forgotten.
	MaxHealthModels = 256
	// MaxSwitchesPerSession is how many switches a session keeps, newest.
	MaxSwitchesPerSession = 8
	// MaxReasonBytes caps a switch's reason and a health entry's message.
	MaxReasonBytes = 256
)

// Health is one model's health as status and the state file show it.
type Health struct {
	Model   string    `json:"model"`
	Until   time.Time `json:"until"`
	Strikes int       `json:"strikes"`
	Last    time.Time `json:"last"`
	Class   string    `json:"class,omitempty"`
	Message string    `json:"message,omitempty"`
}

// Switch is one change of a session's model made because a model failed
// or was cooling: from, to, why and when.
type Switch struct {
	From   string    `json:"from"`
	To     string    `json:"to"`
	Reason string    `json:"reason"`
	At     time.Time `json:"at"`
}

func healthOf(model string, h core.ModelHealth) Health {
	return Health{Model: model, Until: h.Until, Strikes: h.Strikes, Last: h.Last, Class: h.Class, Message: h.Message}
}

func (h Health) core() core.ModelHealth {
	return core.ModelHealth{Until: h.Until, Strikes: h.Strikes, Last: h.Last, Class: h.Class, Message: h.Message}
}

// cutText cuts s to n bytes at a character boundary.
func cutText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return cutBytes(s, n)
}

// ModelHealth returns model's health, if any is kept. With a database it
// is read from there, so a failure another process saw counts at once.
func (s *Store) ModelHealth(model string) (core.ModelHealth, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if d := s.db; d != nil {
		if h, ok, err := d.b.ReadHealth(d.ctx, model); err == nil {
			return h.core(), ok
		}
	}
	h, ok := s.health[model]
	if !ok {
		return core.ModelHealth{}, false
	}
	return h.core(), true
}

// Cooling reports whether model cools down at now.
func (s *Store) Cooling(model string, now time.Time) bool {
	h, ok := s.ModelHealth(model)
	return ok && h.Cooling(now)
}

// SetModelHealth keeps h as model's health. A model name over the model cap
// is not kept; the message is cut to MaxReasonBytes.
func (s *Store) SetModelHealth(ctx context.Context, model string, h core.ModelHealth) {
	if model == "" || len(model) > MaxModelBytes {
		return
	}
	s.lock(ctx)
	defer s.unlock()
	s.begin()
	h.Message = cutText(h.Message, MaxReasonBytes)
	kept := healthOf(keep(model), h)
	s.putHealth(kept)
	if d := s.db; d != nil && d.inTx {
		if err := d.b.WriteHealth(d.ctx, kept); err != nil {
			d.fail(err)
		}
	}
	s.changed()
}

// putHealth adds or replaces one health entry within MaxHealthModels; the
// caller holds mu.
func (s *Store) putHealth(h Health) {
	if s.health == nil {
		s.health = make(map[string]Health)
	}
	s.health[h.Model] = h
	for len(s.health) > MaxHealthModels {
		oldest := ""
		for m, x := range s.health {
			if oldest == "" || x.Last.Before(s.health[oldest].Last) {
				oldest = m
			}
		}
		delete(s.health, oldest)
	}
}

// HealthList is every kept model's health, the latest failure first.
func (s *Store) HealthList() []Health {
	s.mu.Lock()
	defer s.mu.Unlock()
	if d := s.db; d != nil {
		if list, err := d.b.ReadHealthAll(d.ctx); err == nil {
			return list
		}
	}
	return s.healthList()
}

func (s *Store) healthList() []Health {
	out := make([]Health, 0, len(s.health))
	for _, h := range s.health {
		out = append(out, h)
	}
	SortHealth(out)
	return out
}

// SortHealth orders out the latest failure first (the store's list and
// sessiondb's rows share it).
func SortHealth(out []Health) {
	sort.Slice(out, func(i, j int) bool {
		if !out[i].Last.Equal(out[j].Last) {
			return out[i].Last.After(out[j].Last)
		}
		return out[i].Model < out[j].Model
	})
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
