package sessiondb

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"github.com/hookwire/hookwire/subagents"
)

// The subagents' intents (subagents.Service's writes), each one write
// transaction (write) that reads and writes what the intent needs.

// known reports whether the records hold anything of session (a
// subagent's row, a parent's, or its messages): a status, an end or a
// deletion of a session they do not know writes nothing, so the events of
// sessions without subagents cost a read, not a write transaction. What
// another process records between this read and a write is recorded by
// that process's own intents.
func (s *Subagents) known(ctx context.Context, session string) (bool, error) {
	ctx = quiet(ctx)
	s.mu.Lock()
	defer s.mu.Unlock()
	c, err := s.conn(ctx)
	if err != nil {
		return false, err
	}
	var found bool
	err = c.queryRow(ctx, `SELECT EXISTS(SELECT 1 FROM subagents WHERE session=?) OR EXISTS(SELECT 1 FROM subagent_roots WHERE root=?)
		OR EXISTS(SELECT 1 FROM subagent_messages WHERE session=?)`, session, session, session).Scan(&found)
	return found, classify(err)
}

// write runs fn in one write transaction; changed collects the roots it
// names.
func (s *Subagents) write(ctx context.Context, fn func(c *dbConn, tx *subTx) error) (subagents.Changed, error) {
	if s.readOnly {
		return subagents.Changed{}, errors.New("the subagents' records are open read-only")
	}
	ctx = quiet(ctx)
	s.mu.Lock()
	defer s.mu.Unlock()
	c, err := s.conn(ctx)
	if err != nil {
		return subagents.Changed{}, err
	}
	tx := &subTx{c: c, pid: s.pid}
	err = c.inTx(ctx, func() error {
		if err := fn(c, tx); err != nil {
			return err
		}
		if tx.rev%pruneEvery != 0 {
			return nil
		}
		return pruneSubagents(ctx, c)
	})
	if err != nil {
		return subagents.Changed{}, err
	}
	return subagents.Changed{Parents: tx.roots}, nil
}

func active(s subagents.State) int {
	if subagents.Active(s) {
		return 1
	}
	return 0
}

// SubagentStarted implements subagents.Service.
func (s *Subagents) SubagentStarted(ctx context.Context, st subagents.Started) (subagents.Changed, error) {
	if st.Session == "" || st.Parent == "" || st.Session == st.Parent {
		return subagents.Changed{}, nil
	}
	return s.write(ctx, func(c *dbConn, tx *subTx) error {
		if _, ok, err := readRow(ctx, c, st.Session); err != nil || ok {
			return err // known already: its creation is not news
		}
		root, depth := st.Parent, 1
		if p, ok, err := readRow(ctx, c, st.Parent); err != nil {
			return err
		} else if ok {
			root, depth = p.root, p.depth+1
		}
		rev, err := tx.nextRev(ctx)
		if err != nil {
			return err
		}
		if err := c.exec(ctx, `INSERT INTO subagents(session, parent, root, depth, agent, label, state, active, started_ns, owner, rev)
			VALUES(?,?,?,?,?,?,?,1,?,?,?)`, st.Session, st.Parent, root, depth, st.Agent, subagents.Cut(st.Label), subagents.Running, st.At.UnixNano(), tx.pid, rev); err != nil {
			return err
		}
		if err := tx.changed(ctx, root, st.At); err != nil {
			return err
		}
		return c.exec(ctx, "UPDATE subagent_roots SET n=n+1 WHERE root=?", root)
	})
}

