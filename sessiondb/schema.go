package sessiondb

import (
	"context"
	"fmt"
)

// The state database's schema, in one place: numbered migrations, each
// taking the database from format N-1 to N (PRAGMA user_version). A new
// database runs them all; an older one the ones it lacks; all of one
// open's in a single write transaction, so a crash or a failing migration
// leaves the database as it was. A migration that has shipped is never
// edited: what changes the schema is a new one at the end.

// applicationID marks a hookwire database (PRAGMA application_id, "hkwr").
const applicationID = 0x686b7772

// migration is one step of the schema.
type migration struct {
	name string
	sql  string
}

// migrations: migrations[i] makes format i+1.
var migrations = [...]migration{
	// 1: the first database release. The parents' rows are keyed by a
	// small integer (pid) in the other tables: a session id, up to
	// MaxIDBytes, is kept once, not with each of its entries, counters and
	// frozen blocks (which are rowid tables, so a block of a few KiB fills
	// whole overflow pages).
	{"aliases, counters, frozen blocks, tracked sessions", `
CREATE TABLE meta(key TEXT PRIMARY KEY, value INTEGER NOT NULL) WITHOUT ROWID;
CREATE TABLE parents(pid INTEGER PRIMARY KEY, id TEXT NOT NULL UNIQUE, rev INTEGER NOT NULL, bytes INTEGER NOT NULL);
CREATE INDEX parents_rev ON parents(rev);
CREATE TABLE counters(pid INTEGER NOT NULL, prefix TEXT NOT NULL, n INTEGER NOT NULL,
  PRIMARY KEY(pid, prefix)) WITHOUT ROWID;
CREATE TABLE entries(pid INTEGER NOT NULL, alias TEXT NOT NULL, agent TEXT NOT NULL, task_id TEXT NOT NULL,
  label TEXT NOT NULL, last_use INTEGER NOT NULL, tick INTEGER NOT NULL, run_state TEXT NOT NULL, run_error TEXT NOT NULL,
  UNIQUE(pid, alias));
CREATE INDEX entries_task ON entries(task_id);
CREATE TABLE frozen(pid INTEGER NOT NULL, message_id TEXT NOT NULL, seq INTEGER NOT NULL, block TEXT NOT NULL,
  UNIQUE(pid, message_id));
CREATE TABLE tracked(session TEXT PRIMARY KEY, agent TEXT NOT NULL, model TEXT, rev INTEGER NOT NULL, bytes INTEGER NOT NULL) WITHOUT ROWID;
CREATE INDEX tracked_rev ON tracked(rev);
`},
	// 2: the models' health (health.go). Builds of format 1 made it
	// beside that schema at each open for writing (IF NOT EXISTS), so a
	// format-1 database may hold it already.
	{"models' health", `
CREATE TABLE IF NOT EXISTS health(model TEXT PRIMARY KEY, until_ns INTEGER NOT NULL,
  strikes INTEGER NOT NULL, last_ns INTEGER NOT NULL, class TEXT NOT NULL, message TEXT NOT NULL) WITHOUT ROWID;
`},
	// 3: the prompt-cache figures (cachedb.go), one row per session.
	// Builds of format 1 made it at the first figures written, so a
	// format-1 database may hold it already.
	{"prompt-cache figures", `
CREATE TABLE IF NOT EXISTS cache(session TEXT PRIMARY KEY, used INTEGER NOT NULL, data TEXT NOT NULL) WITHOUT ROWID;
`},
	// 4: the entries by use (dblist.go): a page of sessions.list's
	// order, newest use first, is read from the index, in time that
	// grows with the page, not with the database (issue 30 item 13).
	{"entries by use", `
CREATE INDEX IF NOT EXISTS entries_tick ON entries(tick);
`},
	// 5: the prompt-cache rows inside the byte budget (issue 30 item 8):
	// each row says what it takes (bytes, budget.go's cacheRowCost) ahead
	// of its figures, so the sum is read from the rows' first page, not
	// their overflow pages. The rows a build before it wrote are counted
	// as their figures rounded up to whole pages, until written again.
	{"prompt-cache rows counted", `
CREATE TABLE cache_counted(session TEXT PRIMARY KEY, used INTEGER NOT NULL, bytes INTEGER NOT NULL, data TEXT NOT NULL) WITHOUT ROWID;
INSERT INTO cache_counted(session, used, bytes, data)
  SELECT session, used, 64 + CASE WHEN n <= 2000 THEN n ELSE 1003 + 8192*((n - 1003 + 8187)/8188) END, data
  FROM (SELECT session, used, data, length(CAST(session AS BLOB)) + length(CAST(data AS BLOB)) AS n FROM cache);
DROP TABLE cache;
ALTER TABLE cache_counted RENAME TO cache;
`},
	// 6: older writers keep working (issue 39 item 6). A build of format
	// 4 or before, still running while a newer one migrated the file,
	// writes its prompt-cache rows without bytes: "NOT NULL constraint
	// failed: cache.bytes", and its sessions' figures never reached the
	// file. The column now has a default, and a row written without it
	// is counted as migration 5 counts such rows. A migration that adds
	// a column gives it a default in the same way.
	{"prompt-cache rows from older writers", `
CREATE TABLE cache_defaulted(session TEXT PRIMARY KEY, used INTEGER NOT NULL, bytes INTEGER NOT NULL DEFAULT -1, data TEXT NOT NULL) WITHOUT ROWID;
INSERT INTO cache_defaulted(session, used, bytes, data) SELECT session, used, bytes, data FROM cache;
DROP TABLE cache;
ALTER TABLE cache_defaulted RENAME TO cache;
CREATE TRIGGER cache_bytes_counted AFTER INSERT ON cache WHEN NEW.bytes < 0 BEGIN
  UPDATE cache SET bytes = (SELECT 64 + CASE WHEN n <= 2000 THEN n ELSE 1003 + 8192*((n - 1003 + 8187)/8188) END
    FROM (SELECT length(CAST(NEW.session AS BLOB)) + length(CAST(NEW.data AS BLOB)) AS n))
  WHERE session = NEW.session;
END;
`},
}

