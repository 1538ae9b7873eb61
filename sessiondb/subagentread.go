package sessiondb

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"github.com/hookwire/hookwire/sessions"
	"github.com/hookwire/hookwire/subagents"
)

// The subagents' reads: a parent's figures, the pages of its subagents
// and their cursor, and the lists for `hookwire sessions` and doctor,
// each in one read transaction (read).

// read runs fn on the connection in one read transaction (a writer's
// connection reads what it committed). A reader of a missing file or of
// a database without the tables reads nothing: ok false.
func (s *Subagents) read(ctx context.Context, fn func(c *dbConn) error) (ok bool, err error) {
	ctx = quiet(ctx)
	s.mu.Lock()
	defer s.mu.Unlock()
	c, err := s.conn(ctx)
	if s.readOnly && (errors.Is(err, errNoFile) || errors.Is(err, errEmptyDB) || errors.Is(err, errNotDatabase)) {
		return false, nil // nothing of ours there (an earlier release's JSON state, a database being made)
	}
	if err != nil {
		return false, err
	}
	if _, err := c.conn.ExecContext(ctx, "BEGIN"); err != nil {
		return false, classify(err)
	}
	defer c.conn.ExecContext(context.WithoutCancel(ctx), "ROLLBACK")
	err = fn(c)
	if noSubagentTables(err) {
		return false, nil
	}
	return err == nil, classify(err)
}

// ParentFigures implements subagents.Service.
func (s *Subagents) ParentFigures(ctx context.Context, parent string) (subagents.Parent, error) {
	p := subagents.Parent{SessionID: parent}
	_, err := s.read(ctx, func(c *dbConn) error {
		var err error
		p, _, err = s.parentFigures(ctx, c, parent)
		return err
	})
	return p, err
}

// parentFigures reads parent's figures: a top-level session's from its
// row; a subagent's from its own row and its descendants'. child says
// which parent is.
func (s *Subagents) parentFigures(ctx context.Context, c *dbConn, parent string) (p subagents.Parent, child bool, err error) {
	p.SessionID = parent
	_, child, err = readRow(ctx, c, parent)
	if err != nil {
		return p, false, err
	}
	if child {
		const tree = `WITH RECURSIVE tree(s, d) AS (SELECT ?, 0 UNION ALL SELECT x.session, d+1 FROM subagents x JOIN tree ON x.parent=tree.s) `
		rows, err := c.query(ctx, tree+`SELECT d, state, owner, t_in, t_out, t_reason, t_cread, t_cwrite, cost FROM subagents JOIN tree ON session=tree.s`, parent)
		if err != nil {
			return p, true, err
		}
		defer rows.Close()
		for rows.Next() {
			var d, owner int
			var state string
			var f subagents.Figures
			if err := rows.Scan(&d, &state, &owner, &f.Tokens.Input, &f.Tokens.Output, &f.Tokens.Reasoning, &f.Tokens.CacheRead, &f.Tokens.CacheWrite, &f.Cost); err != nil {
				return p, true, err
			}
			s.rowsRead.Add(1)
			p.Total = p.Total.Add(f)
			if d == 0 {
				p.Own = f
				continue
			}
			p.Subagents++
			if subagents.Active(subagents.Shown(subagents.State(state), s.alive(owner))) {
				p.Running++
			}
		}
		return p, true, rows.Err()
	}
	err = c.queryRow(ctx, `SELECT n, o_in, o_out, o_reason, o_cread, o_cwrite, o_cost, a_in, a_out, a_reason, a_cread, a_cwrite, a_cost FROM subagent_roots WHERE root=?`, parent).
		Scan(&p.Subagents, &p.Own.Tokens.Input, &p.Own.Tokens.Output, &p.Own.Tokens.Reasoning, &p.Own.Tokens.CacheRead, &p.Own.Tokens.CacheWrite, &p.Own.Cost,
			&p.Total.Tokens.Input, &p.Total.Tokens.Output, &p.Total.Tokens.Reasoning, &p.Total.Tokens.CacheRead, &p.Total.Tokens.CacheWrite, &p.Total.Cost)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return p, false, nil
	case err != nil:
		return p, false, err
	}
	s.rowsRead.Add(1)
	// The rows at work, by writer: a dead writer's read interrupted.
	rows, err := c.query(ctx, "SELECT owner, count(*) FROM subagents WHERE root=? AND active=1 GROUP BY owner", parent)
	if err != nil {
		return p, false, err
	}
	defer rows.Close()
	for rows.Next() {
		var owner, n int
		if err := rows.Scan(&owner, &n); err != nil {
			return p, false, err
		}
		s.rowsRead.Add(int64(n))
		if s.alive(owner) {
			p.Running += n
		}
	}
	return p, false, rows.Err()
}

// subagentColumns are a page row's columns: the row's own, then its
// alias in the entries (resumable when there) and its tracked session's
// model column (its switches).
const subagentColumns = `s.session, s.parent, s.depth, s.agent, s.label, s.alias, s.state, s.active, s.started_ns, s.ended_ns,
  s.retry_attempt, s.retry_next_ns, s.retry_message, s.error, s.model, s.ctx_used,
  s.t_in, s.t_out, s.t_reason, s.t_cread, s.t_cwrite, s.cost, s.owner`

