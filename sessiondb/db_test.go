package sessiondb

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/hookwire/hookwire/core"
	"github.com/rs/zerolog"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hookwire/hookwire/sessions"
)

// logBuffer is a zerolog.Logger writing JSON lines to a buffer.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

func (l *logBuffer) logger() zerolog.Logger { return zerolog.New(l) }

// openTestDB attaches s to the database at path and closes it at the end.
func openTestDB(t *testing.T, path string, s *sessions.Store) (*Database, *logBuffer) {
	t.Helper()
	logs := &logBuffer{}
	d, err := OpenDatabase(t.Context(), path, s, logs.logger())
	require.NoError(t, err)
	t.Cleanup(func() { d.Close() })
	return d, logs
}

// dbHarness is a harness whose store is kept in the database at path.
func dbHarness(t *testing.T, path string, cfg sessions.Config) (*harness, *Database) {
	t.Helper()
	h := newHarness(t, cfg)
	d, _ := openTestDB(t, path, h.s)
	require.Equal(t, sessions.StatePersistent, d.State().Mode, d.State().Reason)
	return h, d
}

func populate(h *harness) {
	h.task("p1", "explorer", "one", "ses_a")
	h.task("p1", "explorer", "two", "ses_b")
	h.task("p1", "explorer", "three", "ses_c") // exp-1 evicted, counter at 3
	h.task("p1", "oracle", "four", "ses_o")
	h.task("p2", "code reviewer", "five", "ses_r")
	h.resume("p1", "explorer", "two again", "exp-2", out("ses_b"))
	h.s.Frozen().Block(context.Background(), "p1", "m1", func() string { return "### Resumable Sessions\n- explorer: exp-1 one" })
	h.s.Frozen().Block(context.Background(), "p1", "m2", func() string { return "" })
	h.s.Tracked().SetAgent(context.Background(), "p1", "orchestrator")
	h.s.Tracked().SetAgent(context.Background(), "p2", "orchestrator")
	h.s.Tracked().SetAgent(context.Background(), "ses_a", "explorer")
	h.s.Tracked().SetModelDecision(context.Background(), "ses_a", sessions.ModelDecision{Model: "fake/m1", Rung: "agent-model"})
	h.s.Tasks().BeginCall(context.Background(), "pending", "p1", "explorer", "in flight", "")
}

func noCompute(t *testing.T) func() string {
	return func() string { t.Error("the frozen block was computed again"); return "x" }
}

// What one store keeps, a store opened later on the same database has:
// entries, counters, frozen blocks, agents and model decisions.
func TestDatabaseRoundTrip(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.db")
	a, da := dbHarness(t, path, sessions.Config{})
	populate(a)
	want := a.s.Tasks().List("")
	require.Len(t, want, 4)
	require.NoError(t, da.Close())

	b, _ := dbHarness(t, path, sessions.Config{})
	assert.Equal(t, want, b.s.Tasks().List(""))
	assert.Equal(t, []string{"exp-2=ses_b two", "ora-1=ses_o four", "exp-3=ses_c three"}, b.aliases("p1"))
	assert.Equal(t, "### Resumable Sessions\n- explorer: exp-1 one", b.s.Frozen().Block(context.Background(), "p1", "m1", noCompute(t)))
	assert.Equal(t, "", b.s.Frozen().Block(context.Background(), "p1", "m2", noCompute(t)))
	assert.Equal(t, "orchestrator", b.s.Tracked().Agent("p1"))
	assert.Equal(t, "explorer", b.s.Tracked().Agent("ses_a"))
	m, ok := b.s.Tracked().ModelDecision("ses_a")
	assert.True(t, ok)
	assert.Equal(t, sessions.ModelDecision{Model: "fake/m1", Rung: "agent-model"}, m)
	// The counter continues: exp-1 was evicted, never reused.
	b.task("p1", "explorer", "six", "ses_d")
	assert.Equal(t, "exp-4", b.s.Tasks().List("p1")[0].Alias)
	st := b.s.Stats()
	assert.Equal(t, sessions.Stats{Parents: 2, Entries: 4, TrackedSessions: 3, FrozenBlocks: 2}, st, "exp-4 pushed exp-3 out")
}

