package sessiondb

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/hookwire/hookwire/sessions"
	"github.com/rs/zerolog"
)

// Database keeps a Store in the project's state database (PROTOCOL.md 6),
// shared with every other process on the project: what one process
// remembers, the others resolve. It is what the server needs of its state
// (handlers.Persistence). Its methods are safe for concurrent use.
type Database struct {
	path  string
	store *sessions.Store
	log   zerolog.Logger
	c     *dbConn
	// b is the Backend over c the store is attached to.
	b *storeDB
	// ctx is the context OpenDatabase was given, less its cancellation:
	// for the work of the database itself (pruning, and Close's last
	// writes, which run after a SIGTERM cancelled it).
	ctx context.Context

	// movedAside is where an unreadable database went, "" if none.
	movedAside string

	// file identifies the file opened at path; watch (watchFile) notices
	// when path names another file or none, and reopens.
	file      os.FileInfo
	watching  sync.WaitGroup
	stopWatch chan struct{}
	wake      chan struct{} // a corrupt database met: check now

	// pruning: the goroutine that brings an over-bound database within
	// its bounds (pruneLoop); stopPrune ends it.
	pruning   sync.WaitGroup
	stopPrune chan struct{}

	mu       sync.Mutex
	mode     string
	reason   string
	warnings []string
	lastErr  error
	// refused says what the watcher found at the path and would not open
	// (a planted link or FIFO), "" when nothing.
	refused string
	// failedOpen is the file at the path when a reopen last failed (nil:
	// none was there), failedAt when (retryDue).
	failedOpen os.FileInfo
	failedAt   time.Time
	// newerSaid: a newer format met while serving was put in warnings.
	newerSaid bool

	// subs are the subagents' records (subagentdb.go): in the database
	// when it is open for writing, else in memory.
	subsOnce sync.Once
	subs     *Subagents
}

// Subagents are the subagents' records (PROTOCOL.md 4.10) beside the
// store: in the database when it is open for writing (a connection of
// their own), else in this process's memory.
func (d *Database) Subagents() *Subagents {
	d.subsOnce.Do(func() {
		d.mu.Lock()
		persistent := d.mode == sessions.StatePersistent
		d.mu.Unlock()
		if persistent {
			s, err := OpenSubagents(d.ctx, d.path)
			if err == nil {
				d.subs = s
				return
			}
			d.log.Warn().Err(err).Str("state", d.path).Msg("subagents' records not opened in the state database; keeping them in memory")
		}
		d.subs = MemorySubagents()
	})
	return d.subs
}

