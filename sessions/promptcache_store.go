package sessions

import (
	"context"
	"errors"
	"time"

	"github.com/hookwire/hookwire/core"
)

// PromptCache is the store's prompt-cache figures (PROTOCOL.md 4.9): the
// cacheSet (promptcache.go) under the store's lock, read through from the
// database and written to it.
type PromptCache struct{ s *Store }

// PromptCache is the store's prompt-cache figures.
func (s *Store) PromptCache() PromptCache { return PromptCache{s} }

// Prompt records the prompt of a request of session that is on its way
// (chat.messages.transform): the usage that comes next for the session is
// paired with it.
func (c PromptCache) Prompt(session string, p *core.PromptPrint) {
	if session == "" || len(session) > MaxIDBytes || p == nil {
		return
	}
	s := c.s
	s.mu.Lock()
	defer s.mu.Unlock()
	s.cache.session(session, s.db.loadCache).prompt(p)
}

// System records the system prompt of session's request on its way
// (chat.system.transform): system hashes what came to hookwire, block what
// hookwire added. Only the first after a Prompt counts: OpenCode's title
// request goes through the system transform alone.
func (c PromptCache) System(session string, system, block uint64) {
	s := c.s
	s.mu.Lock()
	defer s.mu.Unlock()
	s.cache.system(session, system, block)
}

// Usage counts one assistant message's usage. A message counted before is
// counted again with its new figures (OpenCode reports a message more than
// once). It returns the bust it found, if any, and whether it is the
// session's second (or later) in a row.
func (c PromptCache) Usage(ctx context.Context, u Usage) (bust *CacheBust, inARow bool) {
	if u.Session == "" || u.Message == "" || len(u.Session) > MaxIDBytes || len(u.Message) > MaxIDBytes {
		return nil, false
	}
	if len(u.Model) > MaxIDBytes {
		u.Model = ""
	}
	s := c.s
	s.lock(ctx)
	defer s.unlock()
	// The parent and agent as the store knows them now, while the task
	// runs: its entry may be forgotten later (maxSessionsPerAgent).
	parent, agent := c.parentAndAgent(u.Session)
	cs := s.cache.session(u.Session, s.db.loadCache)
	if parent != "" {
		cs.Parent = parent
	}
	if agent != "" {
		cs.Agent = agent
	}
	changed, bust, inARow := s.cache.count(cs, u)
	if changed {
		c.save(cs)
	}
	return bust, inARow
}

// List returns every session's figures, the most recently used first,
// with the parent and agent the store knows for it.
func (c PromptCache) List() []CacheSession {
	s := c.s
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []CacheSession
	if d := s.db; d != nil {
		// The database's: every process's sessions, not only this one's.
		rows, err := d.b.Cache.ReadAll(d.ctx)
		if err != nil {
			d.fail(err)
		}
		for _, sc := range rows {
			out = append(out, sc.CacheSession)
		}
		// This process's own figures the database lacks (read only, or
		// a write failed), after the database's.
		seen := make(map[string]bool, len(out))
		for _, c := range out {
			seen[c.Session] = true
		}
		for _, cs := range s.cache.sessions.All() {
			if !seen[cs.Session] && cs.Requests > 0 {
				f, _ := cs.figures()
				out = append(out, f)
			}
		}
	}
	if out == nil {
		out = s.cache.list()
	}
	for i := range out {
		c.withParent(&out[i])
	}
	return out
}

// Of returns one session's figures as List gives them, reading no other
// session's: what a bust in a row tells the client. The set's when it
// holds the session (this process counted its last usage), else the
// database's row.
func (c PromptCache) Of(session string) (CacheSession, bool) {
	s := c.s
	s.mu.Lock()
	defer s.mu.Unlock()
	cs, ok := s.cache.sessions.Get(session)
	if !ok {
		if sc := s.db.loadCache(session); sc != nil {
			cs, _ = loadCacheSession(sc)
		}
	}
	f, ok := cs.figures()
	if !ok {
		return CacheSession{}, false
	}
	c.withParent(&f)
	return f, true
}

// withParent gives f the parent and agent the store knows for its
// session, where it knows them; the caller holds mu.
func (c PromptCache) withParent(f *CacheSession) {
	if f.Busts == nil {
		f.Busts = []CacheBust{}
	}
	parent, agent := c.parentAndAgent(f.Session)
	if parent != "" {
		f.Parent = parent
	}
	if agent != "" {
		f.Agent = agent
	}
}