// Two stores on one database, as two processes on one project: each
// resolves what the other remembered, alias numbers never collide, and
// each lists both's sessions.
func TestDatabaseShared(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.db")
	a, _ := dbHarness(t, path, sessions.Config{MaxSessionsPerAgent: 10})
	b, _ := dbHarness(t, path, sessions.Config{MaxSessionsPerAgent: 10})

	a.task("p1", "explorer", "from a", "ses_a1")
	act, id := b.resolve("p1", "explorer", "exp-1")
	assert.Equal(t, sessions.TaskIDReplace, act, "b resolves a's alias")
	assert.Equal(t, "ses_a1", id)

	b.task("p1", "explorer", "from b", "ses_b1")
	assert.Equal(t, "exp-2", b.s.Tasks().List("p1")[0].Alias, "b continues a's counter")
	act, id = a.resolve("p1", "explorer", "exp-2")
	assert.Equal(t, sessions.TaskIDReplace, act, "a resolves b's alias (read through on its cache's stale parent)")
	assert.Equal(t, "ses_b1", id)

	a.task("p1", "explorer", "from a again", "ses_a2")
	assert.Equal(t, "exp-3", a.s.Tasks().List("p1")[0].Alias)
	blocks := b.s.Tasks().ResumableSessions("p1")
	require.Len(t, blocks, 1)
	var aliases []string
	for _, e := range blocks[0].Entries {
		aliases = append(aliases, e.Alias)
	}
	assert.Equal(t, []string{"exp-3", "exp-2", "exp-1"}, aliases, "b's Resumable Sessions show a's newest")

	b.task("p2", "oracle", "b's own parent", "ses_o")
	assert.Len(t, a.s.Tasks().List(""), 4, "sessions.list of a includes b's parent")

	// A session deleted in one is gone in the other.
	a.s.DeleteSession(context.Background(), "p1")
	act, _ = b.resolve("p1", "explorer", "exp-1")
	assert.Equal(t, sessions.TaskIDRemove, act)
	assert.Empty(t, b.s.Tasks().List("p1"))

	// An agent set in one is read through by the other.
	a.s.Tracked().SetAgent(context.Background(), "ses_x", "explorer")
	assert.Equal(t, "explorer", b.s.Tracked().Agent("ses_x"))
	b.s.Tracked().SetAgent(context.Background(), "ses_x", "oracle")
	assert.Equal(t, "oracle", a.s.Tracked().Agent("ses_x"))
}

// Stores racing to remember tasks under one parent and agent never hand
// out one alias twice.
func TestDatabaseAliasesAtomic(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.db")
	const stores, tasks = 4, 25
	hs := make([]*harness, stores)
	logs := make([]*logBuffer, stores)
	for i := range hs {
		hs[i] = newHarness(t, sessions.Config{MaxSessionsPerAgent: stores * tasks})
		_, logs[i] = openTestDB(t, path, hs[i].s)
	}
	var wg sync.WaitGroup
	for i, h := range hs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range tasks {
				c := fmt.Sprintf("c%d_%d", i, j)
				h.s.Tasks().BeginCall(context.Background(), c, "p", "explorer", "l", "")
				h.s.Tasks().CompleteCall(context.Background(), c, out(fmt.Sprintf("ses_%d_%d", i, j)))
			}
		}()
	}
	wg.Wait()
	all := hs[0].s.Tasks().List("p")
	require.Len(t, all, stores*tasks, "logs: %v", logs)
	seen := map[string]string{}
	for _, e := range all {
		require.Empty(t, seen[e.Alias], "alias %s handed out for %s and %s", e.Alias, seen[e.Alias], e.TaskID)
		seen[e.Alias] = e.TaskID
	}
	for n := 1; n <= stores*tasks; n++ {
		assert.Contains(t, seen, "exp-"+strconv.Itoa(n))
	}
}

