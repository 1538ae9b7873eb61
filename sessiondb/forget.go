package sessiondb

import (
	"context"
	"errors"
	"fmt"

	"github.com/hookwire/hookwire/sessions"
	"github.com/rs/zerolog"
)

// ForgetSpec says what Forget removes from the state: everything, or
// what one parent session holds (as session.deleted forgets it), or the
// entries with one alias (under Parent, or under every parent when Parent
// is ""). Alias counters are kept, so a forgotten alias is never handed
// out again.
type ForgetSpec struct {
	All    bool
	Parent string
	Alias  string
}

// Forgotten counts what Forget removed.
type Forgotten struct {
	Parents int // parents with their entries, counters and frozen blocks
	// Entries: with All every entry; else the entries removed on their
	// own (an alias, or a task id that was Parent).
	Entries  int
	Sessions int // sessions' agents
	// With All only (issue 39 item 8: forgetting everything kept them):
	Cache  int // sessions' prompt-cache figures
	Health int // models' health records
	// Subagents: the subagents' records (PROTOCOL.md 4.10) removed: with
	// All every one; with Parent those of that session and below it.
	Subagents int
}

// Forget removes what spec names from the state database at path, in one
// transaction, while sidecars serve it: they see the change at their next
// request. A missing database has nothing to forget. A JSON state file of
// an earlier release is imported first. A database that cannot be written
// (or a path CheckStatePath refuses) is an error and nothing changes; a
// corrupt one is moved aside, which with All is the reset asked for and
// otherwise an error.
func Forget(ctx context.Context, path string, spec ForgetSpec) (Forgotten, error) {
	var done Forgotten
	if spec.All && (spec.Parent != "" || spec.Alias != "") {
		return done, errors.New("forget: All excludes Parent and Alias")
	}
	if !spec.All && spec.Parent == "" && spec.Alias == "" {
		return done, errors.New("forget: nothing named")
	}
	if err := CheckStatePath(path); err != nil {
		return done, err
	}
	if !HasState(path) {
		return done, nil // nothing to forget; create nothing
	}
	s := sessions.Unbounded()
	d, err := OpenDatabase(ctx, path, s, zerolog.Nop())
	if err != nil {
		return done, err
	}
	defer d.Close()
	st := d.State()
	if st.Mode != sessions.StatePersistent {
		return done, fmt.Errorf("the state database cannot be written (%s): %s", st.Mode, st.Reason)
	}
	if d.movedAside != "" && !spec.All {
		return done, fmt.Errorf("the state database was not readable state: moved to %s and a new one made; nothing else to forget", d.movedAside)
	}
	c := d.c
	count := func(q string, args ...any) int {
		var n int
		c.queryRow(ctx, q, args...).Scan(&n)
		return n
	}
	switch {
	case spec.All:
		// Counted and deleted in the one transaction, so the counts are
		// what was deleted whatever other processes write meanwhile.
		err = c.inTx(ctx, func() error {
			for _, q := range []struct {
				table string
				n     *int
			}{{"entries", &done.Entries}, {"counters", nil}, {"frozen", nil}, {"parents", &done.Parents},
				{"tracked", &done.Sessions}, {"cache", &done.Cache}, {"health", &done.Health}} {
				res, err := c.execResult(ctx, "DELETE FROM "+q.table)
				if err != nil {
					return err
				}
				if q.n != nil {
					n, _ := res.RowsAffected()
					*q.n = int(n)
				}
			}
			for _, table := range []string{"subagent_messages", "subagent_roots", "subagents"} {
				res, err := c.execResult(ctx, "DELETE FROM "+table)
				if noSubagentTables(err) {
					continue // no sidecar of this build made them yet
				}
				if err != nil {
					return err
				}
				if table == "subagents" {
					n, _ := res.RowsAffected()
					done.Subagents = int(n)
				}
			}
			return c.exec(ctx, "INSERT INTO meta(key,value) VALUES('seq',1) ON CONFLICT(key) DO UPDATE SET value=value+1")
		})
		if err != nil {
			done = Forgotten{}
		}
	case spec.Alias == "":
		done.Parents = count("SELECT count(*) FROM parents WHERE id=?", spec.Parent)
		done.Entries = count("SELECT count(*) FROM entries e JOIN parents p ON p.pid=e.pid WHERE e.task_id=? AND p.id<>?", spec.Parent, spec.Parent)
		done.Sessions = count("SELECT count(*) FROM tracked WHERE session=?", spec.Parent)
		done.Subagents = count(`WITH RECURSIVE tree(s) AS (SELECT ? UNION ALL SELECT x.session FROM subagents x JOIN tree ON x.parent=tree.s)
			SELECT count(*) FROM subagents WHERE session IN (SELECT s FROM tree) OR root=?`, spec.Parent, spec.Parent)
		s.DeleteSession(ctx, spec.Parent)
		if _, ferr := d.Subagents().Forget(ctx, spec.Parent); ferr != nil {
			err = ferr
		}
	default:
		done.Entries = s.Tasks().ForgetAlias(ctx, spec.Alias, spec.Parent)
	}
	if err == nil {
		err = lastError(d.State())
	}
	return done, err
}

// lastError is st's last write error, nil when none.
func lastError(st sessions.StateStatus) error {
	if st.LastWriteError != "" {
		return errors.New(st.LastWriteError)
	}
	return nil
}
