package sessiondb

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"strings"
	"time"

	"github.com/hookwire/hookwire/sessions"
)

// The prompt-cache figures in the state database: one row per session, its figures
// as the JSON of CacheRecord, written through on each usage counted and
// read through when a process first meets the session (the next `opencode
// run --session` compares its first request with the last one of the
// previous process). A database older than the table gains it when a
// sidecar opens it for writing (schema.go); a read-only reader of one
// finds none and lists nothing.

// noCacheTable: a database of format 1 opened read-only, that no process
// had written figures to.
func noCacheTable(err error) bool {
	return err != nil && strings.Contains(err.Error(), "no such table: cache")
}

// ReadCache reads session's figures; none when there is no row, no table,
// or a row this build cannot read (it is replaced at the next write).
func (d cacheRows) Read(ctx context.Context, session string) (sessions.CacheRecord, bool, error) {
	var data string
	err := d.c.queryRow(ctx, "SELECT data FROM cache WHERE session=?", session).Scan(&data)
	switch {
	case err != nil && (noCacheTable(err) || errors.Is(err, sql.ErrNoRows)):
		return sessions.CacheRecord{}, false, nil
	case err != nil:
		return sessions.CacheRecord{}, false, classify(err)
	}
	var sc sessions.CacheRecord
	if json.Unmarshal([]byte(data), &sc) != nil {
		return sessions.CacheRecord{}, false, nil
	}
	return sc, true, nil
}

// WriteCache writes sc's figures with the bytes the budget counts for the
// row, and forgets the rows beyond MaxCacheSessions, least recently used
// first.
func (d cacheRows) Write(ctx context.Context, sc sessions.CacheRecord, used time.Time) error {
	data, err := json.Marshal(sc)
	if err != nil {
		return err
	}
	if err := d.c.exec(ctx, "INSERT INTO cache(session, used, bytes, data) VALUES(?,?,?,?) ON CONFLICT(session) DO UPDATE SET used=excluded.used, bytes=excluded.bytes, data=excluded.data",
		sc.Session, used.UnixNano(), sessions.CacheRowCost(sc.Session, len(data)), string(data)); err != nil {
		return classify(err)
	}
	return classify(d.c.exec(ctx, "DELETE FROM cache WHERE session IN (SELECT session FROM cache ORDER BY used DESC LIMIT -1 OFFSET ?)", sessions.MaxCacheSessions))
}

// DeleteCache forgets session's row (session.deleted).
func (d cacheRows) Delete(ctx context.Context, session string) error {
	if err := d.c.exec(ctx, "DELETE FROM cache WHERE session=?", session); err != nil && !noCacheTable(err) {
		return classify(err)
	}
	return nil
}

// ReadCacheAll reads every session's figures, the most recently used first.
func (d cacheRows) ReadAll(ctx context.Context) ([]sessions.CacheRecord, error) {
	rows, err := d.c.query(ctx, "SELECT data FROM cache ORDER BY used DESC, session")
	if noCacheTable(err) {
		return nil, nil
	}
	if err != nil {
		return nil, classify(err)
	}
	defer rows.Close()
	var out []sessions.CacheRecord
	for rows.Next() {
		var data string
		if err := rows.Scan(&data); err != nil {
			return nil, classify(err)
		}
		var sc sessions.CacheRecord
		if json.Unmarshal([]byte(data), &sc) == nil && sc.Session != "" {
			out = append(out, sc)
		}
	}
	return out, classify(rows.Err())
}