// The database keeps the store's bounds: parents and tracked sessions by
// least recent write, and the byte budget, pruned as it grows.
func TestDatabaseBounds(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.db")
	a, _ := dbHarness(t, path, sessions.Config{MaxParents: 3, MaxTrackedSessions: 2})
	b, _ := dbHarness(t, path, sessions.Config{MaxParents: 3, MaxTrackedSessions: 2})
	for i := range 5 {
		h := a
		if i%2 == 1 {
			h = b
		}
		h.task("p"+strconv.Itoa(i), "explorer", "l", "ses_"+strconv.Itoa(i))
		h.s.Tracked().SetAgent(context.Background(), "s"+strconv.Itoa(i), "explorer")
	}
	st := a.s.Stats()
	assert.Equal(t, 3, st.Parents)
	assert.Equal(t, 2, st.TrackedSessions)
	var parents []string
	for _, e := range a.s.Tasks().List("") {
		parents = append(parents, e.Parent)
	}
	assert.Equal(t, []string{"p4", "p3", "p2"}, parents, "the least recently written parents go")
	assert.Empty(t, a.s.Tasks().List("p0"), "a forgot p0 although its cache held it")

	const budget = 16 << 10
	path = filepath.Join(t.TempDir(), "budget.db")
	c, _ := dbHarness(t, path, sessions.Config{MaxStateBytes: budget})
	for i := range 40 {
		c.task("p"+strconv.Itoa(i), "x", "", "ses_"+strconv.Itoa(i))
	}
	var bytes int64
	db := rawDB(t, path)
	require.NoError(t, db.QueryRow("SELECT (SELECT coalesce(sum(bytes),0) FROM parents) + (SELECT coalesce(sum(bytes),0) FROM tracked)").Scan(&bytes))
	assert.LessOrEqual(t, bytes, int64(budget))
	assert.Less(t, c.s.Stats().Parents, 40)
	assert.Len(t, c.s.Tasks().List("p39"), 1, "the newest parent is kept")
}

// rawDB opens path with plain SQL, for tests that look inside.
func rawDB(t *testing.T, path string) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlite", path)
	require.NoError(t, err)
	t.Cleanup(func() { db.Close() })
	return db
}

func TestDatabaseNewerFormat(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.db")
	h, d := dbHarness(t, path, sessions.Config{})
	h.task("p1", "explorer", "one", "ses_a")
	require.NoError(t, d.Close())
	_, err := rawDB(t, path).Exec("PRAGMA user_version = 7")
	require.NoError(t, err)

	s := newTestStore(sessions.Config{})
	d2, logs := openTestDB(t, path, s)
	st := d2.State()
	assert.Equal(t, sessions.StateMemoryOnly, st.Mode)
	assert.Contains(t, st.Reason, "format 7 written by a newer hookwire")
	assert.Contains(t, logs.String(), "newer hookwire")
	_, err = ReadState(path)
	assert.ErrorIs(t, err, ErrNewerFormat)
	matches, _ := filepath.Glob(path + ".corrupt-*")
	assert.Empty(t, matches, "a newer database is never moved aside")
}

func TestDatabaseCorruptMovedAside(t *testing.T) {
	for _, tt := range []struct{ name, content string }{
		{"garbage", "this is not a database, it is a text file of some length\n"},
		{"another program's database", ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "state.db")
			if tt.content != "" {
				require.NoError(t, os.WriteFile(path, []byte(tt.content), 0o600))
			} else {
				_, err := rawDB(t, path).Exec("CREATE TABLE theirs(x); INSERT INTO theirs VALUES(1)")
				require.NoError(t, err)
			}
			h, d := dbHarness(t, path, sessions.Config{})
			st := d.State()
			require.Len(t, st.Warnings, 1)
			assert.Contains(t, st.Warnings[0], "moved to "+path+".corrupt-")
			matches, _ := filepath.Glob(path + ".corrupt-*")
			require.Len(t, matches, 1)
			if tt.content != "" {
				data, err := os.ReadFile(matches[0])
				require.NoError(t, err)
				assert.Equal(t, tt.content, string(data), "moved, never emptied")
			}
			h.task("p1", "explorer", "one", "ses_a")
			assert.Len(t, h.s.Tasks().List(""), 1, "a new database serves")
		})
	}
}