// SubagentStatus implements subagents.Service.
func (s *Subagents) SubagentStatus(ctx context.Context, session string, ev subagents.Event, retry *subagents.Retry, at time.Time) (subagents.Changed, error) {
	if session == "" {
		return subagents.Changed{}, nil
	}
	if ok, err := s.known(ctx, session); err != nil || !ok {
		return subagents.Changed{}, err
	}
	return s.write(ctx, func(c *dbConn, tx *subTx) error {
		r, ok, err := readRow(ctx, c, session)
		if err != nil || !ok {
			return err
		}
		next := subagents.Next(r.state, ev)
		attempt, nextNs, message := 0, int64(0), ""
		if next == subagents.Retrying && retry != nil {
			attempt, message = retry.Attempt, subagents.Cut(retry.Message)
			if retry.Next != nil {
				nextNs = retry.Next.UnixNano()
			}
		}
		if next == r.state && attempt == r.retryAttempt && nextNs == r.retryNext && message == r.retryMessage && r.owner == tx.pid {
			return nil
		}
		rev, err := tx.nextRev(ctx)
		if err != nil {
			return err
		}
		if err := c.exec(ctx, `UPDATE subagents SET state=?, active=?, ended_ns=0, error='', retry_attempt=?, retry_next_ns=?, retry_message=?, owner=?, rev=? WHERE session=?`,
			next, active(next), attempt, nextNs, message, tx.pid, rev, session); err != nil {
			return err
		}
		return tx.changed(ctx, r.root, at)
	})
}

// SubagentEnded implements subagents.Service.
func (s *Subagents) SubagentEnded(ctx context.Context, session string, ev subagents.Event, reason string, at time.Time) (subagents.Changed, error) {
	if session == "" {
		return subagents.Changed{}, nil
	}
	if ok, err := s.known(ctx, session); err != nil || !ok {
		return subagents.Changed{}, err
	}
	return s.write(ctx, func(c *dbConn, tx *subTx) error {
		// What the session's messages will not report again is in its
		// sums: its messages' rows go.
		if err := c.exec(ctx, "DELETE FROM subagent_messages WHERE session=? AND done=1", session); err != nil {
			return err
		}
		r, ok, err := readRow(ctx, c, session)
		if err != nil || !ok {
			return err
		}
		next := subagents.Next(r.state, ev)
		if next == r.state && !subagents.Active(r.state) {
			// Ended already; a failure's later report may say more
			// (session.error's text after the message's error name).
			if next != subagents.Failed || reason == "" {
				return nil
			}
			res, err := c.execResult(ctx, "UPDATE subagents SET error=? WHERE session=? AND error<>? AND length(error)<?", subagents.Cut(reason), session, subagents.Cut(reason), len(subagents.Cut(reason)))
			if err != nil {
				return err
			}
			if n, _ := res.RowsAffected(); n == 0 {
				return nil
			}
			rev, err := tx.nextRev(ctx)
			if err != nil {
				return err
			}
			if err := c.exec(ctx, "UPDATE subagents SET rev=? WHERE session=?", rev, session); err != nil {
				return err
			}
			return tx.changed(ctx, r.root, at)
		}
		rev, err := tx.nextRev(ctx)
		if err != nil {
			return err
		}
		set := "state=?, active=?, ended_ns=?, retry_attempt=0, retry_next_ns=0, retry_message='', owner=?, rev=?"
		args := []any{next, active(next), at.UnixNano(), tx.pid, rev}
		switch next {
		case subagents.Failed:
			set += ", error=?"
			args = append(args, subagents.Cut(reason))
		case subagents.Done:
			set += ", error=''"
		}
		if err := c.exec(ctx, "UPDATE subagents SET "+set+" WHERE session=?", append(args, session)...); err != nil {
			return err
		}
		return tx.changed(ctx, r.root, at)
	})
}

