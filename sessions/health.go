package sessions

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
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
		if h, ok, err := d.readHealth(model); err == nil {
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
		if err := d.writeHealth(kept); err != nil {
			d.fail(classify(err))
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
		if list, err := d.readHealthAll(); err == nil {
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
	sortHealth(out)
	return out
}

func sortHealth(out []Health) {
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

// --- The database side ----------------------------------------------------------

func healthFromRow(model string, until, strikes, last int64, class, message string) Health {
	return Health{Model: model, Until: time.Unix(0, until).UTC(), Strikes: int(strikes), Last: time.Unix(0, last).UTC(), Class: class, Message: message}
}

// readHealth reads one model's row.
func (d *storeDB) readHealth(model string) (Health, bool, error) {
	var until, strikes, last int64
	var class, message string
	err := d.c.queryRow(d.ctx, "SELECT until_ns, strikes, last_ns, class, message FROM health WHERE model=?", model).Scan(&until, &strikes, &last, &class, &message)
	if errors.Is(err, sql.ErrNoRows) {
		return Health{}, false, nil
	}
	if err != nil {
		return Health{}, false, err
	}
	return healthFromRow(model, until, strikes, last, class, message), true, nil
}

// readHealthAll reads every row, the latest failure first.
func (d *storeDB) readHealthAll() ([]Health, error) {
	rows, err := d.c.query(d.ctx, "SELECT model, until_ns, strikes, last_ns, class, message FROM health")
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []Health{}
	for rows.Next() {
		var model, class, message string
		var until, strikes, last int64
		if err := rows.Scan(&model, &until, &strikes, &last, &class, &message); err != nil {
			return nil, err
		}
		out = append(out, healthFromRow(model, until, strikes, last, class, message))
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	sortHealth(out)
	return out, nil
}

// writeHealth writes one model's row in the open transaction and keeps
// the table within MaxHealthModels (the oldest failure goes first).
func (d *storeDB) writeHealth(h Health) error {
	if err := d.c.exec(d.ctx, `INSERT INTO health(model,until_ns,strikes,last_ns,class,message) VALUES(?,?,?,?,?,?)
		ON CONFLICT(model) DO UPDATE SET until_ns=excluded.until_ns, strikes=excluded.strikes, last_ns=excluded.last_ns,
		class=excluded.class, message=excluded.message`,
		h.Model, h.Until.UnixNano(), h.Strikes, h.Last.UnixNano(), h.Class, h.Message); err != nil {
		return err
	}
	return d.c.exec(d.ctx, "DELETE FROM health WHERE model NOT IN (SELECT model FROM health ORDER BY last_ns DESC, model LIMIT ?)", MaxHealthModels)
}

// trackedRow is a tracked session's model column: the model decision's
// members and, beside them, the session's parent, running model and
// switches (an earlier build reads only the decision's).
type trackedRow struct {
	Model    string   `json:"model,omitempty"`
	Variant  string   `json:"variant,omitempty"`
	Rung     string   `json:"rung,omitempty"`
	Changed  bool     `json:"changed,omitempty"`
	Parent   string   `json:"parent,omitempty"`
	Running  string   `json:"running,omitempty"`
	Switches []Switch `json:"switches,omitempty"`
}

// trackedModelColumn is sa's model column; nil (NULL) when it has nothing.
func trackedModelColumn(sa *sessionAgent) (any, error) {
	if sa.model == nil && sa.parent == "" && sa.running == "" && len(sa.switches) == 0 {
		return nil, nil
	}
	row := trackedRow{Parent: sa.parent, Running: sa.running, Switches: sa.switches}
	if m := sa.model; m != nil {
		row.Model, row.Variant, row.Rung, row.Changed = m.Model, m.Variant, m.Rung, m.Changed
	}
	b, err := json.Marshal(row)
	if err != nil {
		return nil, err
	}
	return string(b), nil
}

// restoreTrackedColumn fills sa from its model column, within the caps.
func restoreTrackedColumn(sa *sessionAgent, column string) {
	var row trackedRow
	if json.Unmarshal([]byte(column), &row) != nil {
		return
	}
	sa.model = restoredModel(&ModelDecision{Model: row.Model, Variant: row.Variant, Rung: row.Rung, Changed: row.Changed})
	if len(row.Parent) <= MaxIDBytes {
		sa.parent = row.Parent
	}
	if len(row.Running) <= MaxModelBytes {
		sa.running = row.Running
	}
	sa.switches = restoredSwitches(row.Switches)
}
