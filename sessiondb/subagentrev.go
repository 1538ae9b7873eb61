package sessiondb

import (
	"context"
	"errors"
	"time"
)

// The subagents' change revision: each write transaction stamps the rows
// it changes with the next value of a counter in meta, and Changes, the
// observer's check, reads only the rows past the last revision it saw.

// revKey is the subagents' revision counter in the store's meta table
// (the store reads only its own keys there).
const revKey = "subagent_rev"

// subTx is one intent's transaction: its revision and the roots it
// changed.
type subTx struct {
	c     *dbConn
	pid   int
	rev   int64
	roots []string
}

// nextRev is the revision this transaction writes (the counter's next),
// taken once.
func (t *subTx) nextRev(ctx context.Context) (int64, error) {
	if t.rev == 0 {
		// A counter of its own in meta, never reused: a revision read
		// off the rows would go back when the newest rows are deleted,
		// and the observer (Changes) would miss the writes after.
		if err := t.c.exec(ctx, "INSERT INTO meta(key, value) VALUES('"+revKey+"', 1) ON CONFLICT(key) DO UPDATE SET value=value+1"); err != nil {
			return 0, err
		}
		if err := t.c.queryRow(ctx, "SELECT value FROM meta WHERE key='"+revKey+"'").Scan(&t.rev); err != nil {
			return 0, err
		}
	}
	return t.rev, nil
}

// changed notes root as changed and stamps its row with the revision.
func (t *subTx) changed(ctx context.Context, root string, at time.Time) error {
	rev, err := t.nextRev(ctx)
	if err != nil {
		return err
	}
	if err := t.c.exec(ctx, "INSERT INTO subagent_roots(root, used_ns, rev) VALUES(?,?,?) ON CONFLICT(root) DO UPDATE SET used_ns=max(used_ns, excluded.used_ns), rev=excluded.rev", root, at.UnixNano(), rev); err != nil {
		return err
	}
	for _, r := range t.roots {
		if r == root {
			return nil
		}
	}
	t.roots = append(t.roots, root)
	return nil
}

// Changes reports the top-level parents whose records changed since the
// last call (none at the first): for the observer. When no connection has
// committed since (PRAGMA data_version on the kept connection), it reads
// nothing more; else only the rows whose revision is past the last one
// seen.
func (s *Subagents) Changes(ctx context.Context) ([]string, error) {
	ctx = quiet(ctx)
	s.mu.Lock()
	defer s.mu.Unlock()
	c, err := s.conn(ctx)
	if errors.Is(err, errNoFile) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	v, err := c.dataVersion(ctx)
	if err != nil {
		return nil, classify(err)
	}
	if s.seen && v == s.version {
		return nil, nil
	}
	if !s.seen {
		// The first look takes the revision to start from, from the
		// indexes' ends, reading no rows.
		err := c.queryRow(ctx, "SELECT coalesce((SELECT value FROM meta WHERE key='"+revKey+"'), 0)").Scan(&s.rev)
		if err != nil && !noSubagentTables(err) {
			return nil, classify(err)
		}
		s.version, s.seen = v, true
		return nil, nil
	}
	s.version = v
	var roots []string
	var top int64
	rows, err := c.query(ctx, `SELECT root, rev FROM subagents WHERE rev>? UNION ALL SELECT root, rev FROM subagent_roots WHERE rev>?`, s.rev, s.rev)
	if noSubagentTables(err) {
		return nil, nil
	}
	if err != nil {
		return nil, classify(err)
	}
	defer rows.Close()
	seen := map[string]bool{}
	for rows.Next() {
		var root string
		var rev int64
		if err := rows.Scan(&root, &rev); err != nil {
			return nil, classify(err)
		}
		s.rowsRead.Add(1)
		top = max(top, rev)
		if !seen[root] {
			seen[root] = true
			roots = append(roots, root)
		}
	}
	if err := rows.Err(); err != nil {
		return nil, classify(err)
	}
	s.rev = max(s.rev, top)
	return roots, nil
}
