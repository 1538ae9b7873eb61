//go:build unix

package sessiondb

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hookwire/hookwire/sessions"
)

// removeDB removes the database at path and its SQLite companions, as a
// user replacing it by hand would (the old -wal must not meet a new file).
func removeDB(t *testing.T, path string) {
	t.Helper()
	for _, name := range append([]string{path}, companionSuffixesOf(path)...) {
		if err := os.Remove(name); err != nil && !errors.Is(err, os.ErrNotExist) {
			require.NoError(t, err)
		}
	}
}

func companionSuffixesOf(path string) []string {
	var out []string
	for _, s := range companionSuffixes {
		out = append(out, path+s)
	}
	return out
}

// hasWarning reports whether d's State has a warning containing s.
func hasWarning(d *Database, s string) bool {
	for _, w := range d.State().Warnings {
		if strings.Contains(w, s) {
			return true
		}
	}
	return false
}

// Issue 39 items 1 and 2: the listing reader behind sessions.page and
// sessions.list opened whatever was at the path: a FIFO hung the request
// (and every request after it), a symlink's target was listed. Each page
// now answers at once from what the process holds, lastWriteError stays
// empty, and status names the planted file.
func TestListingNeverOpensPlantedFiles(t *testing.T) {
	for _, tt := range []struct {
		name  string
		plant func(t *testing.T, path string)
	}{
		{"a FIFO at the path", func(t *testing.T, path string) {
			require.NoError(t, mkfifo(path))
		}},
		{"a symlink to another database", func(t *testing.T, path string) {
			target := filepath.Join(filepath.Dir(path), "elsewhere.db")
			oh := newHarness(t, sessions.Config{})
			od, _ := openTestDB(t, target, oh.s)
			oh.task("ses_planted", "explorer", "PLANTED", "ses_planted_child")
			require.NoError(t, od.Close())
			require.NoError(t, os.Symlink(target, path))
		}},
		{"a dangling symlink", func(t *testing.T, path string) {
			require.NoError(t, os.Symlink(filepath.Join(filepath.Dir(path), "nowhere.db"), path))
		}},
		{"a FIFO as the -wal", func(t *testing.T, path string) {
			// The database itself put back as a regular file, its -wal a
			// FIFO: opening it would block reading the WAL.
			oh := newHarness(t, sessions.Config{})
			od, _ := openTestDB(t, path, oh.s)
			oh.task("ses_other", "explorer", "other", "ses_other_child")
			require.NoError(t, od.Close())
			os.Remove(path + "-wal")
			require.NoError(t, mkfifo(path+"-wal"))
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "state.db")
			h, d := dbHarness(t, path, sessions.Config{})
			h.task("ses_parent", "explorer", "mine", "ses_mine_child")
			// The listing connection is open on the real file first.
			page, err := h.s.Tasks().Page(t.Context(), "", "", 50)
			require.NoError(t, err)
			require.Len(t, page.Entries, 1)

			removeDB(t, path)
			tt.plant(t, path)

			ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
			defer cancel()
			done := make(chan sessions.EntryPage, 1)
			go func() {
				p, err := h.s.Tasks().Page(ctx, "", "", 50)
				assert.NoError(t, err)
				done <- p
			}()
			select {
			case page = <-done:
			case <-time.After(3 * time.Second):
				t.Fatal("sessions.page hung on what is at the state path")
			}
			var labels []string
			for _, e := range page.Entries {
				labels = append(labels, e.Label)
			}
			assert.Equal(t, []string{"mine"}, labels, "listed from what this process holds, never the planted file's rows")
			assert.Empty(t, d.State().LastWriteError, "a refused file is no write error")
			require.Eventually(t, func() bool { return hasWarning(d, "not opened: ") }, 5*time.Second, 20*time.Millisecond,
				"status names the planted file: %+v", d.State())

			// The observer's reader refuses it too.
			_, err = ReadPage(ctx, path, "", "", 50)
			var fe *FileError
			assert.ErrorAs(t, err, &fe)
		})
	}
}

// Issue 39 item 5: one failed reopen left a process memory-only for good.
// The database deleted and every reopen failing for a while: the process
// says why (the true reason), keeps its aliases, and once a reopen works
// it is persistent again with everything it holds in the file.
func TestFailedReopenIsRetried(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.db")
	h, d := dbHarness(t, path, sessions.Config{})
	for i := range 5 {
		h.task("ses_p"+strconv.Itoa(i), "explorer", "before", "ses_before_"+strconv.Itoa(i))
	}
	failing := make(chan struct{})
	reopenDB = func(ctx context.Context, path string, mode openMode) (*dbConn, string, error) {
		select {
		case <-failing:
			return openDB(ctx, path, mode)
		default:
			return nil, "", errors.New("injected: cannot open")
		}
	}
	t.Cleanup(func() { reopenDB = openDB })
	removeDB(t, path)
	require.Eventually(t, func() bool { return d.State().Mode == sessions.StateMemoryOnly }, 10*time.Second, 20*time.Millisecond)
	reason := d.State().Reason
	assert.Contains(t, reason, "injected: cannot open")
	assert.Contains(t, reason, "tries again")
	assert.NotContains(t, reason, "reopened", "the reason says what is true: it is not reopened")
	// Served from memory meanwhile.
	h.task("ses_during", "explorer", "during", "ses_during_child")

	close(failing)
	require.Eventually(t, func() bool { return d.State().Mode == sessions.StatePersistent }, 10*time.Second, 20*time.Millisecond,
		"%+v", d.State())
	assert.True(t, hasWarning(d, "can be used again"))
	h.task("ses_after", "explorer", "after", "ses_after_child")
	require.Empty(t, d.State().LastWriteError)
	require.NoError(t, d.Close())

	ids := taskIDsIn(t, path)
	for i := range 5 {
		assert.True(t, ids["ses_before_"+strconv.Itoa(i)], "alias %d made before", i)
	}
	assert.True(t, ids["ses_during_child"], "the alias made while memory-only reaches the file")
	assert.True(t, ids["ses_after_child"])
}

