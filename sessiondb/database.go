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
