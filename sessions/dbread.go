package sessions

import (
	"math"
	"strconv"
)

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// unbounded is a Config that drops nothing: what a reader of the whole
// database lists is what it holds.
var unbounded = Config{
	MaxSessionsPerAgent: math.MaxInt,
	MaxParents:          math.MaxInt,
	MaxTrackedSessions:  math.MaxInt,
	MaxStateBytes:       math.MaxInt,
}

// readAll reads the whole database into a new memory-only store with no
// bounds, the most recently written parents and sessions first; the
// caller holds the store's mu (or owns d alone). It reads in one
// transaction, so it sees one state however others write.
func (d *storeDB) readAll() (*Store, error) {
	if !d.inTx {
		if err := d.c.exec(d.ctx, "BEGIN"); err != nil {
			return nil, classify(err)
		}
		defer d.c.exec(d.ctx, "COMMIT")
	}
	reader := New(unbounded)
	reader.db = newStoreDB(d.ctx, d.c, true, func(error) {})
	reader.db.epoch = 1
	rows, err := d.c.query(d.ctx, "SELECT id, rev FROM parents ORDER BY rev DESC, id")
	if err != nil {
		return nil, classify(err)
	}
	type parentRev struct {
		id  string
		rev int64
	}
	var ids []parentRev
	for rows.Next() {
		var pr parentRev
		if err := rows.Scan(&pr.id, &pr.rev); err != nil {
			rows.Close()
			return nil, classify(err)
		}
		ids = append(ids, pr)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, classify(err)
	}
	for i := len(ids) - 1; i >= 0; i-- { // oldest first: each read becomes the most recent
		if _, err := reader.readParent(ids[i].id, ids[i].rev); err != nil {
			return nil, classify(err)
		}
	}
	rows, err = d.c.query(d.ctx, "SELECT session FROM tracked ORDER BY rev, session")
	if err != nil {
		return nil, classify(err)
	}
	var sessions []string
	for rows.Next() {
		var session string
		if err := rows.Scan(&session); err != nil {
			rows.Close()
			return nil, classify(err)
		}
		sessions = append(sessions, session)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, classify(err)
	}
	for _, session := range sessions {
		reader.cachedAgent(session)
	}
	if list, err := d.readHealthAll(); err == nil { // no table: a database no sidecar of this build has written
		for _, h := range list {
			reader.putHealth(h)
		}
	}
	caches, err := d.readCache()
	if err != nil {
		return nil, err
	}
	if err := reader.cache.restore(caches); err != nil {
		return nil, err
	}
	reader.db = nil
	return reader, nil
}

// stats counts what the database holds.
func (d *storeDB) stats() (Stats, error) {
	var st Stats
	err := d.c.queryRow(d.ctx, `SELECT (SELECT count(*) FROM parents), (SELECT count(*) FROM entries),
		(SELECT count(*) FROM tracked), (SELECT count(*) FROM frozen)`).Scan(&st.Parents, &st.Entries, &st.TrackedSessions, &st.FrozenBlocks)
	if err != nil {
		d.fail(classify(err))
	}
	return st, err
}

// parentsOfTask lists the parents with an entry whose task id is id.
func (d *storeDB) parentsOfTask(id string) []string {
	rows, err := d.c.query(d.ctx, "SELECT DISTINCT p.id FROM entries e JOIN parents p ON p.pid=e.pid WHERE e.task_id=?", id)
	if err != nil {
		d.fail(classify(err))
		return nil
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var p string
		if rows.Scan(&p) == nil {
			out = append(out, p)
		}
	}
	return out
}
