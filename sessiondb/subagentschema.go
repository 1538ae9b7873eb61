package sessiondb

import (
	"context"
	"strings"
)

// The subagents' tables and their caps, and the pruning that keeps them
// within the caps.
//
// The tables are made at each open for writing (IF NOT EXISTS) and the
// format number is not raised: a sidecar of format 6 still running on
// the same database (a plugin upgraded while OpenCode is open) goes on
// writing its own tables, where a raised format would refuse its every
// write (issue 39 item 6). It never reads these tables and never prunes
// them, so they are pruned here, within their own caps. The next format
// change lists this schema as a numbered migration with IF NOT EXISTS, as
// migrations 2 and 3 did for the tables builds of format 1 made.
const subagentSchema = `
CREATE TABLE IF NOT EXISTS subagents(session TEXT PRIMARY KEY, parent TEXT NOT NULL, root TEXT NOT NULL,
  depth INTEGER NOT NULL, agent TEXT NOT NULL DEFAULT '', label TEXT NOT NULL DEFAULT '', alias TEXT NOT NULL DEFAULT '',
  state TEXT NOT NULL, active INTEGER NOT NULL, started_ns INTEGER NOT NULL, ended_ns INTEGER NOT NULL DEFAULT 0,
  retry_attempt INTEGER NOT NULL DEFAULT 0, retry_next_ns INTEGER NOT NULL DEFAULT 0, retry_message TEXT NOT NULL DEFAULT '',
  error TEXT NOT NULL DEFAULT '', model TEXT NOT NULL DEFAULT '', last_msg TEXT NOT NULL DEFAULT '', ctx_used INTEGER NOT NULL DEFAULT 0,
  t_in INTEGER NOT NULL DEFAULT 0, t_out INTEGER NOT NULL DEFAULT 0, t_reason INTEGER NOT NULL DEFAULT 0,
  t_cread INTEGER NOT NULL DEFAULT 0, t_cwrite INTEGER NOT NULL DEFAULT 0, cost REAL NOT NULL DEFAULT 0,
  owner INTEGER NOT NULL DEFAULT 0, rev INTEGER NOT NULL DEFAULT 0) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS subagents_root ON subagents(root, active, started_ns, session);
CREATE INDEX IF NOT EXISTS subagents_parent ON subagents(parent, active, started_ns, session);
CREATE INDEX IF NOT EXISTS subagents_started ON subagents(started_ns);
CREATE INDEX IF NOT EXISTS subagents_rev ON subagents(rev);
CREATE TABLE IF NOT EXISTS subagent_roots(root TEXT PRIMARY KEY, n INTEGER NOT NULL DEFAULT 0,
  o_in INTEGER NOT NULL DEFAULT 0, o_out INTEGER NOT NULL DEFAULT 0, o_reason INTEGER NOT NULL DEFAULT 0,
  o_cread INTEGER NOT NULL DEFAULT 0, o_cwrite INTEGER NOT NULL DEFAULT 0, o_cost REAL NOT NULL DEFAULT 0,
  a_in INTEGER NOT NULL DEFAULT 0, a_out INTEGER NOT NULL DEFAULT 0, a_reason INTEGER NOT NULL DEFAULT 0,
  a_cread INTEGER NOT NULL DEFAULT 0, a_cwrite INTEGER NOT NULL DEFAULT 0, a_cost REAL NOT NULL DEFAULT 0,
  used_ns INTEGER NOT NULL DEFAULT 0, rev INTEGER NOT NULL DEFAULT 0) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS subagent_roots_used ON subagent_roots(used_ns);
CREATE INDEX IF NOT EXISTS subagent_roots_rev ON subagent_roots(rev);
CREATE TABLE IF NOT EXISTS subagent_messages(session TEXT NOT NULL, message TEXT NOT NULL,
  t_in INTEGER NOT NULL, t_out INTEGER NOT NULL, t_reason INTEGER NOT NULL, t_cread INTEGER NOT NULL, t_cwrite INTEGER NOT NULL,
  cost REAL NOT NULL, done INTEGER NOT NULL, PRIMARY KEY(session, message)) WITHOUT ROWID;
`