// The database and its companion files are never opened through a
// symlink, nor as a FIFO or another non-regular file: the store runs in
// memory, the link's target is untouched, a dangling link creates nothing.
func TestDatabaseRefusesLinksAndFIFOs(t *testing.T) {
	tests := []struct {
		name  string
		plant func(t *testing.T, path, target string)
		why   string
	}{
		{"a symlink at the database", func(t *testing.T, path, target string) {
			require.NoError(t, os.WriteFile(target, []byte("precious"), 0o600))
			require.NoError(t, os.Symlink(target, path))
		}, "symbolic link"},
		{"a dangling symlink at the database", func(t *testing.T, path, target string) {
			require.NoError(t, os.Symlink(target, path))
		}, "symbolic link"},
		{"a symlink at -wal", func(t *testing.T, path, target string) {
			require.NoError(t, os.WriteFile(target, []byte("precious"), 0o600))
			require.NoError(t, os.Symlink(target, path+"-wal"))
		}, "symbolic link"},
		{"a dangling symlink at -shm", func(t *testing.T, path, target string) {
			require.NoError(t, os.Symlink(target, path+"-shm"))
		}, "symbolic link"},
		{"a FIFO at the database", func(t *testing.T, path, target string) {
			if err := mkfifo(path); err != nil {
				t.Skip("no FIFOs here:", err)
			}
		}, "not a regular file"},
		{"a directory at the database", func(t *testing.T, path, target string) {
			require.NoError(t, os.Mkdir(path, 0o700))
		}, "not a regular file"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "state.db")
			target := filepath.Join(t.TempDir(), "target")
			tt.plant(t, path, target)
			h := newHarness(t, sessions.Config{})
			d, _ := openTestDB(t, path, h.s)
			st := d.State()
			assert.Equal(t, sessions.StateMemoryOnly, st.Mode)
			assert.Contains(t, st.Reason, tt.why)
			h.task("p1", "explorer", "one", "ses_a")
			assert.Len(t, h.s.Tasks().List("p1"), 1, "served from memory")
			data, err := os.ReadFile(target)
			if err == nil {
				assert.Equal(t, "precious", string(data), "the link's target is untouched")
			} else {
				assert.ErrorIs(t, err, os.ErrNotExist, "a dangling link's target is not created")
			}
			_, err = ReadState(path)
			var fe *FileError
			assert.ErrorAs(t, err, &fe, "readers refuse it too")
			_, err = Forget(context.Background(), path, ForgetSpec{All: true})
			assert.ErrorAs(t, err, &fe, "forget refuses it too")
		})
	}
}

func TestDatabaseModesAndDirWarning(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "state")
	path := filepath.Join(dir, "state.db")
	h, d := dbHarness(t, path, sessions.Config{})
	h.task("p1", "explorer", "one", "ses_a")
	assert.Empty(t, d.State().Warnings)
	for _, name := range []string{path, path + "-wal", path + "-shm"} {
		fi, err := os.Stat(name)
		require.NoError(t, err)
		assert.Equal(t, os.FileMode(0o600), fi.Mode().Perm(), name)
	}
	fi, err := os.Stat(dir)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o700), fi.Mode().Perm())

	require.NoError(t, os.Chmod(dir, 0o777))
	_, d2 := dbHarness(t, path, sessions.Config{})
	require.Len(t, d2.State().Warnings, 1)
	assert.Contains(t, d2.State().Warnings[0], "writable by others")
}

