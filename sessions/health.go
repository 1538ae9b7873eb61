package sessions

import (
	"context"
	"sort"
	"time"

	"github.com/hookwire/hookwire/core"
)

// Provider health (PROTOCOL.md 4.8): per provider/model, whether it cools
// down after a counted failure and until when. It is kept in the project's
// state (its own table), so the next process on the project avoids a model
// this one saw fail. A session's parent, running model and switches are
// the tracked session's (tracking.go).

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
		if h, ok, err := d.b.Health.Read(d.ctx, model); err == nil {
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
		if err := d.b.Health.Write(d.ctx, kept); err != nil {
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
		if list, err := d.b.Health.ReadAll(d.ctx); err == nil {
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
