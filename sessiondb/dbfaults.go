package sessiondb

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"strconv"
	"time"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// The errors a database gives, as the store and status tell them: busy,
// damaged, corrupt, read-only; a damaged file moved aside.

// retryBusy runs open until it does not fail with SQLITE_BUSY or
// SQLITE_LOCKED, for up to the busy timeout. Some of what opening does
// is refused at once while another connection holds a lock, the busy
// timeout notwithstanding: PRAGMA journal_mode=WAL while another process
// opens or closes the database (the loser ran memory-only for its life),
// the schema read while another creates it.
func retryBusy(ctx context.Context, open func() error) error {
	deadline := time.Now().Add(busyTimeout)
	wait := time.Millisecond
	for {
		err := open()
		if err == nil || !isBusy(err) || time.Now().After(deadline) {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(wait + time.Duration(rand.Int64N(int64(wait)))):
		}
		wait = min(2*wait, 50*time.Millisecond)
	}
}

// isBusy reports SQLite's "another connection holds the lock".
func isBusy(err error) bool {
	var se *sqlite.Error
	if errors.As(err, &se) {
		switch se.Code() & 0xff {
		case sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED:
			return true
		}
	}
	return false
}

// damagedFormat is a hookwire database whose format number is one
// hookwire never writes: damaged, moved aside as a corrupt file is.
func damagedFormat(version int64) error {
	return fmt.Errorf("%w: its format number (PRAGMA user_version) is %d, which hookwire never writes", errCorrupt, version)
}

// newerWhileRunning is the error of a write refused because a newer
// hookwire migrated the database to format version after this process
// opened it.
func newerWhileRunning(version int64) error {
	return fmt.Errorf("the state database was migrated to format %d by a newer hookwire while this one runs (%w; this build writes %d): "+
		"nothing more is written to it, new aliases and figures are kept in this process's memory; restart OpenCode to use the newer hookwire", version, ErrNewerFormat, schemaVersion)
}

// classify gives SQLite's errors that matter here their meaning.
func classify(err error) error {
	var se *sqlite.Error
	if errors.As(err, &se) {
		switch se.Code() & 0xff {
		case sqlite3.SQLITE_NOTADB:
			return fmt.Errorf("%w: %v", errNotDatabase, err)
		case sqlite3.SQLITE_CORRUPT:
			return fmt.Errorf("%w: %v", errCorrupt, err)
		}
	}
	return err
}

// errCorrupt marks a database SQLite found damaged.
var errCorrupt = errors.New("database is corrupt")

// isBadFile reports an error that means the file is not usable state: it
// is moved aside.
func isBadFile(err error) bool {
	return errors.Is(err, errNotDatabase) || errors.Is(err, errCorrupt)
}

// isReadOnlyError reports SQLite's ways of saying it cannot write or
// cannot make the files it needs to (read-only file, directory or file
// system).
func isReadOnlyError(err error) bool {
	var se *sqlite.Error
	if errors.As(err, &se) {
		switch se.Code() & 0xff {
		case sqlite3.SQLITE_READONLY, sqlite3.SQLITE_CANTOPEN, sqlite3.SQLITE_PERM:
			return true
		}
	}
	return errors.Is(err, fs.ErrPermission) || isReadOnlyFS(err)
}

// corruptTimeFormat stamps a database moved aside: FILE.corrupt-<UTC>.
const corruptTimeFormat = "20060102T150405Z"

// moveAside renames path (and its companion files) to
// path.corrupt-<UTC time>, never over an earlier one.
func moveAside(path string) (string, error) {
	base := path + ".corrupt-" + time.Now().UTC().Format(corruptTimeFormat)
	name := base
	for i := 2; ; i++ {
		if _, err := os.Lstat(name); errors.Is(err, fs.ErrNotExist) {
			break
		}
		name = base + "-" + strconv.Itoa(i)
	}
	if err := os.Rename(path, name); err != nil {
		return "", err
	}
	for _, s := range companionSuffixes {
		if _, err := os.Lstat(path + s); err == nil {
			os.Rename(path+s, name+s)
		}
	}
	return name, nil
}