// releaseState is a state file the release before the database wrote
// (testdata/release-state.requests.jsonl made it, through `hookwire serve
// --framing line --state`).
// releaseConfig is the config release-state.requests.jsonl gave.
var releaseConfig = sessions.Config{AliasOverrides: map[string]string{"code reviewer": "rev"}}

func releaseState(t *testing.T, path string) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "release-state.json"))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(path, data, 0o600))
}

// assertReleaseState checks that h serves what testdata/release-state.json
// holds, and continues its counters.
func assertReleaseState(t *testing.T, h *harness) {
	t.Helper()
	assert.Equal(t, []string{"rev-1=ses_child_r1 Review the diff", "exp-2=ses_child_x2 Map the lexer", "exp-1=ses_child_x1 Map the parser"}, h.aliases("ses_parent_a"))
	act, id := h.resolve("ses_parent_a", "explorer", "exp-1")
	assert.Equal(t, sessions.TaskIDReplace, act)
	assert.Equal(t, "ses_child_x1", id)
	assert.Contains(t, h.s.Frozen().Block(context.Background(), "ses_parent_a", "msg_u2", noCompute(t)), "explorer: exp-2 Map the lexer; exp-1 Map the parser")
	assert.Equal(t, "", h.s.Frozen().Block(context.Background(), "ses_parent_a", "msg_u1", noCompute(t)))
	assert.Equal(t, "orchestrator", h.s.Tracked().Agent("ses_parent_a"))
	assert.Equal(t, "explorer", h.s.Tracked().Agent("ses_child_x1"))
	list := h.s.Tasks().List("ses_parent_b")
	require.Len(t, list, 1)
	assert.Equal(t, sessions.Run{State: sessions.RunRunning}, list[0].Run)
	h.task("ses_parent_a", "code reviewer", "again", "ses_child_r2")
	assert.Equal(t, "rev-2", h.s.Tasks().List("ses_parent_a")[0].Alias, "the counter continues")
}

// An earlier release's JSON state file beside the database (--project's
// <key>.json) is imported once, then kept as <key>.json.bak.
func TestMigrateFromRelease(t *testing.T) {
	dir := t.TempDir()
	legacy := filepath.Join(dir, "proj-0123456789abcdef.json")
	path := filepath.Join(dir, "proj-0123456789abcdef.db")
	releaseState(t, legacy)

	h, d := dbHarness(t, path, releaseConfig)
	assertReleaseState(t, h)
	_, err := os.Stat(legacy)
	assert.ErrorIs(t, err, os.ErrNotExist)
	bak, err := os.ReadFile(legacy + ".bak")
	require.NoError(t, err)
	orig, _ := os.ReadFile(filepath.Join("testdata", "release-state.json"))
	assert.Equal(t, orig, bak, "kept as it was")
	require.NoError(t, d.Close())

	// Once: a JSON file that reappears is not imported over the database.
	releaseState(t, legacy)
	h2, _ := dbHarness(t, path, releaseConfig)
	assert.Equal(t, "rev-2", h2.s.Tasks().List("ses_parent_a")[0].Alias)
	assert.Len(t, h2.s.Tasks().List("ses_parent_a"), 4, "two per agent, as before the second open")
}

// --state FILE naming an earlier release's JSON file: FILE becomes the
// database, the JSON kept as FILE.bak.
func TestMigrateInPlace(t *testing.T) {
	path := filepath.Join(t.TempDir(), "hookwire.json")
	releaseState(t, path)
	got, err := ReadState(path)
	require.NoError(t, err, "readers read the JSON file before any sidecar migrates it")
	require.Len(t, got.Sessions, 4)

	h, _ := dbHarness(t, path, releaseConfig)
	assertReleaseState(t, h)
	assert.False(t, isJSONFile(path))
	assert.True(t, isJSONFile(path+".bak"))
	leftovers, _ := filepath.Glob(path + ".migrating-*")
	assert.Empty(t, leftovers)
	got, err = ReadState(path)
	require.NoError(t, err)
	assert.Len(t, got.Sessions, 5)
}