// subagentPageQuery is a page's query: of a top-level session's
// subagents (by root) or a subagent's children (by parent), from the
// start or after a cursor. The page's rows are found on the index, in
// its order, and only they are joined with their entry and tracked
// session.
func subagentPageQuery(ofChild, after bool) string {
	key := "root"
	if ofChild {
		key = "parent"
	}
	q := "SELECT " + subagentColumns + `, e.alias, t.model FROM (SELECT * FROM subagents WHERE ` + key + `=?`
	if after {
		q += " AND (active, started_ns, session) < (?,?,?)"
	}
	return q + ` ORDER BY active DESC, started_ns DESC, session DESC LIMIT ?) s
		LEFT JOIN entries e ON e.rowid = (SELECT rowid FROM entries WHERE task_id=s.session LIMIT 1)
		LEFT JOIN tracked t ON t.session=s.session
		ORDER BY s.active DESC, s.started_ns DESC, s.session DESC`
}

// SubagentsOf implements subagents.Service: the page's rows read from the
// index in the list's order, limit+1 of them (the one more says whether
// a page follows), joined with their entries and tracked sessions.
func (s *Subagents) SubagentsOf(ctx context.Context, parent, cursor string, limit int) (subagents.Page, error) {
	page := subagents.Page{Parent: subagents.Parent{SessionID: parent}, Subagents: []subagents.Row{}}
	var after *subagents.Cursor
	if cursor != "" {
		cur, err := subagents.DecodeCursor(cursor)
		if err != nil {
			return page, err
		}
		after = &cur
	}
	if limit <= 0 {
		limit = subagents.DefaultLimit
	}
	limit = min(limit, subagents.MaxLimit)
	_, err := s.read(ctx, func(c *dbConn) error {
		p, child, err := s.parentFigures(ctx, c, parent)
		if err != nil {
			return err
		}
		page.Parent = p
		args := []any{parent}
		if after != nil {
			a := 0
			if after.Active {
				a = 1
			}
			args = append(args, a, after.StartedNs, after.Session)
		}
		rows, err := c.query(ctx, subagentPageQuery(child, after != nil), append(args, limit+1)...)
		if err != nil {
			return err
		}
		defer rows.Close()
		var last subagents.Cursor
		for rows.Next() {
			row, cur, err := s.scanSubagent(rows)
			if err != nil {
				return err
			}
			s.rowsRead.Add(1)
			if len(page.Subagents) == limit {
				page.Next = last.Encode()
				break
			}
			page.Subagents, last = append(page.Subagents, row), cur
		}
		return rows.Err()
	})
	return page, err
}

// scanSubagent reads one page row.
func (s *Subagents) scanSubagent(rows *sql.Rows) (subagents.Row, subagents.Cursor, error) {
	var r subagents.Row
	var state string
	var act, owner int
	var started, ended, retryNext, ctxUsed int64
	var retryAttempt int
	var retryMessage string
	var entryAlias, tracked sql.NullString
	err := rows.Scan(&r.SessionID, &r.ParentID, &r.Depth, &r.Agent, &r.Label, &r.Alias, &state, &act, &started, &ended,
		&retryAttempt, &retryNext, &retryMessage, &r.Error, &r.Model, &ctxUsed,
		&r.Tokens.Input, &r.Tokens.Output, &r.Tokens.Reasoning, &r.Tokens.CacheRead, &r.Tokens.CacheWrite, &r.Cost, &owner,
		&entryAlias, &tracked)
	if err != nil {
		return r, subagents.Cursor{}, err
	}
	r.State = subagents.Shown(subagents.State(state), s.alive(owner))
	r.StartedAt = time.Unix(0, started).UTC()
	if ended != 0 && !subagents.Active(r.State) {
		t := time.Unix(0, ended).UTC()
		r.EndedAt = &t
	}
	if r.State == subagents.Retrying {
		r.Retry = &subagents.Retry{Attempt: retryAttempt, Message: retryMessage}
		if retryNext != 0 {
			t := time.Unix(0, retryNext).UTC()
			r.Retry.Next = &t
		}
	}
	if entryAlias.Valid && entryAlias.String != "" {
		r.Alias, r.Resumable = entryAlias.String, true
	}
	if ctxUsed > 0 {
		r.Context = &subagents.Context{Used: ctxUsed}
	}
	if share, ok := r.Tokens.CacheShare(); ok {
		r.CacheShare = &share
	}
	if tracked.Valid {
		var t sessions.TrackedRecord
		restoreTrackedColumn(&t, tracked.String)
		r.Switches = subagents.Switches(t.Switches)
	}
	return r, subagents.Cursor{Active: act == 1, StartedNs: started, Session: r.SessionID}, nil
}

// RecentParents are the top-level sessions with subagents, the most
// recently changed first, at most limit of them (for `hookwire sessions`
// and doctor).
func (s *Subagents) RecentParents(ctx context.Context, limit int) ([]string, error) {
	var out []string
	_, err := s.read(ctx, func(c *dbConn) error {
		rows, err := c.query(ctx, "SELECT root FROM subagent_roots WHERE n>0 ORDER BY used_ns DESC LIMIT ?", limit)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var r string
			if err := rows.Scan(&r); err != nil {
				return err
			}
			s.rowsRead.Add(1)
			out = append(out, r)
		}
		return rows.Err()
	})
	return out, err
}

// StateOf is a subagent's state as a reader shows it; ok false when it is
// no subagent on record.
func (s *Subagents) StateOf(ctx context.Context, session string) (state subagents.State, ok bool, err error) {
	_, err = s.read(ctx, func(c *dbConn) error {
		r, found, err := readRow(ctx, c, session)
		if err == nil && found {
			s.rowsRead.Add(1)
			state, ok = subagents.Shown(r.state, s.alive(r.owner)), true
		}
		return err
	})
	return state, ok, err
}
