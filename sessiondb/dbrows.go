package sessiondb

import (
	"context"
	"database/sql"
	"errors"
	"strconv"
	"time"

	"github.com/hookwire/hookwire/sessions"
)

// The store's rows in the state database: storeDB is the Backend a Store
// keeps its state in (persistence.go says how the cache and the database
// agree), over one connection (db.go). Every error it returns is
// classified (a damaged file is errCorrupt or errNotDatabase).

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// storeDB is the Backend of the database on c.
type storeDB struct {
	c *dbConn
	// lister reads Page's pages on a read connection of its own
	// (dblist.go).
	lister lister
	// seen is PRAGMA data_version as last read, epoch how many times it
	// changed (Epoch): other connections' commits seen; looks counts the
	// reads of data_version (a test holds a request to one).
	seen  int64
	epoch uint64
	looks int
	// inRequest: a request is being served (BeginRequest); checked: its
	// epoch was read once already, so Epoch outside a write transaction
	// answers that again. writing: the store's write transaction runs.
	inRequest, checked, writing bool
}

// newStoreDB is the Backend of the database on c.
func newStoreDB(c *dbConn) *storeDB { return &storeDB{c: c} }

// The Backend's parts over one storeDB: each kind of state's rows are a
// type of their own, so a part asks for what it needs and no more.
type (
	txRows      struct{ *storeDB }
	parentRows  struct{ *storeDB }
	trackedRows struct{ *storeDB }
	healthRows  struct{ *storeDB }
	cacheRows   struct{ *storeDB }
	upkeepRows  struct{ *storeDB }
)

var (
	_ sessions.Transactions = txRows{}
	_ sessions.ParentRows   = parentRows{}
	_ sessions.TrackedRows  = trackedRows{}
	_ sessions.HealthRows   = healthRows{}
	_ sessions.CacheRows    = cacheRows{}
	_ sessions.Upkeep       = upkeepRows{}
)

// backend is the sessions.Backend over d.
func (d *storeDB) backend() sessions.Backend {
	return sessions.Backend{Tx: txRows{d}, Parents: parentRows{d}, Tracked: trackedRows{d},
		Health: healthRows{d}, Cache: cacheRows{d}, Upkeep: upkeepRows{d}}
}

// Epoch reads PRAGMA data_version, which changes when another connection
// commits, and counts its changes: the store's cached rows are checked
// against the database again when it moves on. Within a request it is
// read once for the reads and again in each write transaction (so a
// write decides on the latest state; BeginRequest).
func (d txRows) Epoch(ctx context.Context) (uint64, error) {
	if d.inRequest && d.checked && !d.writing {
		return d.epoch, nil
	}
	d.checked = d.inRequest
	d.looks++
	v, err := d.c.dataVersion(ctx)
	if err != nil {
		return 0, classify(err)
	}
	if d.epoch == 0 {
		d.epoch = 1
	}
	if v != d.seen {
		d.seen = v
		d.epoch++
	}
	return d.epoch, nil
}

// Write runs fn in one write transaction that it begins (BEGIN
// IMMEDIATE, after the writers before it) and ends: committed when fn
// returns nil, rolled back otherwise.
func (d txRows) Write(ctx context.Context, fn func() error) error {
	return d.c.inTx(ctx, func() error {
		d.writing = true
		defer func() { d.writing = false }()
		return fn()
	})
}

// BeginRequest marks the start of one request's work for Epoch: a
// transform told a dozen things of a session read data_version twelve
// times, where once answers its reads as of the request's start, as if
// the request had come a moment earlier.
func (d txRows) BeginRequest() (end func()) {
	d.inRequest, d.checked = true, false
	return func() { d.inRequest, d.checked = false, false }
}

// Read runs fn in one read transaction that it begins and ends.
func (d txRows) Read(ctx context.Context, fn func() error) error {
	if err := d.c.exec(ctx, "BEGIN"); err != nil {
		return classify(err)
	}
	defer d.c.exec(ctx, "COMMIT")
	return fn()
}

// Clock reads the database's logical clock (and refuses a format newer
// than this build's, seqClock).
func (d txRows) Clock(ctx context.Context) (int64, error) {
	_, clock, err := d.c.seqClock(ctx)
	return clock, classify(err)
}

