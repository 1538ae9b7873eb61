package sessions

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/rs/zerolog"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// populated returns a store holding a bit of everything.
func populated(t *testing.T, cfg Config) *harness {
	h := newHarness(t, cfg)
	populate(h)
	return h
}

func populate(h *harness) {
	h.task("p1", "explorer", "one", "ses_a")
	h.task("p1", "explorer", "two", "ses_b")
	h.task("p1", "explorer", "three", "ses_c") // exp-1 evicted, counter at 3
	h.task("p1", "oracle", "four", "ses_o")
	h.task("p2", "code reviewer", "five", "ses_r")
	h.resume("p1", "explorer", "two again", "exp-2", out("ses_b"))
	h.s.FrozenBlock("p1", "m1", func() string { return "### Resumable Sessions\n- explorer: exp-1 one" })
	h.s.FrozenBlock("p1", "m2", func() string { return "" })
	h.s.SetAgent("p1", "orchestrator")
	h.s.SetAgent("p2", "orchestrator")
	h.s.SetAgent("ses_a", "explorer")
	h.s.BeginCall("pending", "p1", "explorer", "in flight", "")
}

func TestSnapshotRoundTrip(t *testing.T) {
	src := populated(t, Config{})
	data, err := src.s.Snapshot()
	require.NoError(t, err)
	assert.Regexp(t, `^\{"version":1,`, string(data))

	dst := newHarness(t, Config{})
	dst.n = 1000 // fresh call ids
	dst.task("old", "explorer", "replaced by Restore", "ses_old")
	require.NoError(t, dst.s.Restore(data))

	t.Run("same content and order", func(t *testing.T) {
		assert.Equal(t, src.s.List(""), dst.s.List(""))
		assert.Equal(t, src.s.ResumableSessions("p1"), dst.s.ResumableSessions("p1"))
		assert.Empty(t, dst.s.List("old"))
		again, err := dst.s.Snapshot()
		require.NoError(t, err)
		assert.Equal(t, string(data), string(again), "a restored store snapshots to the same bytes")
	})
	t.Run("pending calls are not restored", func(t *testing.T) {
		assert.Equal(t, 0, dst.s.Stats().PendingCalls)
	})
	t.Run("aliases resolve", func(t *testing.T) {
		act, id := dst.resolve("p1", "explorer", "exp-3")
		assert.Equal(t, TaskIDReplace, act)
		assert.Equal(t, "ses_c", id)
		act, id = dst.resolve("p2", "code reviewer", "code-reviewer-1")
		assert.Equal(t, TaskIDReplace, act)
		assert.Equal(t, "ses_r", id)
	})
	t.Run("counters continue", func(t *testing.T) {
		dst.task("p1", "explorer", "new", "ses_new")
		assert.Equal(t, "exp-4", dst.s.List("p1")[0].Alias)
	})
	t.Run("frozen blocks and agents", func(t *testing.T) {
		assert.Equal(t, "### Resumable Sessions\n- explorer: exp-1 one",
			dst.s.FrozenBlock("p1", "m1", func() string { return "recomputed" }))
		assert.Equal(t, "", dst.s.FrozenBlock("p1", "m2", func() string { return "recomputed" }))
		assert.Equal(t, "orchestrator", dst.s.Agent("p2"))
		assert.Equal(t, "explorer", dst.s.Agent("ses_a"))
	})
}

