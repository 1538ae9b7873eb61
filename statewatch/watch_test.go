package statewatch

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hookwire/hookwire/core"
	"github.com/hookwire/hookwire/sessions"
)

// stateWith returns a state file's bytes holding n explorer entries.
func stateWith(t *testing.T, n int) []byte {
	t.Helper()
	s := sessions.New(sessions.Config{MaxSessionsPerAgent: 100})
	for i := 1; i <= n; i++ {
		id := "call_" + strconv.Itoa(i)
		s.Tasks().BeginCall(context.Background(), id, "ses_parent", "explorer", "task "+strconv.Itoa(i), "")
		s.Tasks().CompleteCall(context.Background(), id, core.TaskOutcome{TaskID: "ses_child_" + strconv.Itoa(i)})
	}
	data, err := s.Snapshot()
	require.NoError(t, err)
	return data
}

// replace writes data the way the serving sidecar does: a temp file in
// the same directory renamed over path.
func replace(t *testing.T, path string, data []byte) {
	t.Helper()
	tmp := filepath.Join(filepath.Dir(path), "."+filepath.Base(path)+".tmp-1")
	require.NoError(t, os.WriteFile(tmp, data, 0o600))
	require.NoError(t, os.Rename(tmp, path))
}

// changes records OnChange calls.
type changes struct {
	mu     sync.Mutex
	counts []int
}

func (c *changes) add(n int) { c.mu.Lock(); c.counts = append(c.counts, n); c.mu.Unlock() }
func (c *changes) get() []int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]int(nil), c.counts...)
}

const wait = 5 * time.Second // generous: only a broken watcher takes this long

func TestWatcherFileEvents(t *testing.T) {
	for _, poll := range []bool{false, true} {
		name := map[bool]string{false: WatchFsnotify, true: WatchPoll}[poll]
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "state.json")
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			var got changes
			w, err := Start(ctx, path, Options{Log: zerolog.New(zerolog.NewTestWriter(t)), Poll: poll, PollInterval: 20 * time.Millisecond, OnChange: got.add})
			require.NoError(t, err)
			assert.Equal(t, name, w.Status().Watch)

			// Missing: no entries, and it says so.
			assert.Empty(t, w.Entries())
			assert.Equal(t, "missing", w.Status().LastLoad)

			// It appears (renamed into place).
			replace(t, path, stateWith(t, 1))
			require.Eventually(t, func() bool { return len(w.Entries()) == 1 }, wait, 5*time.Millisecond)
			assert.Equal(t, "ok", w.Status().LastLoad)
			assert.Equal(t, "exp-1", w.Entries()[0].Alias)
			assert.Equal(t, sessions.Run{State: sessions.RunCompleted}, w.Entries()[0].Run)
			require.Eventually(t, func() bool { return len(got.get()) == 1 }, wait, 5*time.Millisecond)

			// Replaced by rename: read again, newest first.
			three := stateWith(t, 3)
			replace(t, path, three)
			require.Eventually(t, func() bool { return len(w.Entries()) == 3 }, wait, 5*time.Millisecond)
			assert.Equal(t, []string{"exp-3", "exp-2", "exp-1"}, aliases(w.Entries()))
			require.Eventually(t, func() bool { return len(got.get()) == 2 }, wait, 5*time.Millisecond)

			// Corrupt: the last good entries stay, status says why.
			replace(t, path, []byte(`{"version":1,"parents":[`))
			require.Eventually(t, func() bool { return strings.HasPrefix(w.Status().LastLoad, "corrupt: ") }, wait, 5*time.Millisecond)
			assert.Len(t, w.Entries(), 3)

			// Good again with the same entries: no change to announce.
			replace(t, path, three)
			require.Eventually(t, func() bool { return w.Status().LastLoad == "ok" }, wait, 5*time.Millisecond)

			// Deleted: missing, no entries, announced.
			require.NoError(t, os.Remove(path))
			require.Eventually(t, func() bool { return w.Status().LastLoad == "missing" }, wait, 5*time.Millisecond)
			assert.Empty(t, w.Entries())
			require.Eventually(t, func() bool { return len(got.get()) == 3 }, wait, 5*time.Millisecond)
			assert.Equal(t, []int{1, 3, 0}, got.get(), "one call per change of the entries, none for the corrupt file or the same entries")
		})
	}
}

func aliases(es []sessions.Entry) []string {
	var out []string
	for _, e := range es {
		out = append(out, e.Alias)
	}
	return out
}

func TestWatcherIgnoresOtherFiles(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "state.json")
	replace(t, path, stateWith(t, 1))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	w, err := Start(ctx, path, Options{Log: zerolog.Nop()})
	require.NoError(t, err)
	loads := w.Status().Loads
	require.NoError(t, os.WriteFile(filepath.Join(dir, "other.json"), []byte("x"), 0o600))
	// Then a change of the file itself, to know the events were handled.
	replace(t, path, stateWith(t, 2))
	require.Eventually(t, func() bool { return len(w.Entries()) == 2 }, wait, 5*time.Millisecond)
	assert.Equal(t, loads+1, w.Status().Loads, "the other file caused no read")
}

func TestSameVersion(t *testing.T) {
	dir := t.TempDir()
	a := filepath.Join(dir, "a")
	require.NoError(t, os.WriteFile(a, []byte("one"), 0o600))
	fa, err := os.Stat(a)
	require.NoError(t, err)
	fa2, _ := os.Stat(a)
	b := filepath.Join(dir, "b")
	require.NoError(t, os.WriteFile(b, []byte("one"), 0o600))
	require.NoError(t, os.Chtimes(b, fa.ModTime(), fa.ModTime()))
	fb, _ := os.Stat(b)
	require.NoError(t, os.WriteFile(a, []byte("four"), 0o600))
	fa3, _ := os.Stat(a)

	assert.True(t, sameVersion(nil, nil), "still missing")
	assert.True(t, sameVersion(fa, fa2))
	assert.False(t, sameVersion(fa, nil), "gone")
	assert.False(t, sameVersion(nil, fa), "appeared")
	assert.False(t, sameVersion(fa, fb), "another file (renamed over it), same size and time")
	assert.False(t, sameVersion(fa, fa3), "written in place")
}

// TestWatcherDirectoryAppears: a project whose state directory no sidecar
// created yet is polled until the directory exists, then watched.
func TestWatcherDirectoryAppears(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "hookwire")
	path := filepath.Join(dir, "state.json")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var got changes
	w, err := Start(ctx, path, Options{Log: zerolog.Nop(), PollInterval: 20 * time.Millisecond, OnChange: got.add})
	require.NoError(t, err)
	assert.Equal(t, WatchPoll, w.Status().Watch, "nothing to watch yet")
	require.NoError(t, os.Mkdir(dir, 0o700))
	require.Eventually(t, func() bool { return w.Status().Watch == WatchFsnotify }, wait, 5*time.Millisecond)
	replace(t, path, stateWith(t, 2))
	require.Eventually(t, func() bool { return len(w.Entries()) == 2 }, wait, 5*time.Millisecond)
	require.Eventually(t, func() bool { return len(got.get()) == 1 }, wait, 5*time.Millisecond)
	assert.Equal(t, []int{2}, got.get())
}
