package sessions

import (
	"database/sql"
	"encoding/json"
	"errors"
	"strings"
	"time"
)

// The cache book in the state database: one row per session, its figures
// as the JSON of snapshotCache, written through on each usage counted and
// read through when a process first meets the session (the next `opencode
// run --session` compares its first request with the last one of the
// previous process). A database older than the table gains it when a
// sidecar opens it for writing (schema.go); a read-only reader of one
// finds none and lists nothing. The caller of each function holds the store's mu.

// cacheWritable reports whether the figures go to a database (one open
// for writing has the table: schema.go's migration 3).
func (s *Store) cacheWritable() bool {
	return s.db != nil && !s.db.readOnly
}

// noCacheTable: a database of format 1 opened read-only, that no process
// had written figures to.
func noCacheTable(err error) bool {
	return err != nil && strings.Contains(err.Error(), "no such table: cache")
}

// cacheLoad reads session's figures from the database, nil when it has
// none (or there is no database).
func (s *Store) cacheLoad(session string) *snapshotCache {
	d := s.db
	if d == nil {
		return nil
	}
	var data string
	err := d.c.queryRow(d.ctx, "SELECT data FROM cache WHERE session=?", session).Scan(&data)
	switch {
	case err != nil && (noCacheTable(err) || errors.Is(err, sql.ErrNoRows)):
		return nil
	case err != nil:
		d.fail(classify(err))
		return nil
	}
	var sc snapshotCache
	if json.Unmarshal([]byte(data), &sc) != nil || sc.Session != session {
		return nil // a row this build cannot read is replaced at the next write
	}
	return &sc
}

// cacheSave writes cs's figures, and forgets the rows beyond
// MaxCacheSessions, least recently used first.
func (s *Store) cacheSave(cs *cacheSession) {
	if !s.cacheWritable() {
		return
	}
	data, err := json.Marshal(cs.save())
	if err != nil {
		return
	}
	d := s.db
	// In a write transaction (finished by the caller's unlock), so the
	// row takes its turn with the other writers and the prune that follows
	// keeps the table inside the byte budget.
	s.begin()
	if !d.inTx {
		return
	}
	if err := d.c.exec(d.ctx, "INSERT INTO cache(session, used, bytes, data) VALUES(?,?,?,?) ON CONFLICT(session) DO UPDATE SET used=excluded.used, bytes=excluded.bytes, data=excluded.data",
		cs.Session, time.Now().UnixNano(), cacheRowCost(cs.Session, len(data)), string(data)); err != nil {
		d.fail(classify(err))
		d.rollback()
		return
	}
	if err := d.c.exec(d.ctx, "DELETE FROM cache WHERE session IN (SELECT session FROM cache ORDER BY used DESC LIMIT -1 OFFSET ?)", MaxCacheSessions); err != nil {
		d.fail(classify(err))
		d.rollback()
		return
	}
	d.pruneDue = true
}

// cacheDelete forgets session's row (session.deleted).
func (s *Store) cacheDelete(session string) {
	if s.db == nil || s.db.readOnly {
		return
	}
	if err := s.db.c.exec(s.db.ctx, "DELETE FROM cache WHERE session=?", session); err != nil && !noCacheTable(err) {
		s.db.fail(classify(err))
	}
}

// readCache reads every session's figures, the most recently used first.
func (d *storeDB) readCache() ([]snapshotCache, error) {
	rows, err := d.c.query(d.ctx, "SELECT data FROM cache ORDER BY used DESC, session")
	if noCacheTable(err) {
		return nil, nil
	}
	if err != nil {
		return nil, classify(err)
	}
	defer rows.Close()
	var out []snapshotCache
	for rows.Next() {
		var data string
		if err := rows.Scan(&data); err != nil {
			return nil, classify(err)
		}
		var sc snapshotCache
		if json.Unmarshal([]byte(data), &sc) == nil && sc.Session != "" {
			out = append(out, sc)
		}
	}
	return out, classify(rows.Err())
}

// importCache writes every session's figures into the database the store
// is being imported into (importInto), the least recently used first; the
// caller holds mu.
func (s *Store) importCache() error {
	b := &s.cache
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.sessions.Len() == 0 {
		return nil
	}
	if !s.cacheWritable() {
		return errors.New("the prompt-cache table cannot be made")
	}
	for _, cs := range b.sessions.Backward() {
		data, err := json.Marshal(cs.save())
		if err != nil {
			return err
		}
		if err := s.db.c.exec(s.db.ctx, "INSERT INTO cache(session, used, bytes, data) VALUES(?,?,?,?) ON CONFLICT(session) DO UPDATE SET used=excluded.used, bytes=excluded.bytes, data=excluded.data",
			cs.Session, time.Now().UnixNano(), cacheRowCost(cs.Session, len(data)), string(data)); err != nil {
			return err
		}
	}
	return nil
}