// --state FILE naming an earlier release's JSON file where no database can
// be built beside it: the file is served read-only, all of it (entries,
// model health), never written.
func TestMigrateInPlaceFallsBackToReadOnly(t *testing.T) {
	path := filepath.Join(t.TempDir(), "hookwire.json")
	w := newHarness(t, sessions.Config{})
	w.task("p1", "explorer", "one", "ses_a")
	until := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	w.s.ProviderHealth().Set(context.Background(), "openai/gpt-5", core.ModelHealth{Until: until, Strikes: 2, Last: until.Add(-time.Minute), Class: "rate_limit"})
	doc, err := w.s.Snapshot()
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(path, doc, 0o600))
	// A non-empty directory where the database is built: it cannot be
	// removed, and SQLite cannot open it.
	tmp := path + ".migrating-" + strconv.Itoa(os.Getpid())
	require.NoError(t, os.MkdirAll(filepath.Join(tmp, "x"), 0o700))

	r := newHarness(t, sessions.Config{})
	d, _ := openTestDB(t, path, r.s)
	assert.Equal(t, sessions.StateReadOnly, d.State().Mode)
	assert.True(t, isJSONFile(path), "the JSON file is left as it was")
	act, id := r.resolve("p1", "explorer", "exp-1")
	assert.Equal(t, sessions.TaskIDReplace, act)
	assert.Equal(t, "ses_a", id)
	h, ok := r.s.ProviderHealth().Of("openai/gpt-5")
	require.True(t, ok, "the file's model health is served too")
	assert.Equal(t, 2, h.Strikes)
	assert.True(t, r.s.ProviderHealth().Cooling("openai/gpt-5", until.Add(-time.Hour)))
}

// A database that cannot be written is read: existing aliases resolve,
// new ones live in memory, and status says read-only with the reason.
func TestDatabaseReadOnly(t *testing.T) {
	if rerunAsNobody(t) { // root writes read-only files
		return
	}
	dir := filepath.Join(t.TempDir(), "state")
	path := filepath.Join(dir, "state.db")
	h, d := dbHarness(t, path, sessions.Config{})
	h.task("p1", "explorer", "one", "ses_a")
	require.NoError(t, d.Close())
	require.NoError(t, os.Chmod(path, 0o400))
	require.NoError(t, os.Chmod(dir, 0o500))
	t.Cleanup(func() { os.Chmod(dir, 0o700) })

	r := newHarness(t, sessions.Config{})
	rd, logs := openTestDB(t, path, r.s)
	st := rd.State()
	assert.Equal(t, sessions.StateReadOnly, st.Mode)
	assert.NotEmpty(t, st.Reason)
	assert.Contains(t, logs.String(), "read-only")
	act, id := r.resolve("p1", "explorer", "exp-1")
	assert.Equal(t, sessions.TaskIDReplace, act)
	assert.Equal(t, "ses_a", id)
	r.task("p1", "explorer", "two", "ses_b")
	assert.Equal(t, "exp-2", r.s.Tasks().List("p1")[0].Alias, "new aliases live in memory")
}

// Closing the last connection leaves a single file in rollback mode.
func TestDatabaseCloseCheckpoints(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.db")
	h, d := dbHarness(t, path, sessions.Config{})
	h.task("p1", "explorer", "one", "ses_a")
	require.NoError(t, d.Close())
	for _, s := range []string{"-wal", "-shm"} {
		_, err := os.Stat(path + s)
		assert.ErrorIs(t, err, os.ErrNotExist, s)
	}
	got, err := ReadState(path)
	require.NoError(t, err)
	assert.Len(t, got.Sessions, 1)
}

func TestOpenDatabaseBadArguments(t *testing.T) {
	_, err := OpenDatabase(context.Background(), "", sessions.New(sessions.Config{}), zerolog.Nop())
	assert.Error(t, err)
	_, err = OpenDatabase(context.Background(), filepath.Join(t.TempDir(), "x.db"), nil, zerolog.Nop())
	assert.Error(t, err)
}