func TestRestoreKeepsRecencyOrder(t *testing.T) {
	src := newHarness(t, Config{})
	src.task("p1", "explorer", "one", "ses_a")
	src.task("p2", "explorer", "two", "ses_b")
	src.task("p3", "explorer", "three", "ses_c")
	src.resolve("p1", "explorer", "exp-1") // p1 active again: p2 is the oldest
	src.s.SetAgent("s1", "a")
	src.s.SetAgent("s2", "b")
	src.s.Agent("s1")
	data, err := src.s.Snapshot()
	require.NoError(t, err)

	dst := newHarness(t, Config{MaxParents: 3, MaxTrackedSessions: 2})
	require.NoError(t, dst.s.Restore(data))
	dst.n = 1000
	dst.task("p4", "explorer", "four", "ses_d") // evicts the least recently active
	dst.s.SetAgent("s3", "c")
	assert.Empty(t, dst.s.List("p2"))
	assert.Len(t, dst.s.List("p1"), 1)
	assert.Len(t, dst.s.List("p3"), 1)
	assert.Equal(t, "", dst.s.Agent("s2"))
	assert.Equal(t, "a", dst.s.Agent("s1"))

	// The logical clock continues: a use after Restore is the newest.
	dst.resolve("p3", "explorer", "exp-1")
	assert.Equal(t, "p3", dst.s.List("")[0].Parent)
}

func TestRestoreAppliesBounds(t *testing.T) {
	src := newHarness(t, Config{MaxSessionsPerAgent: 5, MaxParents: 10})
	for i := 1; i <= 5; i++ {
		src.task("p1", "explorer", "t"+strconv.Itoa(i), "ses_"+strconv.Itoa(i))
		src.task("p"+strconv.Itoa(i+1), "explorer", "x", "ses_x"+strconv.Itoa(i))
	}
	src.resolve("p1", "explorer", "exp-1")
	data, err := src.s.Snapshot()
	require.NoError(t, err)

	dst := newHarness(t, Config{MaxSessionsPerAgent: 2, MaxParents: 3})
	require.NoError(t, dst.s.Restore(data))
	assert.Equal(t, 3, dst.s.Stats().Parents)
	assert.Equal(t, []string{"exp-1=ses_1 t1", "exp-5=ses_5 t5"}, dst.aliases("p1"))
	dst.n = 1000
	dst.task("p1", "explorer", "new", "ses_new")
	assert.Equal(t, "exp-6", dst.s.List("p1")[0].Alias)
}

func TestRestoreErrors(t *testing.T) {
	entry := `{"agent":"explorer","alias":"exp-1","taskId":"ses_a","label":"l","lastUse":"2026-01-02T03:04:05Z","use":1}`
	tests := []struct {
		name string
		data string
		err  string
	}{
		{"empty", ``, "decoding session state"},
		{"not JSON", `{"version":1,`, "decoding session state"},
		{"not an object", `[1,2]`, "decoding session state"},
		{"no version", `{"parents":[]}`, "no format version"},
		{"version 0", `{"version":0}`, "unknown format version 0"},
		{"version 2", `{"version":2,"parents":[]}`, "unknown format version 2"},
		{"version a string", `{"version":"1"}`, "decoding session state"},
		{"trailing garbage", `{"version":1} x`, "decoding session state"},
		{"wrong type", `{"version":1,"parents":{}}`, "decoding session state"},
		{"parent twice", `{"version":1,"parents":[{"id":"p"},{"id":"p"}]}`, `parent "p" listed twice`},
		{"entry without alias", `{"version":1,"parents":[{"id":"p","entries":[{"agent":"explorer","taskId":"ses_a","use":1}]}]}`, "must not be empty"},
		{"alias twice", `{"version":1,"parents":[{"id":"p","entries":[` + entry + `,` + entry + `]}]}`, `alias "exp-1" listed twice`},
		{"member twice", `{"version":1,"parents":[],"parents":[]}`, `member "parents" listed twice`},
		{"frozen twice", `{"version":1,"parents":[{"id":"p","frozen":[{"messageId":"m"},{"messageId":"m"}]}]}`, "listed twice"},
		{"agent twice", `{"version":1,"sessionAgents":[{"session":"s","agent":"a"},{"session":"s","agent":"b"}]}`, "listed twice"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := populated(t, Config{})
			before, err := h.s.Snapshot()
			require.NoError(t, err)
			err = h.s.Restore([]byte(tt.data))
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.err)
			after, err := h.s.Snapshot()
			require.NoError(t, err)
			assert.Equal(t, string(before), string(after), "a failed Restore changes nothing")
			assert.Equal(t, 1, h.s.Stats().PendingCalls)
		})
	}
}

