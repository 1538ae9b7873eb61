package sessiondb

import (
	"context"
	"database/sql"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hookwire/hookwire/core"
	"github.com/hookwire/hookwire/sessions"
)

// Issue 39 item 3: a format number hookwire never writes. -1 made the
// migration index migrations[-1] and panic holding SQLite's write lock
// (initialize -32603, the project's other sidecars "database is locked",
// forget panicking); 0 with the schema there left every sidecar
// memory-only ("table meta already exists") with no way out. Each is a
// damaged database: a sidecar moves it aside and persists in a new one,
// another sidecar opens that at once, and forget --all resets it.
func TestDamagedFormatNumber(t *testing.T) {
	for _, version := range []string{"-1", "-2147483648", "0"} {
		t.Run("user_version "+version, func(t *testing.T) {
			for _, opener := range []string{"sidecar", "forget --all", "forget --parent"} {
				t.Run(opener, func(t *testing.T) {
					path := filepath.Join(t.TempDir(), "state.db")
					filledDB(t, path, 3)
					execOn(t, path, "PRAGMA user_version = "+version)

					switch opener {
					case "sidecar":
						h := newHarness(t, sessions.Config{})
						d, _ := openTestDB(t, path, h.s)
						st := d.State()
						require.Equal(t, sessions.StatePersistent, st.Mode, st.Reason)
						require.Len(t, st.Warnings, 1)
						assert.Contains(t, st.Warnings[0], "format number (PRAGMA user_version) is "+version)
						assert.Contains(t, st.Warnings[0], ".corrupt-")
						h.task("ses_new", "explorer", "new", "ses_new_child")
						// Another sidecar is not locked out: it opens the new
						// database and sees the alias at once.
						ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
						defer cancel()
						o := newHarness(t, sessions.Config{})
						od, err := OpenDatabase(ctx, path, o.s, zerolog.Nop())
						require.NoError(t, err)
						defer od.Close()
						require.Equal(t, sessions.StatePersistent, od.State().Mode, od.State().Reason)
						assert.Empty(t, od.State().Warnings)
						assert.Equal(t, []string{"exp-1=ses_new_child new"}, o.aliases("ses_new"))
					case "forget --all":
						got, err := Forget(t.Context(), path, ForgetSpec{All: true})
						require.NoError(t, err)
						assert.Equal(t, Forgotten{}, got, "the new database held nothing")
						h, d := dbHarness(t, path, sessions.Config{})
						assert.Empty(t, d.State().Warnings, "forget --all left a usable database")
						h.task("ses_new", "explorer", "new", "ses_new_child")
					case "forget --parent":
						_, err := Forget(t.Context(), path, ForgetSpec{Parent: "ses_p1"})
						require.Error(t, err)
						assert.Contains(t, err.Error(), "moved to")
					}
				})
			}
		})
	}
}

// A panic inside a write transaction (a bug) still releases SQLite's
// write lock: the panicked migration kept it for the life of the process.
func TestPanicInTransactionReleasesTheLock(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.db")
	filledDB(t, path, 1)
	c, _, err := openDB(t.Context(), path, openReadWrite)
	require.NoError(t, err)
	defer c.close()
	require.Panics(t, func() {
		c.inTx(t.Context(), func() error { panic("a bug") })
	})
	// Another connection writes at once.
	o, _, err := openDB(t.Context(), path, openReadWrite)
	require.NoError(t, err)
	defer o.close()
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Second)
	defer cancel()
	require.NoError(t, o.inTx(ctx, func() error {
		return o.exec(ctx, "INSERT INTO meta(key,value) VALUES('probe',1)")
	}))
	// And so does the panicked connection.
	require.NoError(t, c.inTx(ctx, func() error {
		return c.exec(ctx, "INSERT INTO meta(key,value) VALUES('probe2',1)")
	}))
}

