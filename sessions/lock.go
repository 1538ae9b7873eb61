package sessions

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

var errLocked = errors.New("locked by another process")

// LockedError says another process holds a state file's lock.
type LockedError struct {
	Path string // the lock file
	PID  int    // the holder's pid as it wrote it into the lock file; 0 unknown
}

func (e *LockedError) Error() string {
	if e.PID > 0 {
		return fmt.Sprintf("%s is locked by another process (pid %d)", e.Path, e.PID)
	}
	return fmt.Sprintf("%s is locked by another process", e.Path)
}

func (e *LockedError) Unwrap() error { return errLocked }

// stateLock is the exclusive hold on a state file FILE: a lock on
// FILE.lock, which also holds the holder's pid, and (where lockStateFile)
// a lock on FILE itself, moved to each new FILE the holder renames into
// place. Deleting FILE.lock while a holder runs then does not let a second
// writer in: it finds FILE locked. So that FILE can always be locked, the
// holder creates it empty when it is missing (an empty FILE is an empty
// state).
type stateLock struct {
	path  string
	lock  *os.File // FILE.lock
	state *os.File // FILE; nil where !lockStateFile
}

// lockAttempts bounds the retries when a lock path is replaced between
// opening and locking it.
const lockAttempts = 8

// acquireLock takes path's lock without waiting. A held lock is a
// *LockedError.
func acquireLock(path string) (*stateLock, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("creating state directory: %w", err)
	}
	name := path + ".lock"
	lf, err := lockPath(name, true)
	if errors.Is(err, errLocked) {
		return nil, &LockedError{Path: name, PID: readHolder(name)}
	}
	if err != nil {
		return nil, fmt.Errorf("locking %s: %w", name, err)
	}
	l := &stateLock{path: path, lock: lf}
	// A FILE that cannot be opened (unreadable) is not held, but the load
	// moves it aside and locks the new one.
	if err := l.lockState(); errors.Is(err, errLocked) {
		l.release()
		return nil, err
	}
	// The pid tells `hookwire forget` (and a person) who holds the lock.
	if err := lf.Truncate(0); err == nil {
		_, _ = lf.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	}
	return l, nil
}

// lockState locks FILE (where lockStateFile), creating it empty if it is
// missing, and releases the FILE it locked before, if any.
func (l *stateLock) lockState() error {
	if !lockStateFile {
		return nil
	}
	sf, err := lockPath(l.path, true)
	if errors.Is(err, errLocked) {
		return &LockedError{Path: l.path}
	}
	if err != nil {
		return fmt.Errorf("locking %s: %w", l.path, err)
	}
	l.replaceState(sf)
	return nil
}

// lockPath opens name (creating it if create, with mode 0600) and locks it, then checks
// that name still names the file it locked: a file deleted or replaced
// between the open and the lock would be a lock nobody else sees.
func lockPath(name string, create bool) (*os.File, error) {
	flag := os.O_RDONLY
	if create {
		flag = os.O_RDWR | os.O_CREATE
	}
	for range lockAttempts {
		f, err := os.OpenFile(name, flag, 0o600)
		if err != nil {
			return nil, err
		}
		if err := lockFile(f); err != nil {
			f.Close()
			return nil, err
		}
		held, herr := f.Stat()
		now, nerr := os.Stat(name)
		if herr == nil && nerr == nil && os.SameFile(held, now) {
			return f, nil
		}
		unlockFile(f)
		f.Close()
	}
	return nil, fmt.Errorf("%s keeps being replaced", name)
}

// readHolder reads the pid a holder wrote into the lock file; 0 unknown.
func readHolder(name string) int {
	f, err := os.Open(name)
	if err != nil {
		return 0
	}
	defer f.Close()
	b, _ := io.ReadAll(io.LimitReader(f, 32))
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || pid <= 0 {
		return 0
	}
	return pid
}

// replaceState makes f, the new FILE just renamed into place, the locked
// state file (where lockStateFile), releasing the old one. f was locked
// before the rename.
func (l *stateLock) replaceState(f *os.File) {
	if l.state != nil {
		unlockFile(l.state)
		l.state.Close()
	}
	l.state = f
}

// release unlocks and closes everything; the first error is returned.
func (l *stateLock) release() error {
	var err error
	for _, f := range []*os.File{l.state, l.lock} {
		if f == nil {
			continue
		}
		if uerr := unlockFile(f); uerr != nil && err == nil {
			err = fmt.Errorf("unlocking %s: %w", f.Name(), uerr)
		}
		if cerr := f.Close(); cerr != nil && err == nil {
			err = fmt.Errorf("closing %s: %w", f.Name(), cerr)
		}
	}
	l.state, l.lock = nil, nil
	return err
}

// removeTemps removes the temp files a write killed before its rename left
// next to path (.FILE.tmp-*). Only the lock holder calls it, so no write
// is in progress.
func removeTemps(path string) (removed int) {
	matches, _ := filepath.Glob(filepath.Join(filepath.Dir(path), "."+globEscape(filepath.Base(path))+".tmp-*"))
	for _, m := range matches {
		if os.Remove(m) == nil {
			removed++
		}
	}
	return removed
}

// globEscape escapes filepath.Match's special characters in a file name.
func globEscape(name string) string {
	var b strings.Builder
	for _, r := range name {
		switch r {
		case '*', '?', '[', '\\':
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// writeState replaces the state file atomically with what doc encodes: a
// temp file in the same directory is written, synced, made 0600, locked
// (where lockStateFile) and renamed over it, then the directory is synced
// so the rename survives a crash. It returns the bytes written.
// beforeRename, when set (tests), runs just before the rename; an error
// fails the write there.
func (l *stateLock) writeState(doc *snapshotDoc, beforeRename func(tmp string) error) (n int64, err error) {
	dir := filepath.Dir(l.path)
	f, err := os.CreateTemp(dir, "."+filepath.Base(l.path)+".tmp-*")
	if err != nil {
		return 0, fmt.Errorf("creating temp state file: %w", err)
	}
	tmp := f.Name()
	keep := false
	defer func() {
		if err != nil {
			os.Remove(tmp)
		}
		if !keep {
			f.Close()
		}
	}()
	cw := &countingWriter{w: f}
	bw := bufio.NewWriterSize(cw, 64<<10)
	if err := doc.encode(bw); err != nil {
		return 0, fmt.Errorf("writing temp state file: %w", err)
	}
	if err := bw.Flush(); err != nil {
		return 0, fmt.Errorf("writing temp state file: %w", err)
	}
	if err := f.Sync(); err != nil {
		return 0, fmt.Errorf("syncing temp state file: %w", err)
	}
	if err := f.Chmod(0o600); err != nil {
		return 0, fmt.Errorf("setting mode of temp state file: %w", err)
	}
	if lockStateFile {
		if err := lockFile(f); err != nil {
			return 0, fmt.Errorf("locking temp state file: %w", err)
		}
	} else if err := f.Close(); err != nil {
		return 0, fmt.Errorf("closing temp state file: %w", err)
	}
	if beforeRename != nil {
		if err := beforeRename(tmp); err != nil {
			return 0, err
		}
	}
	if err := os.Rename(tmp, l.path); err != nil {
		return 0, fmt.Errorf("replacing state file: %w", err)
	}
	if lockStateFile {
		keep = true
		l.replaceState(f)
	}
	if err := syncDir(dir); err != nil {
		return 0, fmt.Errorf("syncing state directory: %w", err)
	}
	return cw.n, nil
}

type countingWriter struct {
	w io.Writer
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}
