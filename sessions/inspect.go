package sessions

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
)

// Read-only views of a state file for the CLI (`hookwire sessions`,
// `hookwire doctor`): they never take the file's lock and never write, so
// they work while a sidecar serves the file.

// StateContents is what a state file holds.
type StateContents struct {
	// Sessions are the remembered task sessions: the most recently active
	// parent's first, and within a parent the most recently used first.
	Sessions        []Entry
	Parents         int // parent sessions, with or without entries
	FrozenBlocks    int // frozen cache-stable blocks (PROTOCOL.md 4.4)
	TrackedSessions int // sessions whose agent is remembered
}

// ReadStateFile reads the state file at path without taking its lock. A
// holder replaces the file by renaming a complete one over it, so the read
// sees one whole version. It judges the file as a loading sidecar would: an
// error for a document the sidecar would move aside (syntax, an unknown
// format version, duplicates), except that no bound drops anything, so
// what is listed is what the file holds. An empty file is an empty state;
// a missing one is an error matching fs.ErrNotExist.
func ReadStateFile(path string) (StateContents, error) {
	f, err := os.Open(path)
	if err != nil {
		return StateContents{}, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return StateContents{}, err
	}
	if fi.IsDir() {
		return StateContents{}, fmt.Errorf("%s is a directory", path)
	}
	if fi.Size() == 0 {
		return StateContents{}, nil
	}
	s := New(Config{
		MaxSessionsPerAgent: math.MaxInt,
		MaxParents:          math.MaxInt,
		MaxTrackedSessions:  math.MaxInt,
		MaxStateBytes:       math.MaxInt,
	})
	if err := s.restore(context.Background(), bufio.NewReaderSize(f, 256<<10)); err != nil {
		return StateContents{}, err
	}

	s.mu.Lock()
	out := StateContents{Parents: s.parents.Len(), FrozenBlocks: s.frozenCount, TrackedSessions: s.agents.Len()}
	ids := make([]string, 0, s.parents.Len())
	for id := range s.parents.All() {
		ids = append(ids, id)
	}
	s.mu.Unlock()
	for _, id := range ids {
		out.Sessions = append(out.Sessions, s.List(id)...) // entries as sessions.list reports them
	}
	return out, nil
}

// LockHolder says whether a process holds the lock of the state file at
// path, and the pid it wrote into FILE.lock (0 when unknown). It tries the
// lock without waiting and lets go at once, taking it for an instant only
// when nobody holds it; a sidecar that starts on the file in that instant
// runs in memory only, as with any second process. Missing lock files mean
// nobody holds it.
func LockHolder(path string) (held bool, pid int, err error) {
	names := []string{path + ".lock"}
	if lockStateFile {
		names = append(names, path) // the holder also locks FILE itself
	}
	for _, name := range names {
		f, err := lockPath(name, false)
		switch {
		case errors.Is(err, errLocked):
			return true, readHolder(path + ".lock"), nil
		case errors.Is(err, fs.ErrNotExist):
			continue
		case err != nil:
			return false, 0, fmt.Errorf("probing the lock: %w", err)
		}
		unlockFile(f)
		f.Close()
	}
	return false, 0, nil
}

// ProjectRoot is the directory that keys ProjectStatePath's file for dir:
// the top level of the git worktree containing dir, else dir, as an
// absolute path.
func ProjectRoot(dir string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	return projectDir(abs), nil
}