// OpenDatabase opens (creating when missing) the state database at path
// and attaches store to it. It never fails for the file's sake: a path it
// must not open (a symlink, a FIFO), a database of a newer format, or one
// that cannot be opened leave the store in memory only; one that cannot be
// written is read only; a corrupt one is moved aside (path.corrupt-<UTC
// time>) and a new one made. Each case is logged once and shown in
// State. A JSON state file of an earlier release, at path itself or
// beside a path ending in .db (the same name with .json), is imported once
// and kept as <that file>.bak. The error is for bad arguments only.
func OpenDatabase(ctx context.Context, path string, store *sessions.Store, log zerolog.Logger) (*Database, error) {
	if path == "" {
		return nil, errors.New("opening the state database: empty path")
	}
	if store == nil {
		return nil, errors.New("opening the state database: nil store")
	}
	if abs, err := filepath.Abs(path); err == nil {
		path = abs // checked, opened and named in status as one file
	}
	d := &Database{path: path, store: store, log: log, ctx: context.WithoutCancel(ctx)}
	if err := CheckStatePath(path); err != nil {
		d.memoryOnly(err.Error())
		return d, nil
	}
	if isJSONFile(path) {
		if err := d.migrateInPlace(ctx); err != nil {
			return d, nil
		}
	}
	c, ro, err := openDB(ctx, path, openReadWrite)
	if err != nil && ctx.Err() != nil {
		d.stopping(err)
		return d, nil
	}
	if err != nil && isBadFile(err) {
		aside, merr := moveAside(path)
		if merr != nil {
			d.memoryOnly(fmt.Sprintf("%v; moving it aside failed: %v", err, merr))
			return d, nil
		}
		d.movedAside = aside
		d.warn(fmt.Sprintf("the state database was unreadable (%v): moved to %s, starting empty", err, aside))
		c, ro, err = openDB(ctx, path, openReadWrite)
	}
	if err != nil {
		d.memoryOnly(err.Error())
		return d, nil
	}
	d.c = c
	d.mode = sessions.StatePersistent
	if ro != "" {
		d.mode, d.reason = sessions.StateReadOnly, ro
		if c.immutable {
			d.reason += "; read as an unchanging file, so what other processes write later is not seen"
		}
		log.Warn().Str("state", path).Str("reason", d.reason).
			Msg("state database is read-only: existing aliases resolve, new ones last as long as this process")
	} else if lp := legacyPath(path); lp != "" {
		d.importLegacy(ctx, lp)
	}
	if w := DirWarning(path); w != "" {
		d.warn(w)
	}
	d.b = newStoreDB(c)
	d.b.prepareReads(ctx)
	store.Attach(ctx, d.b.backend(), ro != "", d.report)
	if ro == "" {
		if fi, err := os.Stat(path); err == nil {
			d.file = fi
			d.stopWatch, d.wake = make(chan struct{}), make(chan struct{}, 1)
			d.watching.Add(1)
			go d.watchFile(ctx, d.stopWatch)
		}
	}
	if ro == "" && store.OverBounds(ctx) {
		d.stopPrune = make(chan struct{})
		d.pruning.Add(1)
		go d.pruneLoop(d.stopPrune)
	}
	st := store.Stats()
	log.Info().Str("state", path).Str("mode", d.mode).Int("parents", st.Parents).Int("entries", st.Entries).Msg("state database open")
	return d, nil
}

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

// MemoryOnly is a Database that keeps nothing: the store stays in memory,
// and State says so with reason (no state directory, for one).
func MemoryOnly(path, reason string, log zerolog.Logger) *Database {
	d := &Database{path: path, log: log, ctx: context.Background()}
	d.memoryOnly(reason)
	return d
}

// HasState reports whether there is state at path for Forget to change:
// the database, or a JSON state file of an earlier release beside it
// (legacyPath), which opening the database imports.
func HasState(path string) bool {
	_, err := os.Stat(path)
	return !errors.Is(err, fs.ErrNotExist) || legacyPath(path) != ""
}

func (d *Database) memoryOnly(reason string) {
	d.mode, d.reason = sessions.StateMemoryOnly, reason
	d.log.Warn().Str("state", d.path).Str("reason", reason).Msg("state database not used: running in memory only")
}

// stopping is the process being stopped (exit, SIGTERM) while the
// database was being opened, as when OpenCode runs a command that starts
// no session (`opencode session list`, `opencode export`) and disposes the
// plugin at once: nothing is wrong with the file, so it is said at debug
// level, not as a warning; the store is in memory for the moments left.
func (d *Database) stopping(err error) {
	d.mode, d.reason = sessions.StateMemoryOnly, "stopped before the state database was opened: "+err.Error()
	d.log.Debug().Str("state", d.path).Err(err).Msg("state database not opened: the sidecar is stopping")
}

func (d *Database) warn(w string) {
	d.mu.Lock()
	d.warnings = append(d.warnings, w)
	d.mu.Unlock()
	d.log.Warn().Str("state", d.path).Msg(w)
}