func TestRestoreCounterBehindAliases(t *testing.T) {
	s := newTestStore(Config{})
	require.NoError(t, s.Restore([]byte(`{"version":1,"parents":[{"id":"p","counters":{"exp":1},"entries":[
		{"agent":"explorer","alias":"exp-7","taskId":"ses_a","label":"l","lastUse":"2026-01-02T03:04:05Z","use":3}]}]}`)))
	s.BeginCall("c", "p", "explorer", "new", "")
	s.CompleteCall("c", out("ses_b"))
	assert.Equal(t, "exp-8", s.List("p")[0].Alias)
}

func TestRestoreMinimalDocument(t *testing.T) {
	s := newTestStore(Config{})
	require.NoError(t, s.Restore([]byte(`{"version":1}`)))
	assert.Equal(t, Stats{}, s.Stats())
}

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

// persistent reports whether the store is kept in the state file.
func (p *Persister) persistent() bool { return p.lock != nil }

// lastError is the error of the last write, nil once a write succeeds.
func (p *Persister) lastError() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.lastErr
}

func (p *Persister) writeCount() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.writes
}

// openTest opens a persister on dir/state.json with a long debounce, so
// only the test decides when writes happen, and closes it at the end.
func openTest(t *testing.T, path string, s *Store, debounce time.Duration) (*Persister, *logBuffer) {
	t.Helper()
	logs := &logBuffer{}
	if debounce == 0 {
		debounce = time.Hour
	}
	p, err := OpenPersister(t.Context(), path, s, logs.logger(), debounce)
	require.NoError(t, err)
	t.Cleanup(func() { p.Close() })
	return p, logs
}

// assertNoState checks that path holds no state: it is missing, or (as
// the lock holder creates it to lock it) empty.
func assertNoState(t *testing.T, path string, msgAndArgs ...any) {
	t.Helper()
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return
	}
	require.NoError(t, err, msgAndArgs...)
	assert.Empty(t, data, msgAndArgs...)
}

func TestPersisterMissingFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state", "hookwire.json")
	s := newTestStore(Config{})
	p, logs := openTest(t, path, s, 0)
	assert.True(t, p.persistent())
	assert.Equal(t, "persistent: "+path, p.Status())
	assert.Equal(t, Stats{}, s.Stats())
	assert.NotContains(t, logs.String(), `"level":"warn"`)
	require.NoError(t, p.Flush())
	assert.Equal(t, 0, p.writeCount(), "nothing changed: nothing written")
	assertNoState(t, path)
}

func TestPersisterEmptyFileIsEmptyState(t *testing.T) {
	path := filepath.Join(t.TempDir(), "hookwire.json")
	require.NoError(t, os.WriteFile(path, nil, 0o600))
	s := newTestStore(Config{})
	p, logs := openTest(t, path, s, 0)
	assert.True(t, p.persistent())
	assert.NotContains(t, logs.String(), `"level":"warn"`)
	matches, err := filepath.Glob(path + ".corrupt-*")
	require.NoError(t, err)
	assert.Empty(t, matches, "an empty file is not corrupt: the holder creates it")
}

func TestPersisterWritesAndReloads(t *testing.T) {
	path := filepath.Join(t.TempDir(), "hookwire.json")
	src := newHarness(t, Config{})
	p, _ := openTest(t, path, src.s, 0)
	populate(src)
	require.NoError(t, p.Flush())
	assert.Equal(t, 1, p.writeCount())

	info, err := os.Stat(path)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), info.Mode().Perm())

	require.NoError(t, p.Flush())
	assert.Equal(t, 1, p.writeCount(), "unchanged store: no second write")
	require.NoError(t, p.Close())

	dst := newTestStore(Config{})
	q, logs := openTest(t, path, dst, 0)
	assert.True(t, q.persistent())
	assert.Contains(t, logs.String(), "state loaded")
	assert.Equal(t, src.s.List(""), dst.List(""))
	assert.Equal(t, "explorer", dst.Agent("ses_a"))

	leftovers, err := filepath.Glob(filepath.Join(filepath.Dir(path), ".*tmp*"))
	require.NoError(t, err)
	assert.Empty(t, leftovers, "no temp files left behind")
}

