package sessiondb

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/hookwire/hookwire/sessions"
)

// The database file under a serving process: the watcher that notices it
// replaced, deleted or corrupt and reopens it, and what it refuses to open.

// watchInterval is how often a process checks that its state path still
// names the database it has open.
const watchInterval = time.Second

// watchFile notices the database replaced or deleted under this process
// (it went on writing to the unlinked file and reported persistent: 4,276
// acknowledged aliases gone) and a corrupt one met while serving; it then
// moves a corrupt file aside (only while it is still the one at path) and
// opens the database at path anew, writing what the cache holds there
// (Store.reattach). A reopen that fails is tried again every tick until
// one succeeds (issue 39 item 5: one failed reopen left a process memory
// only for good, its aliases never reaching the database another process
// made there); a file that is not a database is moved aside as a corrupt
// one is. A link or FIFO planted at path is never opened: it is shown in
// State until it is gone.
func (d *Database) watchFile(ctx context.Context, stop <-chan struct{}) {
	defer d.watching.Done()
	t := time.NewTicker(watchInterval)
	defer t.Stop()
	for {
		corrupt := false
		select {
		case <-stop:
			return
		case <-ctx.Done():
			return
		case <-t.C:
		case <-d.wake:
			corrupt = true
		}
		d.mu.Lock()
		lastErr, lost := d.lastErr, d.b == nil
		d.mu.Unlock()
		corrupt = corrupt || errors.Is(lastErr, errCorrupt)
		fi, err := os.Stat(d.path)
		same := !lost && err == nil && os.SameFile(fi, d.file)
		var why string
		switch {
		case same && corrupt:
			if d.refuse() {
				continue
			}
			aside, merr := moveAside(d.path)
			if merr != nil {
				continue
			}
			why = fmt.Sprintf("the state database was found corrupt while serving (%v): moved to %s, starting a new one with what this process holds", lastErr, aside)
		case same:
			d.refuse() // a companion file planted beside it is shown
			continue
		case lost:
			if !d.retryDue(fi, err) {
				continue
			}
			why = "the state database can be used again: reopened, and what this process holds that it lacks written there"
		case err != nil:
			why = "the state database was deleted under this process: made again with what this process holds"
		default:
			why = "the state database was replaced under this process: reopened, and what this process holds that it lacks written there"
		}
		if d.refuse() {
			continue // a link or FIFO planted there: keep the open file, or none
		}
		d.reopen(ctx, why)
	}
}

// reopenDB opens the database the watcher reattaches to (a test replaces
// it to make opens fail).
var reopenDB = openDB

// reopen attaches the store to the database at path anew (why says what
// happened), moving a file that is not a database aside first; when that
// fails the process serves from memory, says why, and the watcher tries
// again at its next tick.
func (d *Database) reopen(ctx context.Context, why string) {
	var moved string
	err := d.store.Reattach(func() (sessions.Backend, error) {
		c, ro, err := reopenDB(ctx, d.path, openReadWrite)
		if err != nil && isBadFile(err) && ctx.Err() == nil {
			aside, merr := moveAside(d.path)
			if merr != nil {
				return sessions.Backend{}, fmt.Errorf("%w; moving it aside failed: %w", err, merr)
			}
			moved = fmt.Sprintf("the file at the state database's path was not a database (%v): moved to %s", err, aside)
			c, ro, err = reopenDB(ctx, d.path, openReadWrite)
		}
		if err == nil && ro != "" {
			c.close()
			err = errors.New(ro)
		}
		if err != nil {
			return sessions.Backend{}, err
		}
		nfi, err := os.Stat(d.path)
		if err != nil {
			c.close()
			return sessions.Backend{}, err
		}
		b := newStoreDB(c)
		d.mu.Lock()
		d.c, d.b, d.file, d.lastErr = c, b, nfi, nil
		d.mu.Unlock()
		return b.backend(), nil
	})
	if moved != "" {
		d.warn(moved)
	}
	if err != nil {
		reason := fmt.Sprintf("the state database at its path cannot be opened (%v): aliases are kept in memory until a usable one is there; hookwire tries again when the file changes", err)
		d.mu.Lock()
		d.c, d.b = nil, nil
		d.failedOpen, d.failedAt = nil, time.Now()
		if fi, serr := os.Stat(d.path); serr == nil {
			d.failedOpen = fi
		}
		changed := d.mode != sessions.StateMemoryOnly || d.reason != reason
		d.mode, d.reason = sessions.StateMemoryOnly, reason
		d.mu.Unlock()
		if changed {
			d.log.Warn().Str("state", d.path).Str("reason", reason).Msg("state database not used: running in memory only")
		}
		return
	}
	d.mu.Lock()
	d.mode, d.reason = sessions.StatePersistent, ""
	d.mu.Unlock()
	d.warn(why)
}

// retryDue reports whether a process that could not reopen its database
// tries again now (fi, err: os.Stat of the path now): when the file at the
// path is another, changed, or gone (a reopen makes it), and at least
// every retryEvery whatever it is, so a file that cannot be opened (a
// newer format, say) is not checked over every page each second.
func (d *Database) retryDue(fi os.FileInfo, err error) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	was := d.failedOpen
	switch {
	case err != nil || was == nil:
		return true
	case !os.SameFile(fi, was) || fi.Size() != was.Size() || !fi.ModTime().Equal(was.ModTime()):
		return true
	}
	return time.Since(d.failedAt) >= retryEvery
}

// retryEvery is how often a reopen that failed is tried again while the
// file at the path stays as it was.
const retryEvery = 30 * time.Second

// refuse checks what is at the state path, records a refusal for State
// (a link or FIFO planted at the path or beside it) or clears it, and
// reports whether the path is refused.
func (d *Database) refuse() bool {
	err := CheckStatePath(d.path)
	reason := ""
	if err != nil {
		reason = "not opened: " + err.Error()
	}
	d.mu.Lock()
	changed := d.refused != reason
	d.refused = reason
	d.mu.Unlock()
	if changed && reason != "" {
		d.log.Warn().Str("state", d.path).Str("reason", reason).Msg("a file hookwire refuses is at the state path")
	}
	return err != nil
}
