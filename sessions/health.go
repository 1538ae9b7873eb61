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

// healthSet is the models' health: pure, no lock and no IO, within
// MaxHealthModels.
type healthSet map[string]Health

// get is model's health, if kept.
func (b healthSet) get(model string) (Health, bool) {
	h, ok := b[model]
	return h, ok
}

// put adds or replaces one model's health, forgetting the model whose
// latest failure is oldest beyond MaxHealthModels.
func (b healthSet) put(h Health) {
	b[h.Model] = h
	for len(b) > MaxHealthModels {
		oldest := ""
		for m, x := range b {
			if oldest == "" || x.Last.Before(b[oldest].Last) {
				oldest = m
			}
		}
		delete(b, oldest)
	}
}

// list is every model's health, the latest failure first.
func (b healthSet) list() []Health {
	out := make([]Health, 0, len(b))
	for _, h := range b {
		out = append(out, h)
	}
	SortHealth(out)
	return out
}

// ProviderHealth is the store's methods for the models' health (PROTOCOL.md
// 4.8): healthSet under the store's lock, with a database read from there,
// so a failure another process saw counts at once.
type ProviderHealth struct{ s *Store }

// ProviderHealth is the store's models' health.
func (s *Store) ProviderHealth() ProviderHealth { return ProviderHealth{s} }

// Of returns model's health, if any is kept.
func (p ProviderHealth) Of(model string) (core.ModelHealth, bool) {
	s := p.s
	s.mu.Lock()
	defer s.mu.Unlock()
	return p.of(model)
}

// of is Of; the caller holds mu.
func (p ProviderHealth) of(model string) (core.ModelHealth, bool) {
	s := p.s
	if d := s.db; d != nil {
		if h, ok, err := d.b.Health.Read(d.ctx, model); err == nil {
			return h.core(), ok
		}
	}
	h, ok := s.health.get(model)
	if !ok {
		return core.ModelHealth{}, false
	}
	return h.core(), true
}

// Cooling reports whether model cools down at now.
func (p ProviderHealth) Cooling(model string, now time.Time) bool {
	h, ok := p.Of(model)
	return ok && h.Cooling(now)
}

// Set keeps h as model's health. A model name over the model cap is not
// kept; the message is cut to MaxReasonBytes.
func (p ProviderHealth) Set(ctx context.Context, model string, h core.ModelHealth) {
	if model == "" || len(model) > MaxModelBytes {
		return
	}
	s := p.s
	s.lock(ctx)
	defer s.unlock()
	s.inWrite(func() error {
		if err := p.set(model, h); err != nil {
			s.db.fail(err)
		}
		return nil
	}, false)
}

// set is Set, in the write transaction begun (its write's error is the
// caller's to report); the caller holds mu.
func (p ProviderHealth) set(model string, h core.ModelHealth) error {
	s := p.s
	h.Message = cutText(h.Message, MaxReasonBytes)
	kept := healthOf(keep(model), h)
	s.health.put(kept)
	s.changes++
	if d := s.db; d != nil && d.inTx {
		return d.b.Health.Write(d.ctx, kept)
	}
	return nil
}

// List is every kept model's health, the latest failure first.
func (p ProviderHealth) List() []Health {
	s := p.s
	s.mu.Lock()
	defer s.mu.Unlock()
	if d := s.db; d != nil {
		if list, err := d.b.Health.ReadAll(d.ctx); err == nil {
			return list
		}
	}
	return s.health.list()
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