// SubagentMessage implements subagents.Service: the message's figures
// replace those it had (none the first time), and the difference goes to
// its session's sums and to its top-level parent's total (its own, when
// the session is no subagent).
func (s *Subagents) SubagentMessage(ctx context.Context, m subagents.Message) (subagents.Changed, error) {
	if m.Session == "" || m.ID == "" {
		return subagents.Changed{}, nil
	}
	return s.write(ctx, func(c *dbConn, tx *subTx) error {
		var old subagents.Figures
		var oldDone bool
		err := c.queryRow(ctx, "SELECT t_in, t_out, t_reason, t_cread, t_cwrite, cost, done FROM subagent_messages WHERE session=? AND message=?", m.Session, m.ID).
			Scan(&old.Tokens.Input, &old.Tokens.Output, &old.Tokens.Reasoning, &old.Tokens.CacheRead, &old.Tokens.CacheWrite, &old.Cost, &oldDone)
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			return err
		}
		now := subagents.Figures{Tokens: m.Tokens, Cost: m.Cost}
		delta := now.Sub(old)
		if err := c.exec(ctx, `INSERT INTO subagent_messages(session, message, t_in, t_out, t_reason, t_cread, t_cwrite, cost, done) VALUES(?,?,?,?,?,?,?,?,?)
			ON CONFLICT(session, message) DO UPDATE SET t_in=excluded.t_in, t_out=excluded.t_out, t_reason=excluded.t_reason,
			t_cread=excluded.t_cread, t_cwrite=excluded.t_cwrite, cost=excluded.cost, done=excluded.done`,
			m.Session, m.ID, m.Tokens.Input, m.Tokens.Output, m.Tokens.Reasoning, m.Tokens.CacheRead, m.Tokens.CacheWrite, m.Cost, m.Done); err != nil {
			return err
		}
		r, child, err := readRow(ctx, c, m.Session)
		if err != nil {
			return err
		}
		if !child {
			if delta == (subagents.Figures{}) {
				return nil
			}
			if err := tx.changed(ctx, m.Session, m.At); err != nil {
				return err
			}
			return addFigures(ctx, c, m.Session, delta, true)
		}
		next := r.state
		if !m.Done && m.ErrName == "" && !subagents.Active(r.state) {
			next = subagents.Next(r.state, subagents.Busy) // a message growing: at work again
		}
		latest := m.ID >= r.lastMsg
		if delta == (subagents.Figures{}) && next == r.state && (!latest || m.ID == r.lastMsg) && r.owner == tx.pid {
			return nil
		}
		rev, err := tx.nextRev(ctx)
		if err != nil {
			return err
		}
		set := "t_in=t_in+?, t_out=t_out+?, t_reason=t_reason+?, t_cread=t_cread+?, t_cwrite=t_cwrite+?, cost=cost+?, state=?, active=?, owner=?, rev=?"
		args := []any{delta.Tokens.Input, delta.Tokens.Output, delta.Tokens.Reasoning, delta.Tokens.CacheRead, delta.Tokens.CacheWrite, delta.Cost, next, active(next), tx.pid, rev}
		if next != r.state {
			set += ", ended_ns=0, error=''"
		}
		if latest {
			set += ", last_msg=?, ctx_used=?"
			args = append(args, m.ID, m.Tokens.Context())
			if m.Model != "" {
				set += ", model=?"
				args = append(args, m.Model)
			}
		}
		if err := c.exec(ctx, "UPDATE subagents SET "+set+" WHERE session=?", append(args, m.Session)...); err != nil {
			return err
		}
		if err := tx.changed(ctx, r.root, m.At); err != nil {
			return err
		}
		return addFigures(ctx, c, r.root, delta, false)
	})
}

// addFigures adds delta to root's total, and to its own figures when own.
func addFigures(ctx context.Context, c *dbConn, root string, d subagents.Figures, own bool) error {
	if own {
		if err := c.exec(ctx, `UPDATE subagent_roots SET o_in=o_in+?, o_out=o_out+?, o_reason=o_reason+?, o_cread=o_cread+?, o_cwrite=o_cwrite+?, o_cost=o_cost+? WHERE root=?`,
			d.Tokens.Input, d.Tokens.Output, d.Tokens.Reasoning, d.Tokens.CacheRead, d.Tokens.CacheWrite, d.Cost, root); err != nil {
			return err
		}
	}
	return c.exec(ctx, `UPDATE subagent_roots SET a_in=a_in+?, a_out=a_out+?, a_reason=a_reason+?, a_cread=a_cread+?, a_cwrite=a_cwrite+?, a_cost=a_cost+? WHERE root=?`,
		d.Tokens.Input, d.Tokens.Output, d.Tokens.Reasoning, d.Tokens.CacheRead, d.Tokens.CacheWrite, d.Cost, root)
}