// attribute records that a task call from parent, for agent, ran in
// session (tool.execute.after): a task session's usage comes before its
// entry is made, and the entry may be forgotten later
// (maxSessionsPerAgent), so its figures keep both. Only a session with
// figures is written; the caller holds mu.
func (c PromptCache) attribute(session, parent, agent string) {
	s := c.s
	cs, ok := s.cache.sessions.Get(session)
	if !ok {
		sc := s.db.loadCache(session)
		if sc == nil {
			return
		}
		cs = s.cache.session(session, func(string) *CacheRecord { return sc })
	}
	if s.cache.attribute(cs, parent, agent) {
		c.save(cs)
	}
}

// forget drops session's figures (session.deleted), from the database
// too; the caller holds mu.
func (c PromptCache) forget(session string) {
	c.s.db.deleteCache(session)
	c.s.cache.forget(session)
}

// save writes cs's figures, stamped with the store's clock, in the
// method's write transaction (one of its own, when none runs), so the
// row takes its turn with the other writers and the prune that follows
// keeps the table inside the byte budget; the caller holds mu.
func (c PromptCache) save(cs *cacheSession) {
	s := c.s
	if !s.db.writable() {
		return
	}
	s.inWrite(func() error {
		s.db.saveCache(cs.save(), s.cfg.Now())
		return nil
	}, false)
}

// writeAll writes every session's figures into the database the store is
// being imported into (WriteAll), the least recently used first, each
// stamped a nanosecond after the one before, so the database keeps the
// set's order; the caller holds mu.
func (c PromptCache) writeAll() error {
	s := c.s
	if s.cache.sessions.Len() == 0 {
		return nil
	}
	if !s.db.writable() {
		return errors.New("the prompt-cache table cannot be made")
	}
	now := s.cfg.Now()
	i := 0
	for _, cs := range s.cache.sessions.Backward() {
		if err := s.db.b.Cache.Write(s.db.ctx, cs.save(), now.Add(time.Duration(i))); err != nil {
			return err
		}
		i++
	}
	return nil
}

// The prompt-cache rows, on the store's persistence (nil: memory only); the
// caller of each holds the store's mu.

// writable reports whether what the store changes is written (a database
// open for writing, which has every table).
func (d *persistence) writable() bool { return d != nil && !d.readOnly }

// loadCache reads session's figures from the database, nil when it has
// none (or there is no database).
func (d *persistence) loadCache(session string) *CacheRecord {
	if d == nil {
		return nil
	}
	sc, ok, err := d.b.Cache.Read(d.ctx, session)
	if err != nil {
		d.fail(err)
		return nil
	}
	if !ok || sc.Session != session {
		return nil // a row this build cannot read is replaced at the next write
	}
	return &sc
}

// saveCache writes one session's figures inside the write transaction,
// when one could begin.
func (d *persistence) saveCache(rec CacheRecord, used time.Time) {
	if !d.inTx {
		return
	}
	if err := d.b.Cache.Write(d.ctx, rec, used); err != nil {
		d.abort(err)
		return
	}
	d.pruneDue = true
}

// deleteCache forgets session's row (session.deleted).
func (d *persistence) deleteCache(session string) {
	if !d.writable() {
		return
	}
	if err := d.b.Cache.Delete(d.ctx, session); err != nil {
		d.fail(err)
	}
}

// parentAndAgent is the parent that started session with a task and the
// agent it runs, as far as the store knows them ("" where not); the
// caller holds mu.
func (c PromptCache) parentAndAgent(session string) (parent, agent string) {
	s := c.s
	if sa := s.cachedAgent(session); sa != nil {
		agent, parent = sa.agent, sa.parent // the parent session.created named (tracking.go)
		if parent != "" {
			return parent, agent
		}
	}
	for e := range s.parents.byTaskID[session] {
		parent = e.parent.id
		if agent == "" {
			agent = e.agent.name
		}
		return parent, agent
	}
	if s.db != nil {
		if ps := s.db.parentsOfTask(session); len(ps) > 0 {
			parent = ps[0]
		}
	}
	return parent, agent
}