// schemaVersion is the format this build writes (PRAGMA user_version). A
// database of a higher one is refused (PROTOCOL.md 6); a lower one is
// migrated when a sidecar opens it for writing, and read as it is by a
// read-only open (cachedb.go and health.go read a table that is not there
// as empty).
const schemaVersion = len(migrations)

// migrate brings the database to the last of list, in one write
// transaction: it reads the format there, refuses a newer one, and runs
// each migration the database lacks, in order. Another process that
// migrated meanwhile leaves nothing to do.
func (c *dbConn) migrate(ctx context.Context, list []migration) error {
	return c.inTx(ctx, func() error {
		var version int64
		if err := c.conn.QueryRowContext(ctx, "PRAGMA user_version").Scan(&version); err != nil {
			return err
		}
		if version < 0 {
			return damagedFormat(version)
		}
		if version > int64(len(list)) {
			return fmt.Errorf("format %d %w (this build reads %d): upgrade hookwire, or point --state elsewhere", version, ErrNewerFormat, len(list))
		}
		if version == int64(len(list)) {
			return nil
		}
		for i := version; i < int64(len(list)); i++ {
			if _, err := c.conn.ExecContext(ctx, list[i].sql); err != nil {
				return fmt.Errorf("migrating the database to format %d (%s): %w", i+1, list[i].name, err)
			}
		}
		if version == 0 {
			if _, err := c.conn.ExecContext(ctx, fmt.Sprintf("PRAGMA application_id = %d", applicationID)); err != nil {
				return err
			}
		}
		_, err := c.conn.ExecContext(ctx, fmt.Sprintf("PRAGMA user_version = %d", len(list)))
		return err
	})
}