// SubagentTask implements subagents.Service: a label or agent the row
// lacks, and the alias.
func (s *Subagents) SubagentTask(ctx context.Context, t subagents.Task) (subagents.Changed, error) {
	if t.Session == "" {
		return subagents.Changed{}, nil
	}
	if ok, err := s.known(ctx, t.Session); err != nil || !ok {
		return subagents.Changed{}, err
	}
	return s.write(ctx, func(c *dbConn, tx *subTx) error {
		r, ok, err := readRow(ctx, c, t.Session)
		if err != nil || !ok {
			return err
		}
		rev, err := tx.nextRev(ctx)
		if err != nil {
			return err
		}
		res, err := c.execResult(ctx, `UPDATE subagents SET label=CASE WHEN label='' THEN ? ELSE label END, agent=CASE WHEN agent='' THEN ? ELSE agent END,
			alias=CASE WHEN ?<>'' THEN ? ELSE alias END, rev=? WHERE session=? AND (label='' AND ?<>'' OR agent='' AND ?<>'' OR ?<>'' AND alias<>?)`,
			subagents.Cut(t.Label), t.Agent, t.Alias, t.Alias, rev, t.Session, t.Label, t.Agent, t.Alias, t.Alias)
		if err != nil {
			return err
		}
		n, _ := res.RowsAffected()
		if t.Ended && subagents.Active(r.state) {
			// The call ended: its child is not at work any more, whatever
			// OpenCode's events have told the records (PROTOCOL.md 4.10).
			ev := subagents.Idle
			if t.Failed {
				ev = subagents.Errored
			}
			next := subagents.Next(r.state, ev)
			set := "state=?, active=?, ended_ns=?, retry_attempt=0, retry_next_ns=0, retry_message='', owner=?, rev=?"
			args := []any{next, active(next), t.At.UnixNano(), tx.pid, rev}
			if next == subagents.Failed {
				set += ", error=?"
				args = append(args, subagents.Cut(t.Reason))
			}
			if err := c.exec(ctx, "UPDATE subagents SET "+set+" WHERE session=?", append(args, t.Session)...); err != nil {
				return err
			}
			n = 1
		}
		if n == 0 {
			return nil
		}
		return tx.changed(ctx, r.root, t.At)
	})
}

// Forget implements subagents.Service: a top-level session's records go
// with its subagents'; a subagent's with its descendants', their figures
// out of the top-level parent's total.
func (s *Subagents) Forget(ctx context.Context, session string) (subagents.Changed, error) {
	if session == "" {
		return subagents.Changed{}, nil
	}
	if ok, err := s.known(ctx, session); err != nil || !ok {
		return subagents.Changed{}, err
	}
	return s.write(ctx, func(c *dbConn, tx *subTx) error {
		r, child, err := readRow(ctx, c, session)
		if err != nil {
			return err
		}
		if !child {
			return forgetRoot(ctx, c, session)
		}
		const tree = `WITH RECURSIVE tree(s) AS (SELECT ? UNION ALL SELECT x.session FROM subagents x JOIN tree ON x.parent=tree.s) `
		var gone subagents.Figures
		var n int
		if err := c.queryRow(ctx, tree+`SELECT count(*), coalesce(sum(t_in),0), coalesce(sum(t_out),0), coalesce(sum(t_reason),0), coalesce(sum(t_cread),0),
			coalesce(sum(t_cwrite),0), coalesce(sum(cost),0) FROM subagents WHERE session IN (SELECT s FROM tree)`, session).
			Scan(&n, &gone.Tokens.Input, &gone.Tokens.Output, &gone.Tokens.Reasoning, &gone.Tokens.CacheRead, &gone.Tokens.CacheWrite, &gone.Cost); err != nil {
			return err
		}
		if err := c.exec(ctx, tree+"DELETE FROM subagent_messages WHERE session IN (SELECT s FROM tree)", session); err != nil {
			return err
		}
		if err := c.exec(ctx, tree+"DELETE FROM subagents WHERE session IN (SELECT s FROM tree)", session); err != nil {
			return err
		}
		if err := tx.changed(ctx, r.root, time.Time{}); err != nil {
			return err
		}
		if err := c.exec(ctx, "UPDATE subagent_roots SET n=max(0, n-?) WHERE root=?", n, r.root); err != nil {
			return err
		}
		return addFigures(ctx, c, r.root, subagents.Figures{}.Sub(gone), false)
	})
}