// Issue 39 item 8: forget --all kept the prompt-cache and health rows
// (so `hookwire sessions` still listed the forgotten sessions) and
// counted 0 entries. Everything goes, and each count is what was deleted.
func TestForgetAllLeavesNothing(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.db")
	h, d := dbHarness(t, path, sessions.Config{})
	for i := range 3 {
		h.task("ses_p", "explorer", "task "+strconv.Itoa(i), "ses_c"+strconv.Itoa(i))
	}
	h.task("ses_q", "general", "other", "ses_d")
	ctx := context.Background()
	h.s.Tracked().SetAgent(ctx, "ses_c0", "explorer")
	for i, s := range []string{"ses_p", "ses_c0", "ses_c1", "ses_d"} {
		h.s.PromptCache().Usage(ctx, sessions.Usage{Session: s, Message: "m" + strconv.Itoa(i), Input: 10, CacheRead: 90})
	}
	for _, m := range []string{"fake/a", "fake/b"} {
		h.s.ProviderHealth().Set(ctx, m, core.ModelHealth{Until: epoch.Add(time.Hour), Strikes: 1, Last: epoch, Class: core.FailureRateLimit, Message: "429"})
	}
	require.NoError(t, d.Close())
	cached := countRows(t, path, "cache")
	require.GreaterOrEqual(t, cached, 3)
	require.Equal(t, 2, countRows(t, path, "health"))
	entries := countRows(t, path, "entries")
	require.GreaterOrEqual(t, entries, 3)
	tracked := countRows(t, path, "tracked")
	require.NotZero(t, tracked)

	got, err := Forget(ctx, path, ForgetSpec{All: true})
	require.NoError(t, err)
	assert.Equal(t, Forgotten{Parents: 2, Entries: entries, Sessions: tracked, Cache: cached, Health: 2}, got)
	for _, table := range []string{"parents", "entries", "counters", "frozen", "tracked", "cache", "health"} {
		assert.Zero(t, countRows(t, path, table), table)
	}
	v, err := OpenStateView(path)
	require.NoError(t, err)
	defer v.Close()
	assert.Zero(t, v.Entries)
	assert.Empty(t, v.Cache, "hookwire sessions lists no prompt-cache figures")
	assert.Empty(t, v.Health)
}

// Issue 39 item 6, the older writer's side: a build of format 4 (or
// before), still running after a newer one migrated the file, writes its
// prompt-cache rows without bytes. Its write failed "NOT NULL constraint
// failed: cache.bytes"; now the row is taken and counted as migration 5
// counts such rows.
func TestOlderWriterCacheRowAfterMigration(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.db")
	filledDB(t, path, 1)
	data := `{"session":"ses_old","requests":3}` + strings.Repeat(" ", 2500)
	execOn(t, path, "INSERT INTO cache(session, used, data) VALUES('ses_old', 42, '"+data+"') ON CONFLICT(session) DO UPDATE SET used=excluded.used, data=excluded.data")
	db, err := sql.Open("sqlite", path)
	require.NoError(t, err)
	defer db.Close()
	var used, bytes int64
	require.NoError(t, db.QueryRow("SELECT used, bytes FROM cache WHERE session='ses_old'").Scan(&used, &bytes))
	assert.Equal(t, int64(42), used)
	assert.Equal(t, formatRowBytes(len("ses_old")+len(data)), bytes)
	// An older writer's row with explicit bytes (this build's) is left alone.
	execOn(t, path, "INSERT INTO cache(session, used, bytes, data) VALUES('ses_new', 43, 777, '{}')")
	require.NoError(t, db.QueryRow("SELECT bytes FROM cache WHERE session='ses_new'").Scan(&bytes))
	assert.Equal(t, int64(777), bytes)
}

// formatRowBytes is what migration 5 counts for a row of n bytes (its
// session and figures): 64 bytes of row, and past 2,000 bytes the first
// page's 1,003 bytes plus whole 8,192-byte overflow pages of 8,188 usable
// bytes each. Written out apart from the SQL so a slip in it shows.
func formatRowBytes(n int) int64 {
	if n <= 2000 {
		return int64(64 + n)
	}
	pages := (n - 1003 + 8187) / 8188
	return int64(64 + 1003 + 8192*pages)
}

// Issue 39 item 6, this build's side: a newer hookwire migrates the file
// while this process runs. Every write is refused from then on (it may
// not know what the newer format needs), with the reason in
// lastWriteError for as long as that lasts (a later write no longer
// clears it) and once among the warnings; what the process acknowledged
// is served from its memory.
func TestNewerFormatWhileRunning(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.db")
	h, d := dbHarness(t, path, sessions.Config{})
	h.task("ses_p", "explorer", "before", "ses_before")
	execOn(t, path, "PRAGMA user_version = "+strconv.Itoa(schemaVersion+1))

	h.task("ses_p", "explorer", "after", "ses_after")
	h.s.Tracked().SetAgent(context.Background(), "ses_other", "explorer") // another write
	st := d.State()
	assert.Contains(t, st.LastWriteError, "migrated to format "+strconv.Itoa(schemaVersion+1)+" by a newer hookwire")
	assert.Contains(t, st.LastWriteError, "restart OpenCode")
	n := 0
	for _, w := range st.Warnings {
		if strings.Contains(w, "by a newer hookwire") {
			n++
		}
	}
	assert.Equal(t, 1, n, "said once among the warnings: %q", st.Warnings)
	var ids []string
	for _, e := range h.s.Tasks().List("ses_p") {
		ids = append(ids, e.TaskID)
	}
	assert.ElementsMatch(t, []string{"ses_before", "ses_after"}, ids, "served from memory")
	db, err := sql.Open("sqlite", path)
	require.NoError(t, err)
	defer db.Close()
	var rows int
	require.NoError(t, db.QueryRow("SELECT count(*) FROM entries WHERE task_id='ses_after'").Scan(&rows))
	assert.Zero(t, rows, "nothing written to the newer format")
}
