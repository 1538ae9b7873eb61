//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package sessiondb

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The writers' queue across processes (dbqueue.go). Two writerLocks on one
// path stand for two processes: flock locks belong to an open file, and
// each turn opens its own, so they exclude each other within a process
// as across processes.

func TestWriterLockTurns(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.db")
	a, b := newWriterLock(path), newWriterLock(path)
	require.NotNil(t, a)
	require.NotNil(t, b)
	fi, err := os.Lstat(path + queueSuffix)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), fi.Mode().Perm(), "the lock file is the owner's only")

	steps := []struct {
		name   string
		do     func() (turn, bool)
		wantOK bool
	}{
		{"a takes the free queue", func() (turn, bool) { return a.lock(t.Context(), time.Second) }, true},
		{"b waits, and goes on without it when its wait ends", func() (turn, bool) { return b.lock(t.Context(), 20*time.Millisecond) }, false},
		{"b goes on without it at once when its context ends", func() (turn, bool) {
			ctx, cancel := context.WithCancel(t.Context())
			cancel()
			return b.lock(ctx, time.Minute)
		}, false},
	}
	var held turn
	for _, s := range steps {
		got, ok := s.do()
		assert.Equal(t, s.wantOK, ok, s.name)
		if ok {
			held = got
		}
	}
	// b's given-up requests get the lock once a lets go and give it back
	// at once: b's next request has it.
	done := make(chan bool, 1)
	go func() {
		bt, ok := b.lock(t.Context(), time.Minute)
		bt.release()
		done <- ok
	}()
	held.release()
	assert.True(t, <-done, "b's turn comes when a releases")
	again, ok := a.lock(t.Context(), time.Minute)
	assert.True(t, ok, "nothing is left holding the queue")
	again.release()
	turn{}.release() // a turn never had is a no-op
}

// The queue serves its writers in turn: while one holds it, the others
// wait in the kernel, and each gets it once, one at a time.
func TestWriterLockOneAtATime(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.db")
	const writers = 6
	var inside, most, served int
	var mu = make(chan struct{}, 1)
	mu <- struct{}{}
	done := make(chan struct{})
	for range writers {
		q := newWriterLock(path)
		go func() {
			defer func() { done <- struct{}{} }()
			for range 20 {
				tr, ok := q.lock(t.Context(), time.Minute)
				if !assert.True(t, ok) {
					return
				}
				<-mu
				inside++
				most = max(most, inside)
				mu <- struct{}{}
				time.Sleep(100 * time.Microsecond)
				<-mu
				inside--
				served++
				mu <- struct{}{}
				tr.release()
			}
		}()
	}
	for range writers {
		<-done
	}
	assert.Equal(t, 1, most, "never two writers in their turn at once")
	assert.Equal(t, writers*20, served)
}

// TestWriterLockChild is not a test: run by TestWriterLockHolderKilled,
// it takes the queue of HOOKWIRE_QUEUE_CHILD, says so and waits to be
// killed.
func TestWriterLockChild(t *testing.T) {
	path := os.Getenv("HOOKWIRE_QUEUE_CHILD")
	if path == "" {
		t.Skip("run as a child process only")
	}
	q := newWriterLock(path)
	if _, ok := q.lock(context.Background(), time.Minute); !ok {
		os.Stdout.WriteString("NOLOCK\n")
		return
	}
	os.Stdout.WriteString("LOCKED\n")
	time.Sleep(time.Minute)
}

// A process killed (kill -9) in its turn wedges nobody: the kernel drops
// its lock, and the next writer has the queue.
func TestWriterLockHolderKilled(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.db")
	cmd := exec.Command(os.Args[0], "-test.run=^TestWriterLockChild$", "-test.count=1")
	cmd.Env = append(os.Environ(), "HOOKWIRE_QUEUE_CHILD="+path)
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	buf := make([]byte, 64)
	n, _ := out.Read(buf)
	require.True(t, strings.HasPrefix(string(buf[:n]), "LOCKED"), "child: %q", buf[:n])

	q := newWriterLock(path)
	_, ok := q.lock(t.Context(), 20*time.Millisecond)
	assert.False(t, ok, "the child holds the queue")
	require.NoError(t, cmd.Process.Kill())
	cmd.Wait()
	tr, ok := q.lock(t.Context(), time.Minute)
	assert.True(t, ok, "the killed holder's lock is gone")
	tr.release()
}

// Where the lock file cannot be made or opened there is no queue: the
// writers wait in SQLite's busy handler alone, and the database works.
func TestWriterLockUnavailable(t *testing.T) {
	tests := []struct {
		name  string
		setup func(t *testing.T, path string)
	}{
		{"a directory at the lock file's name", func(t *testing.T, path string) {
			require.NoError(t, os.Mkdir(path+queueSuffix, 0o700))
		}},
		{"a symbolic link at the lock file's name", func(t *testing.T, path string) {
			require.NoError(t, os.Symlink(filepath.Join(filepath.Dir(path), "elsewhere"), path+queueSuffix))
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "state.db")
			tt.setup(t, path)
			assert.Nil(t, newWriterLock(path))
			var fe *FileError
			assert.ErrorAs(t, CheckStatePath(path), &fe, "the state path is refused as for SQLite's own files")
			_, err := os.Lstat(filepath.Join(filepath.Dir(path), "elsewhere"))
			assert.True(t, os.IsNotExist(err), "nothing was made through the link")
		})
	}
	t.Run("a read-only directory", func(t *testing.T) {
		if os.Geteuid() == 0 {
			t.Skip("root writes anywhere")
		}
		dir := t.TempDir()
		require.NoError(t, os.Chmod(dir, 0o500))
		t.Cleanup(func() { os.Chmod(dir, 0o700) })
		assert.Nil(t, newWriterLock(filepath.Join(dir, "state.db")))
	})
}