func TestPersisterCorruptFile(t *testing.T) {
	tests := []struct {
		name    string
		content string
	}{
		{"not JSON", "{{{ garbage"},
		{"unknown version", `{"version":99,"parents":[]}`},
		{"no version", `{"parents":[]}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "hookwire.json")
			require.NoError(t, os.WriteFile(path, []byte(tt.content), 0o600))
			s := newTestStore(Config{})
			p, logs := openTest(t, path, s, 0)

			assert.True(t, p.persistent(), "a corrupt file is not a lock problem")
			assert.Equal(t, Stats{}, s.Stats())
			assert.Contains(t, logs.String(), `"level":"warn"`)
			assert.Contains(t, logs.String(), "moved aside")

			matches, err := filepath.Glob(path + ".corrupt-*")
			require.NoError(t, err)
			require.Len(t, matches, 1)
			assert.Regexp(t, regexp.MustCompile(`\.corrupt-\d{8}T\d{6}Z$`), matches[0])
			kept, err := os.ReadFile(matches[0])
			require.NoError(t, err)
			assert.Equal(t, tt.content, string(kept), "the bad file is kept for inspection")
			assertNoState(t, path)
		})
	}
}

func TestPersisterCorruptTwiceKeepsBoth(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "hookwire.json")
	for i := 0; i < 2; i++ {
		require.NoError(t, os.WriteFile(path, []byte("bad "+strconv.Itoa(i)), 0o600))
		p, _ := openTest(t, path, newTestStore(Config{}), 0)
		require.NoError(t, p.Close())
	}
	matches, err := filepath.Glob(path + ".corrupt-*")
	require.NoError(t, err)
	assert.Len(t, matches, 2)
}

func TestPersisterUnreadableFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "hookwire.json")
	require.NoError(t, os.Mkdir(path, 0o700)) // reading a directory fails
	s := newTestStore(Config{})
	p, logs := openTest(t, path, s, 0)
	assert.True(t, p.persistent())
	assert.Contains(t, logs.String(), "moved aside")
	s.SetAgent("s", "a")
	require.NoError(t, p.Flush(), "the path is free again")
}

func TestPersisterSecondOpenIsMemoryOnly(t *testing.T) {
	path := filepath.Join(t.TempDir(), "hookwire.json")
	first, _ := openTest(t, path, newTestStore(Config{}), 0)
	require.True(t, first.persistent())

	s := newTestStore(Config{})
	second, logs := openTest(t, path, s, 0)
	assert.False(t, second.persistent())
	assert.Contains(t, second.Status(), "memory-only")
	assert.Contains(t, second.Status(), "locked by another process")
	assert.Contains(t, logs.String(), `"level":"warn"`)

	s.SetAgent("s", "a")
	second.Notify()
	require.NoError(t, second.Flush())
	require.NoError(t, second.Close())
	assertNoState(t, path, "memory-only never writes the file")

	// Once the first lets go, the file can be taken.
	require.NoError(t, first.Close())
	third, _ := openTest(t, path, newTestStore(Config{}), 0)
	assert.True(t, third.persistent())
}

func TestPersisterFailedWriteKeepsOldFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "hookwire.json")
	h := newHarness(t, Config{})
	p, logs := openTest(t, path, h.s, 0)
	h.task("p1", "explorer", "one", "ses_a")
	require.NoError(t, p.Flush())
	old, err := os.ReadFile(path)
	require.NoError(t, err)

	// Fail midway: the temp file is complete but never replaces the file.
	p.beforeRename = func(string) error { return errors.New("disk on fire") }
	h.task("p1", "explorer", "two", "ses_b")
	err = p.Flush()
	require.Error(t, err)
	assert.Contains(t, err.Error(), "disk on fire")
	assert.Contains(t, p.Status(), "last write failed: disk on fire")
	assert.Contains(t, logs.String(), `"level":"warn"`)
	now, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, string(old), string(now))
	leftovers, _ := filepath.Glob(filepath.Join(filepath.Dir(path), ".*tmp*"))
	assert.Empty(t, leftovers)
	assert.Len(t, h.s.List("p1"), 2, "the store keeps serving from memory")

	// A later successful write clears the error.
	p.beforeRename = nil
	require.NoError(t, p.Flush())
	assert.NoError(t, p.lastError())
	assert.Equal(t, "persistent: "+path, p.Status())
	now, err = os.ReadFile(path)
	require.NoError(t, err)
	assert.NotEqual(t, string(old), string(now))
}

func TestPersisterReadOnlyDirectory(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root writes into read-only directories")
	}
	dir := filepath.Join(t.TempDir(), "ro")
	require.NoError(t, os.Mkdir(dir, 0o700))
	path := filepath.Join(dir, "hookwire.json")
	h := newHarness(t, Config{})
	p, _ := openTest(t, path, h.s, 0)
	h.task("p1", "explorer", "one", "ses_a")
	require.NoError(t, p.Flush())
	old, err := os.ReadFile(path)
	require.NoError(t, err)

	require.NoError(t, os.Chmod(dir, 0o500))
	t.Cleanup(func() { os.Chmod(dir, 0o700) })
	h.task("p1", "explorer", "two", "ses_b")
	require.Error(t, p.Flush())
	now, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, string(old), string(now))

	require.NoError(t, os.Chmod(dir, 0o700))
	require.NoError(t, p.Flush())
	assert.NoError(t, p.lastError())
}

// The debounce runs on synctest's fake clock: the verdict depends on the
// order of events, never on how fast the machine is.
func TestPersisterDebounceCoalesces(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const debounce = 200 * time.Millisecond
		path := filepath.Join(t.TempDir(), "hookwire.json")
		h := newHarness(t, Config{})
		p, _ := openTest(t, path, h.s, debounce)

		p.Notify() // nothing changed: nothing scheduled
		p.mu.Lock()
		assert.Nil(t, p.timer)
		p.mu.Unlock()

		// A burst spread over most of the delay: the first Notify starts
		// the timer, the others share it.
		for i := 0; i < 100; i++ {
			h.s.SetAgent("s"+strconv.Itoa(i), "a")
			p.Notify()
			time.Sleep(time.Millisecond)
		}
		synctest.Wait()
		assert.Equal(t, 0, p.writeCount(), "nothing written before the delay")

		time.Sleep(debounce - 100*time.Millisecond - time.Nanosecond)
		synctest.Wait()
		assert.Equal(t, 0, p.writeCount(), "nothing written a moment before the delay")

		time.Sleep(time.Nanosecond)
		synctest.Wait()
		assert.Equal(t, 1, p.writeCount(), "one write for the burst, at the delay")

		p.Notify() // nothing changed since the write
		time.Sleep(2 * debounce)
		synctest.Wait()
		assert.Equal(t, 1, p.writeCount(), "no write without a change")

		h.s.SetAgent("late", "b")
		p.Notify()
		time.Sleep(debounce)
		synctest.Wait()
		assert.Equal(t, 2, p.writeCount(), "a later change gets its own write")

		dst := newTestStore(Config{})
		require.NoError(t, p.Close())
		q, _ := openTest(t, path, dst, 0)
		require.True(t, q.persistent())
		assert.Equal(t, "a", dst.Agent("s99"))
		assert.Equal(t, "b", dst.Agent("late"))
	})
}

// A write that took long spaces the next one writeSpacing times as far,
// so a large state file is not rewritten back to back.
func TestPersisterSpacesCostlyWrites(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const debounce = 200 * time.Millisecond
		path := filepath.Join(t.TempDir(), "hookwire.json")
		h := newHarness(t, Config{})
		p, _ := openTest(t, path, h.s, debounce)
		p.mu.Lock()
		p.lastWrite = time.Second // as if the last write took a second
		p.mu.Unlock()

		h.s.SetAgent("s", "a")
		p.Notify()
		time.Sleep(writeSpacing*time.Second - time.Nanosecond)
		synctest.Wait()
		assert.Equal(t, 0, p.writeCount(), "not before writeSpacing times the last write")
		time.Sleep(time.Nanosecond)
		synctest.Wait()
		assert.Equal(t, 1, p.writeCount())
	})
}

func TestPersisterFlushCancelsScheduledWrite(t *testing.T) {
	path := filepath.Join(t.TempDir(), "hookwire.json")
	h := newHarness(t, Config{})
	p, _ := openTest(t, path, h.s, time.Hour)
	h.s.SetAgent("s", "a")
	p.Notify()
	require.NoError(t, p.Flush())
	p.mu.Lock()
	assert.Nil(t, p.timer)
	p.mu.Unlock()
	assert.Equal(t, 1, p.writeCount())
}

func TestPersisterCloseFlushes(t *testing.T) {
	path := filepath.Join(t.TempDir(), "hookwire.json")
	h := newHarness(t, Config{})
	p, _ := openTest(t, path, h.s, time.Hour)
	h.task("p1", "explorer", "one", "ses_a")
	p.Notify() // scheduled an hour from now
	require.NoError(t, p.Close())
	assert.Equal(t, 1, p.writeCount())
	assert.Equal(t, "closed: "+path, p.Status())

	require.NoError(t, p.Close(), "Close twice is fine")
	h.task("p1", "explorer", "two", "ses_b")
	p.Notify()
	require.NoError(t, p.Flush())
	assert.Equal(t, 1, p.writeCount(), "nothing written after Close")

	dst := newTestStore(Config{})
	q, _ := openTest(t, path, dst, 0)
	require.True(t, q.persistent(), "Close released the lock")
	assert.Equal(t, []string{"exp-1=ses_a one"}, (&harness{t: t, s: dst}).aliases("p1"))
}

func TestPersisterConcurrentNotify(t *testing.T) {
	path := filepath.Join(t.TempDir(), "hookwire.json")
	s := New(Config{})
	p, _ := openTest(t, path, s, time.Millisecond)
	var wg sync.WaitGroup
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for i := 0; i < 300; i++ {
				s.SetAgent("s"+strconv.Itoa(g*1000+i), "a")
				p.Notify()
				if i%50 == 0 {
					_ = p.Flush()
				}
			}
		}(g)
	}
	wg.Wait()
	require.NoError(t, p.Close())
	dst := newTestStore(Config{})
	q, _ := openTest(t, path, dst, 0)
	require.True(t, q.persistent())
	assert.Equal(t, 1200, dst.Stats().TrackedSessions)
}

func TestOpenPersisterBadArguments(t *testing.T) {
	_, err := OpenPersister(t.Context(), "", New(Config{}), zerolog.Nop(), 0)
	assert.Error(t, err)
	_, err = OpenPersister(t.Context(), filepath.Join(t.TempDir(), "x"), nil, zerolog.Nop(), 0)
	assert.Error(t, err)
}

// Deleting FILE.lock while a sidecar holds it used to let a second one in,
// and one writer lost the other's entries. The holder also locks FILE.
func TestLockSurvivesDeletedLockFile(t *testing.T) {
	if !lockStateFile {
		t.Skip("an open lock file cannot be deleted here")
	}
	for _, written := range []bool{false, true} {
		t.Run(fmt.Sprintf("state written %v", written), func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "hookwire.json")
			h := newHarness(t, Config{})
			first, _ := openTest(t, path, h.s, 0)
			require.True(t, first.persistent())
			if written {
				h.task("p1", "explorer", "one", "ses_a")
				require.NoError(t, first.Flush())
			}
			require.NoError(t, os.Remove(path+".lock"))

			s := newTestStore(Config{})
			second, _ := openTest(t, path, s, 0)
			assert.False(t, second.persistent(), "a second writer got in")
			assert.Contains(t, second.Status(), "locked by another process")

			// The first keeps writing, and what it writes stays locked.
			h.task("p1", "explorer", "two", "ses_b")
			require.NoError(t, first.Flush())
			third, _ := openTest(t, path, newTestStore(Config{}), 0)
			assert.False(t, third.persistent(), "the lock moved to the file the first renamed in")

			require.NoError(t, first.Close())
			dst := newTestStore(Config{})
			fourth, _ := openTest(t, path, dst, 0)
			require.True(t, fourth.persistent())
			want := []string{"ses_b"}
			if written {
				want = append(want, "ses_a")
			}
			var got []string
			for _, e := range dst.List("p1") {
				got = append(got, e.TaskID)
			}
			assert.Equal(t, want, got, "nothing the first wrote was lost")
		})
	}
}

// The holder writes its pid into FILE.lock, and a second process names it.
func TestLockFileNamesHolder(t *testing.T) {
	path := filepath.Join(t.TempDir(), "hookwire.json")
	openTest(t, path, newTestStore(Config{}), 0)
	data, err := os.ReadFile(path + ".lock")
	require.NoError(t, err)
	assert.Equal(t, strconv.Itoa(os.Getpid())+"\n", string(data))

	second, _ := openTest(t, path, newTestStore(Config{}), 0)
	assert.Contains(t, second.Status(), "(pid "+strconv.Itoa(os.Getpid())+")")

	_, err = acquireLock(path)
	var locked *LockedError
	require.ErrorAs(t, err, &locked)
	assert.Equal(t, os.Getpid(), locked.PID)
	assert.Equal(t, path+".lock", locked.Path)
}

// kill -9 during a write leaves a temp file; the next holder removes it,
// and only its own file's.
func TestTempFilesRemovedAtStart(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "hookwire.json")
	left := []string{".hookwire.json.tmp-123", ".hookwire.json.tmp-9"}
	others := []string{".other.json.tmp-1", "hookwire.json.tmp-1", ".hookwire.jsonx.tmp-1"}
	for _, name := range append(append([]string{}, left...), others...) {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte("{"), 0o600))
	}
	_, logs := openTest(t, path, newTestStore(Config{}), 0)
	for _, name := range left {
		assert.NoFileExists(t, filepath.Join(dir, name))
	}
	for _, name := range others {
		assert.FileExists(t, filepath.Join(dir, name))
	}
	assert.Contains(t, logs.String(), `"removed":2`)
}

// A load stopped by its context (SIGTERM in serve) leaves the file as it
// is, runs in memory and lets the lock go.
func TestOpenPersisterCancelledLoad(t *testing.T) {
	path := filepath.Join(t.TempDir(), "hookwire.json")
	data := manyAgentsState(1000)
	require.NoError(t, os.WriteFile(path, data, 0o600))
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	s := newTestStore(Config{})
	p, err := OpenPersister(ctx, path, s, zerolog.Nop(), time.Hour)
	require.NoError(t, err)
	assert.Contains(t, p.Status(), "memory-only: loading stopped")
	assert.Equal(t, Stats{}, s.Stats())
	kept, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, string(data), string(kept), "a valid file is never discarded")
	matches, _ := filepath.Glob(path + ".corrupt-*")
	assert.Empty(t, matches)

	dst := newTestStore(Config{})
	q, _ := openTest(t, path, dst, 0)
	require.True(t, q.persistent(), "the lock was let go")
	assert.Equal(t, MaxAgentsPerParent, dst.Stats().Entries)
}