func (d txRows) SetClock(ctx context.Context, clock int64) error {
	return d.setMeta(ctx, "clock", clock)
}

// setMeta writes one of the database's numbers ("seq", "clock") or a
// marker ("imported").
func (d txRows) setMeta(ctx context.Context, key string, value int64) error {
	return classify(d.c.exec(ctx, "INSERT INTO meta(key,value) VALUES(?,?) ON CONFLICT(key) DO UPDATE SET value=excluded.value", key, value))
}

func (d parentRows) Rev(ctx context.Context, id string) (int64, bool, error) {
	var rev int64
	err := d.c.queryRow(ctx, "SELECT rev FROM parents WHERE id=?", id).Scan(&rev)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, false, nil
	}
	if err != nil {
		return 0, false, classify(err)
	}
	return rev, true, nil
}

func (d parentRows) Read(ctx context.Context, id string) (sessions.ParentRecord, error) {
	p, err := d.readParent(ctx, id)
	return p, classify(err)
}

func (d *storeDB) readParent(ctx context.Context, id string) (sessions.ParentRecord, error) {
	c := d.c
	p := sessions.ParentRecord{ID: id, Counters: map[string]int64{}}
	rows, err := c.query(ctx, "SELECT alias, agent, task_id, label, last_use, tick, run_state, run_error FROM entries WHERE pid=(SELECT pid FROM parents WHERE id=?) ORDER BY tick DESC", id)
	if err != nil {
		return p, err
	}
	for rows.Next() {
		var e sessions.EntryRecord
		var lastUse int64
		if err := rows.Scan(&e.Alias, &e.Agent, &e.TaskID, &e.Label, &lastUse, &e.Tick, &e.Run.State, &e.Run.Error); err != nil {
			rows.Close()
			return p, err
		}
		e.LastUse = time.Unix(0, lastUse).UTC()
		p.Entries = append(p.Entries, e)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return p, err
	}
	rows, err = c.query(ctx, "SELECT prefix, n FROM counters WHERE pid=(SELECT pid FROM parents WHERE id=?)", id)
	if err != nil {
		return p, err
	}
	for rows.Next() {
		var prefix string
		var n int64
		if err := rows.Scan(&prefix, &n); err != nil {
			rows.Close()
			return p, err
		}
		p.Counters[prefix] = n
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return p, err
	}
	rows, err = c.query(ctx, "SELECT message_id, block, seq FROM frozen WHERE pid=(SELECT pid FROM parents WHERE id=?) ORDER BY seq DESC", id)
	if err != nil {
		return p, err
	}
	for rows.Next() {
		var f sessions.FrozenRecord
		if err := rows.Scan(&f.MessageID, &f.Block, &f.Seq); err != nil {
			rows.Close()
			return p, err
		}
		p.Frozen = append(p.Frozen, f)
	}
	rows.Close()
	return p, rows.Err()
}

func (d parentRows) Delete(ctx context.Context, id string) error {
	return classify(deleteParentRows(ctx, d.c, id))
}

func deleteParentRows(ctx context.Context, c *dbConn, id string) error {
	for _, q := range []string{
		"DELETE FROM entries WHERE pid=(SELECT pid FROM parents WHERE id=?)", "DELETE FROM counters WHERE pid=(SELECT pid FROM parents WHERE id=?)",
		"DELETE FROM frozen WHERE pid=(SELECT pid FROM parents WHERE id=?)", "DELETE FROM parents WHERE id=?",
	} {
		if err := c.exec(ctx, q, id); err != nil {
			return err
		}
	}
	return nil
}

// deleteParentPid deletes the rows of the parent keyed pid.
func deleteParentPid(ctx context.Context, c *dbConn, pid int64) error {
	for _, q := range []string{
		"DELETE FROM entries WHERE pid=?", "DELETE FROM counters WHERE pid=?",
		"DELETE FROM frozen WHERE pid=?", "DELETE FROM parents WHERE pid=?",
	} {
		if err := c.exec(ctx, q, pid); err != nil {
			return err
		}
	}
	return nil
}

