package sessiondb

import (
	"context"
	"database/sql"
	"errors"

	"github.com/hookwire/hookwire/sessions"
)

// Prune: the database brought toward the store's bounds, a batch at a
// time (PROTOCOL.md 6, Limits).

func (d upkeepRows) Prune(ctx context.Context, b sessions.Bounds) (sessions.Pruned, error) {
	pr, err := prune(ctx, d.c, b)
	return pr, classify(err)
}

// prune brings the database toward b: MaxParents and MaxTrackedSessions
// by least recent write, then the byte budget as the store's
// enforceBudget keeps the cache (never the most recently written
// parent), the prompt-cache rows (cachedb.go) counted and forgotten with
// them. It forgets at most b.Batch rows of each table, each found
// through the revision index (time linear in what it forgets); OverBound
// says whether more is left for the next transaction.
func prune(ctx context.Context, c *dbConn, b sessions.Bounds) (sessions.Pruned, error) {
	var out sessions.Pruned
	var parents, tracked int
	var parentBytes, trackedBytes int64
	if err := c.queryRow(ctx, "SELECT count(*), coalesce(sum(bytes),0) FROM parents").Scan(&parents, &parentBytes); err != nil {
		return out, err
	}
	if err := c.queryRow(ctx, "SELECT count(*), coalesce(sum(bytes),0) FROM tracked").Scan(&tracked, &trackedBytes); err != nil {
		return out, err
	}
	// The prompt-cache rows (cachedb.go) count in the same budget.
	var cacheRows int
	var cacheBytes int64
	if err := c.queryRow(ctx, "SELECT count(*), coalesce(sum(bytes),0) FROM cache").Scan(&cacheRows, &cacheBytes); err != nil {
		return out, err
	}
	parentBudget, trackedBudget, cacheBudget := b.Batch, b.Batch, b.Batch
	dropped := false
	// dropParents forgets the n least recently written parents.
	dropParents := func(n int) error {
		const oldest = "SELECT pid FROM parents ORDER BY rev, pid LIMIT ?"
		ids, bytes, err := keysAndBytes(ctx, c, "SELECT id, bytes FROM parents ORDER BY rev, pid LIMIT ?", n)
		if err != nil {
			return err
		}
		// The same n parents (nothing else writes in the transaction),
		// each table's rows by its pid index.
		for _, q := range []string{
			"DELETE FROM entries WHERE pid IN (" + oldest + ")", "DELETE FROM counters WHERE pid IN (" + oldest + ")",
			"DELETE FROM frozen WHERE pid IN (" + oldest + ")", "DELETE FROM parents WHERE pid IN (" + oldest + ")",
		} {
			if err := c.exec(ctx, q, n); err != nil {
				return err
			}
		}
		out.Parents = append(out.Parents, ids...)
		dropped = dropped || len(ids) > 0
		parents -= len(ids)
		parentBytes -= bytes
		parentBudget -= len(ids)
		if len(ids) < n {
			parentBudget = 0 // none left to drop
		}
		return nil
	}
	dropTracked := func(n int) error {
		sessions, bytes, err := keysAndBytes(ctx, c, "SELECT session, bytes FROM tracked ORDER BY rev, session LIMIT ?", n)
		if err != nil {
			return err
		}
		if err := c.exec(ctx, "DELETE FROM tracked WHERE session IN (SELECT session FROM tracked ORDER BY rev, session LIMIT ?)", n); err != nil {
			return err
		}
		out.Tracked = append(out.Tracked, sessions...)
		dropped = dropped || len(sessions) > 0
		tracked -= len(sessions)
		trackedBytes -= bytes
		trackedBudget -= len(sessions)
		if len(sessions) < n {
			trackedBudget = 0
		}
		return nil
	}
	// dropCache forgets the least recently used prompt-cache row. A
	// process whose memory holds the session writes it again at its next
	// usage.
	dropCache := func() error {
		var b int64
		err := c.queryRow(ctx, "DELETE FROM cache WHERE session=(SELECT session FROM cache ORDER BY used, session LIMIT 1) RETURNING bytes").Scan(&b)
		if errors.Is(err, sql.ErrNoRows) {
			cacheBudget = 0
			return nil
		}
		if err != nil {
			return err
		}
		dropped = true
		cacheRows--
		cacheBytes -= b
		cacheBudget--
		return nil
	}
	defer func() {
		if dropped {
			// Give the pages of what was forgotten back to the file
			// system, so the file stays near what the budget counts.
			c.exec(ctx, "PRAGMA incremental_vacuum")
		}
	}()
	if n := min(parents-b.MaxParents, parentBudget); n > 0 {
		if err := dropParents(n); err != nil {
			return out, err
		}
	}
	if n := min(tracked-b.MaxTrackedSessions, trackedBudget); n > 0 {
		if err := dropTracked(n); err != nil {
			return out, err
		}
	}
	budget := b.MaxBytes
	over := func() bool { return parentBytes+trackedBytes+cacheBytes > budget }
	// Beyond the budget, from the kind that holds the most bytes, as
	// enforceBudget does (never the last parent).
	for over() && (parentBudget > 0 || trackedBudget > 0 || cacheBudget > 0) {
		canParent := parents > 1 && parentBudget > 0
		canTracked := tracked > 0 && trackedBudget > 0
		canCache := cacheRows > 0 && cacheBudget > 0
		var err error
		switch {
		case canParent && (!canTracked || parentBytes >= trackedBytes) && (!canCache || parentBytes >= cacheBytes):
			err = dropParents(1)
		case canTracked && (!canCache || trackedBytes >= cacheBytes):
			err = dropTracked(1)
		case canCache:
			err = dropCache()
		default:
			parentBudget, trackedBudget, cacheBudget = 0, 0, 0
		}
		if err != nil {
			return out, err
		}
	}
	out.OverBound = parents > b.MaxParents || tracked > b.MaxTrackedSessions ||
		(over() && (parents > 1 || tracked > 0 || cacheRows > 0))
	return out, nil
}

// keysAndBytes runs query (rows of a key and its bytes, limited by n) and
// returns the keys in order with the sum of their bytes: what a prune is
// about to forget.
func keysAndBytes(ctx context.Context, c *dbConn, query string, n int) (keys []string, bytes int64, err error) {
	rows, err := c.query(ctx, query, n)
	if err != nil {
		return nil, 0, err
	}
	defer rows.Close()
	for rows.Next() {
		var key string
		var b int64
		if err := rows.Scan(&key, &b); err != nil {
			return nil, 0, err
		}
		keys = append(keys, key)
		bytes += b
	}
	return keys, bytes, rows.Err()
}