// Issue 39 item 5, as found: the database replaced under a running
// process by a file that is not a database. The process moves it aside
// (as a sidecar opening it would), makes a new database and writes there
// everything it holds; another process's new database made meanwhile is
// joined the same way.
func TestGarbageAtPathMovedAsideByTheRunningSidecar(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "state.db")
	h, d := dbHarness(t, path, sessions.Config{})
	for i := range 5 {
		h.task("ses_p"+strconv.Itoa(i), "explorer", "before", "ses_before_"+strconv.Itoa(i))
	}
	garbage := filepath.Join(dir, "garbage")
	require.NoError(t, os.WriteFile(garbage, []byte(strings.Repeat("this is not a database\n", 400)), 0o600))
	removeDB(t, path)
	require.NoError(t, os.Rename(garbage, path))

	require.Eventually(t, func() bool {
		h.s.Tracked().SetAgent(context.Background(), "ses_poke", "explorer")
		return hasWarning(d, "was not a database") && d.State().Mode == sessions.StatePersistent
	}, 10*time.Second, 20*time.Millisecond, "%+v", d.State())
	h.task("ses_after", "explorer", "after", "ses_after_child")
	require.Empty(t, d.State().LastWriteError)
	require.NoError(t, d.Close())

	aside, err := filepath.Glob(path + ".corrupt-*")
	require.NoError(t, err)
	require.Len(t, aside, 1, "the garbage is kept aside, not deleted")
	b, err := os.ReadFile(aside[0])
	require.NoError(t, err)
	assert.True(t, strings.HasPrefix(string(b), "this is not a database"))

	ids := taskIDsIn(t, path)
	for i := range 5 {
		assert.True(t, ids["ses_before_"+strconv.Itoa(i)], "alias %d made before", i)
	}
	assert.True(t, ids["ses_after_child"])
}

// The listing connection follows the file at the path: replaced by
// another database (by rename, as SQLite requires), the next page is read
// from the new file, not the deleted one it had open (a slip no test
// caught: sessions.list and observe went on listing the deleted file).
func TestListerFollowsAReplacedFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "state.db")
	oh := newHarness(t, sessions.Config{})
	od, _ := openTestDB(t, path, oh.s)
	oh.task("ses_p", "explorer", "old file", "ses_old")
	require.NoError(t, od.Close())

	var l lister
	defer l.close()
	labels := func() []string {
		page, err := l.page(t.Context(), path, "", "", 50)
		require.NoError(t, err)
		var out []string
		for _, e := range page.Entries {
			out = append(out, e.Label)
		}
		return out
	}
	assert.Equal(t, []string{"old file"}, labels())

	other := filepath.Join(dir, "other.db")
	nh := newHarness(t, sessions.Config{})
	nd, _ := openTestDB(t, other, nh.s)
	nh.task("ses_q", "explorer", "new file", "ses_new")
	require.NoError(t, nd.Close())
	removeDB(t, path)
	require.NoError(t, os.Rename(other, path))
	assert.Equal(t, []string{"new file"}, labels())
}

// An entry whose write failed is shown by its task id until written; when
// the database is replaced and the process writes what it holds into the
// new one, the entry is written there and shown by its alias again (the
// new persistence must know it is provisional, or it stays so for good).
func TestProvisionalEntryWrittenByReattach(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.db")
	h, d := dbHarness(t, path, sessions.Config{})
	execOn(t, path, "CREATE TRIGGER fail_writes BEFORE INSERT ON entries BEGIN SELECT RAISE(ABORT, 'disk full (test)'); END")
	h.task("ses_p", "explorer", "while failing", "ses_child")
	name, _ := h.s.Tasks().ResumeName("ses_p", "ses_child")
	require.Equal(t, "ses_child", name, "not written: shown by its task id")

	removeDB(t, path) // the trigger goes with it
	require.Eventually(t, func() bool { return hasWarning(d, "deleted under this process") }, 10*time.Second, 20*time.Millisecond)
	require.Empty(t, d.State().LastWriteError)
	name, _ = h.s.Tasks().ResumeName("ses_p", "ses_child")
	assert.Equal(t, "exp-1", name, "written into the new database: shown by its alias")
	assert.True(t, taskIDsIn(t, path)["ses_child"])
}