func (d parentRows) Write(ctx context.Context, p sessions.ParentRecord) (int64, error) {
	rev, err := writeParent(ctx, d.c, p)
	return rev, classify(err)
}

// writeParent writes p whole: its row, entries and counters, and the
// frozen blocks made or dropped since it was last written. The row, and
// each new frozen block, gets the transaction's next revision (p.Rev,
// when given, is kept); it returns the row's.
func writeParent(ctx context.Context, c *dbConn, p sessions.ParentRecord) (int64, error) {
	rev, err := writeRev(ctx, c, p.Rev)
	if err != nil {
		return 0, err
	}
	return rev, writeParentAt(ctx, c, p, rev)
}

// writeRev is the revision a row written in the transaction on c gets:
// given, when not 0, else the next.
func writeRev(ctx context.Context, c *dbConn, given int64) (int64, error) {
	if given != 0 {
		return given, c.revs.given(ctx, c, given)
	}
	return c.revs.next(ctx, c)
}

func writeParentAt(ctx context.Context, c *dbConn, p sessions.ParentRecord, rev int64) error {
	p.Rev = rev
	if err := c.exec(ctx, "INSERT INTO parents(id,rev,bytes) VALUES(?,?,?) ON CONFLICT(id) DO UPDATE SET rev=excluded.rev, bytes=excluded.bytes", p.ID, p.Rev, p.Bytes); err != nil {
		return err
	}
	st, err := c.stmt(ctx, "SELECT pid FROM parents WHERE id=?")
	if err != nil {
		return err
	}
	var pid int64
	if err := st.QueryRowContext(ctx, p.ID).Scan(&pid); err != nil {
		return err
	}
	if err := c.exec(ctx, "DELETE FROM entries WHERE pid=?", pid); err != nil {
		return err
	}
	if err := c.exec(ctx, "DELETE FROM counters WHERE pid=?", pid); err != nil {
		return err
	}
	for _, e := range p.Entries {
		if err := c.exec(ctx, "INSERT INTO entries(pid,alias,agent,task_id,label,last_use,tick,run_state,run_error) VALUES(?,?,?,?,?,?,?,?,?)",
			pid, e.Alias, e.Agent, e.TaskID, e.Label, e.LastUse.UnixNano(), e.Tick, e.Run.State, e.Run.Error); err != nil {
			return err
		}
	}
	for prefix, n := range p.Counters {
		if err := c.exec(ctx, "INSERT INTO counters(pid,prefix,n) VALUES(?,?,?)", pid, prefix, n); err != nil {
			return err
		}
	}
	for _, id := range p.GoneFrozen {
		if err := c.exec(ctx, "DELETE FROM frozen WHERE pid=? AND message_id=?", pid, id); err != nil {
			return err
		}
	}
	for _, f := range p.Frozen { // oldest first: seq grows with recency
		seq, err := writeRev(ctx, c, f.Seq)
		if err != nil {
			return err
		}
		f.Seq = seq
		if err := c.exec(ctx, "INSERT INTO frozen(pid,message_id,seq,block) VALUES(?,?,?,?) ON CONFLICT(pid,message_id) DO NOTHING", pid, f.MessageID, f.Seq, f.Block); err != nil {
			return err
		}
	}
	return nil
}

func (d parentRows) Revs(ctx context.Context) ([]sessions.ParentRev, error) {
	rows, err := d.c.query(ctx, "SELECT id, rev FROM parents ORDER BY rev DESC, id")
	if err != nil {
		return nil, classify(err)
	}
	defer rows.Close()
	var out []sessions.ParentRev
	for rows.Next() {
		var pr sessions.ParentRev
		if err := rows.Scan(&pr.ID, &pr.Rev); err != nil {
			return nil, classify(err)
		}
		out = append(out, pr)
	}
	return out, classify(rows.Err())
}

// ParentsOfTask lists the parents with an entry whose task id is id.
func (d parentRows) OfTask(ctx context.Context, id string) ([]string, error) {
	return d.ids(ctx, "SELECT DISTINCT p.id FROM entries e JOIN parents p ON p.pid=e.pid WHERE e.task_id=?", id)
}