// The caps of the subagents' tables: rows beyond them go, the oldest
// first (PROTOCOL.md 4.10).
const (
	MaxSubagents       = 10000
	MaxSubagentParents = 2000
	// MaxSubagentMessages bounds the messages kept while their sessions
	// may still report them (folded at the end of each session).
	MaxSubagentMessages = 50000
)

// memoryStoreTables stand in for the store's tables in memory.
const memoryStoreTables = `CREATE TABLE entries(task_id TEXT, alias TEXT);
CREATE TABLE tracked(session TEXT PRIMARY KEY, model TEXT) WITHOUT ROWID;
CREATE TABLE meta(key TEXT PRIMARY KEY, value INTEGER NOT NULL) WITHOUT ROWID;`

// noSubagentTables: a database no writer of this build has opened yet,
// read-only: no subagents.
func noSubagentTables(err error) bool {
	return err != nil && strings.Contains(err.Error(), "no such table: subagent")
}

// pruneEvery: the caps are enforced in the transaction of every
// pruneEvery-th revision (each check walks the indexes up to the caps),
// so the tables are over them by fewer than pruneEvery rows at most.
const pruneEvery = 64

// pruneSubagents keeps the tables within their caps, the oldest out
// first: subagents by start (with their messages), parents by use (with
// their subagents).
func pruneSubagents(ctx context.Context, c *dbConn) error {
	if err := c.exec(ctx, `DELETE FROM subagent_messages WHERE session IN
		(SELECT session FROM subagents ORDER BY started_ns DESC LIMIT -1 OFFSET ?)`, MaxSubagents); err != nil {
		return err
	}
	if err := c.exec(ctx, `UPDATE subagent_roots SET n = n - (SELECT count(*) FROM
		(SELECT root FROM subagents ORDER BY started_ns DESC LIMIT -1 OFFSET ?) o WHERE o.root = subagent_roots.root)
		WHERE root IN (SELECT root FROM subagents ORDER BY started_ns DESC LIMIT -1 OFFSET ?)`, MaxSubagents, MaxSubagents); err != nil {
		return err
	}
	if err := c.exec(ctx, "DELETE FROM subagents WHERE session IN (SELECT session FROM subagents ORDER BY started_ns DESC LIMIT -1 OFFSET ?)", MaxSubagents); err != nil {
		return err
	}
	var old []string
	rows, err := c.query(ctx, "SELECT root FROM subagent_roots ORDER BY used_ns DESC LIMIT -1 OFFSET ?", MaxSubagentParents)
	if err != nil {
		return err
	}
	for rows.Next() {
		var r string
		if err := rows.Scan(&r); err != nil {
			rows.Close()
			return err
		}
		old = append(old, r)
	}
	rows.Close()
	for _, r := range old {
		if err := forgetRoot(ctx, c, r); err != nil {
			return err
		}
	}
	// Messages beyond their cap: the oldest sessions' go first (a session
	// that reports a message again after that counts it anew).
	return c.exec(ctx, `DELETE FROM subagent_messages WHERE done=1 AND (SELECT count(*) FROM subagent_messages) > ?`, MaxSubagentMessages)
}

// forgetRoot drops a top-level session's records and its subagents'.
func forgetRoot(ctx context.Context, c *dbConn, root string) error {
	if err := c.exec(ctx, "DELETE FROM subagent_messages WHERE session IN (SELECT session FROM subagents WHERE root=?) OR session=?", root, root); err != nil {
		return err
	}
	if err := c.exec(ctx, "DELETE FROM subagents WHERE root=?", root); err != nil {
		return err
	}
	return c.exec(ctx, "DELETE FROM subagent_roots WHERE root=?", root)
}