// report records a failed read or write (nil: one succeeded again); the
// store keeps serving from its cache.
func (d *Database) report(err error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if errors.Is(err, errCorrupt) && d.wake != nil {
		select {
		case d.wake <- struct{}{}:
		default:
		}
	}
	if errors.Is(err, ErrNewerFormat) && !d.newerSaid {
		// Said once among the warnings too: it lasts until a restart.
		d.newerSaid = true
		d.warnings = append(d.warnings, err.Error())
	}
	switch {
	case err == nil && d.lastErr != nil:
		d.log.Info().Str("state", d.path).Msg("the state database works again")
	case err != nil && (d.lastErr == nil || d.lastErr.Error() != err.Error()):
		d.log.Warn().Err(err).Str("state", d.path).Msg("state database read or write failed: serving from memory")
	}
	d.lastErr = err
}

// pruneLoop brings a database over its bounds within them, a short
// transaction at a time, taking its turn with the requests' writers (each
// step waits in the writer queue like any write).
func (d *Database) pruneLoop(stop <-chan struct{}) {
	defer d.pruning.Done()
	steps := 0
	for d.store.PruneStep(d.ctx) {
		steps++
		select {
		case <-stop:
			return
		default:
		}
	}
	d.log.Info().Str("state", d.path).Int("transactions", steps+1).Msg("state database pruned to its bounds")
}

// stopPruning ends pruneLoop, if it runs, and waits for it; true if it
// ran.
func (d *Database) stopPruning() bool {
	d.mu.Lock()
	stop := d.stopPrune
	d.stopPrune = nil
	d.mu.Unlock()
	if stop == nil {
		return false
	}
	close(stop)
	d.pruning.Wait()
	return true
}

// closePruneTime is how long Close goes on pruning an over-bound database
// (pruneLoop had not finished) before it leaves the rest to the next
// process.
const closePruneTime = 30 * time.Second

// Close detaches the store (it keeps serving from memory) and closes the
// database. It is safe to call more than once.
func (d *Database) Close() error {
	d.mu.Lock()
	stopWatch := d.stopWatch
	d.stopWatch = nil
	d.mu.Unlock()
	if stopWatch != nil {
		close(stopWatch)
		d.watching.Wait()
	}
	if d.subs != nil {
		d.subs.Close() // before the store's: its close is the last on the file
	}
	d.mu.Lock()
	c, b := d.c, d.b
	d.c, d.b = nil, nil
	if d.mode == sessions.StatePersistent || d.mode == sessions.StateReadOnly {
		d.mode = sessions.StateClosed
	}
	d.mu.Unlock()
	if c == nil {
		return nil
	}
	if d.stopPruning() {
		steps := 1
		for deadline := time.Now().Add(closePruneTime); time.Now().Before(deadline) && d.store.PruneStep(d.ctx); {
			steps++
		}
		d.log.Info().Str("state", d.path).Int("transactions", steps).Bool("within", !d.store.OverBounds(d.ctx)).Msg("state database pruned on close")
	}
	d.store.WriteUnwritten(d.ctx)
	d.store.Detach()
	return b.Close()
}

// State reports where the state lives.
func (d *Database) State() sessions.StateStatus {
	d.mu.Lock()
	defer d.mu.Unlock()
	st := sessions.StateStatus{Mode: d.mode, Path: d.path, Warnings: d.warnings}
	if d.refused != "" {
		st.Warnings = append(slices.Clip(d.warnings), d.refused)
	}
	switch d.mode {
	case sessions.StateReadOnly, sessions.StateMemoryOnly:
		st.Reason = d.reason
	case sessions.StatePersistent:
		if d.lastErr != nil {
			st.LastWriteError = d.lastErr.Error()
		}
	}
	return st
}

// Status says the same as State in a line for humans.
func (d *Database) Status() string {
	st := d.State()
	switch st.Mode {
	case sessions.StateMemoryOnly, sessions.StateReadOnly:
		return st.Mode + ": " + st.Reason
	case sessions.StatePersistent:
		if st.LastWriteError != "" {
			return "persistent: " + st.Path + "; last write failed: " + st.LastWriteError
		}
	}
	return st.Mode + ": " + st.Path
}