func (d parentRows) WithAlias(ctx context.Context, alias, parent string) ([]string, error) {
	q, args := "SELECT DISTINCT p.id FROM entries e JOIN parents p ON p.pid=e.pid WHERE e.alias=?", []any{alias}
	if parent != "" {
		q, args = q+" AND p.id=?", append(args, parent)
	}
	return d.ids(ctx, q, args...)
}

// ids runs a query of one text column (a row that does not scan is left
// out).
func (d *storeDB) ids(ctx context.Context, query string, args ...any) ([]string, error) {
	rows, err := d.c.query(ctx, query, args...)
	if err != nil {
		return nil, classify(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var p string
		if rows.Scan(&p) == nil {
			out = append(out, p)
		}
	}
	return out, nil
}

func (d trackedRows) Read(ctx context.Context, session string) (sessions.TrackedRecord, bool, error) {
	t := sessions.TrackedRecord{Session: session}
	var model sql.NullString
	err := d.c.queryRow(ctx, "SELECT agent, model, rev FROM tracked WHERE session=?", session).Scan(&t.Agent, &model, &t.Rev)
	if errors.Is(err, sql.ErrNoRows) {
		return t, false, nil
	}
	if err != nil {
		return t, false, classify(err)
	}
	if model.Valid {
		restoreTrackedColumn(&t, model.String) // healthdb.go
	}
	return t, true, nil
}

func (d trackedRows) Write(ctx context.Context, t sessions.TrackedRecord) (int64, error) {
	rev, err := writeTracked(ctx, d.c, t)
	return rev, classify(err)
}

// writeTracked writes t at the transaction's next revision (t.Rev, when
// given, is kept) and returns it.
func writeTracked(ctx context.Context, c *dbConn, t sessions.TrackedRecord) (int64, error) {
	model, err := trackedModelColumn(t) // healthdb.go
	if err != nil {
		return 0, err
	}
	if t.Rev, err = writeRev(ctx, c, t.Rev); err != nil {
		return 0, err
	}
	return t.Rev, c.exec(ctx, "INSERT INTO tracked(session,agent,model,rev,bytes) VALUES(?,?,?,?,?) ON CONFLICT(session) DO UPDATE SET agent=excluded.agent, model=excluded.model, rev=excluded.rev, bytes=excluded.bytes",
		t.Session, t.Agent, model, t.Rev, t.Bytes)
}

func (d trackedRows) Delete(ctx context.Context, session string) error {
	return classify(d.c.exec(ctx, "DELETE FROM tracked WHERE session=?", session))
}

func (d trackedRows) List(ctx context.Context) ([]string, error) {
	rows, err := d.c.query(ctx, "SELECT session FROM tracked ORDER BY rev, session")
	if err != nil {
		return nil, classify(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var session string
		if err := rows.Scan(&session); err != nil {
			return nil, classify(err)
		}
		out = append(out, session)
	}
	return out, classify(rows.Err())
}

func (d upkeepRows) Counts(ctx context.Context) (parents, tracked int, bytes int64, err error) {
	err = d.c.queryRow(ctx, "SELECT (SELECT count(*) FROM parents), (SELECT count(*) FROM tracked), (SELECT coalesce(sum(bytes),0) FROM parents)+(SELECT coalesce(sum(bytes),0) FROM tracked)+(SELECT coalesce(sum(bytes),0) FROM cache)").Scan(&parents, &tracked, &bytes)
	return parents, tracked, bytes, classify(err)
}

// Stats counts what the database holds.
func (d upkeepRows) Stats(ctx context.Context) (sessions.Stats, error) {
	var st sessions.Stats
	err := d.c.queryRow(ctx, `SELECT (SELECT count(*) FROM parents), (SELECT count(*) FROM entries),
		(SELECT count(*) FROM tracked), (SELECT count(*) FROM frozen)`).Scan(&st.Parents, &st.Entries, &st.TrackedSessions, &st.FrozenBlocks)
	return st, classify(err)
}

// Close closes the lister's connection, then the database's (the last
// connection on a database checkpoints it).
func (d *storeDB) Close() error {
	d.lister.close()
	return d.c.close()
}
