package sessions

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strconv"
	"sync"
	"time"

	"github.com/rs/zerolog"
)

// DefaultDebounce is how long Notify waits before writing, so a burst of
// requests costs one write.
const DefaultDebounce = 200 * time.Millisecond

// writeSpacing bounds the share of time spent writing the state file: a
// write is scheduled at least writeSpacing times the last write's duration
// after the change, so a large file (the byte budget's 16 MiB) costs at
// most about a fifth of a core however fast changes come.
const writeSpacing = 4

// corruptTimeFormat stamps a state file moved aside: FILE.corrupt-<UTC>.
const corruptTimeFormat = "20060102T150405Z"

// Persister keeps a Store in a state file (PROTOCOL.md 6): loaded when
// opened, written atomically shortly after changes and when closed. It
// holds an exclusive lock on FILE.lock (and on FILE, stateLock) for its
// whole life; without the lock it runs in memory only and never touches
// FILE. Its methods are safe for concurrent use.
type Persister struct {
	path     string
	store    *Store
	log      zerolog.Logger
	debounce time.Duration
	lock     *stateLock // nil: memory-only

	writeMu sync.Mutex // serializes writes

	mu      sync.Mutex // guards what follows
	reason  string     // why memory-only
	written uint64     // store.changeCount() as of the last load or write
	timer   *time.Timer
	lastErr error
	// lastWrite is how long the last write took: the next one waits at
	// least writeSpacing times as long (Notify).
	lastWrite time.Duration
	closed    bool
	writes    int // successful writes
	released  bool

	// beforeRename, when set (tests), runs after the temp file is complete
	// and before it replaces FILE; an error fails the write there.
	beforeRename func(tmp string) error
}

// OpenPersister locks path (acquireLock), removes temp files a killed
// write left, loads path into store and returns the Persister that keeps
// it there. A lock held elsewhere (or one that cannot be taken) is not an
// error: the Persister runs in memory only, logs a warning and says why in
// Status. A missing file starts empty; an unreadable or corrupt one, or one
// of an unknown version, is renamed to path+".corrupt-<UTC time>" with a
// warning, and the store starts empty. Loading takes time linear in the
// file's size; when ctx is done first, the load stops, the file is left as
// it is and the Persister runs in memory only. debounce <= 0 means
// DefaultDebounce. The error is for bad arguments only.
func OpenPersister(ctx context.Context, path string, store *Store, log zerolog.Logger, debounce time.Duration) (*Persister, error) {
	if path == "" {
		return nil, errors.New("opening state file: empty path")
	}
	if store == nil {
		return nil, errors.New("opening state file: nil store")
	}
	if debounce <= 0 {
		debounce = DefaultDebounce
	}
	p := &Persister{path: path, store: store, log: log, debounce: debounce}

	lock, err := acquireLock(path)
	if err != nil {
		p.memoryOnly(err.Error())
		return p, nil
	}
	p.lock = lock
	if n := removeTemps(path); n > 0 {
		log.Info().Str("state", path).Int("removed", n).Msg("removed temp files an interrupted write left")
	}
	if err := p.load(ctx); err != nil {
		lock.release()
		p.lock = nil
		p.memoryOnly("loading stopped: " + err.Error())
		return p, nil
	}
	p.written = store.changeCount()
	return p, nil
}

// memoryOnly records why the state file is not used.
func (p *Persister) memoryOnly(reason string) {
	p.reason = reason
	p.log.Warn().Str("state", p.path).Str("reason", reason).Msg("state file not used: running in memory only")
	p.written = p.store.changeCount()
}

// load reads the state file into the store; a bad file is moved aside. It
// returns an error only when ctx ended the load, the file untouched.
func (p *Persister) load(ctx context.Context) error {
	began := time.Now()
	empty, err := p.read(ctx)
	switch {
	case err == nil && empty:
		p.log.Info().Str("state", p.path).Msg("no state file yet: starting empty")
		return nil
	case err == nil:
		st := p.store.Stats()
		p.log.Info().Str("state", p.path).Int("parents", st.Parents).Int("entries", st.Entries).
			Dur("took", time.Since(began)).Msg("state loaded")
		return nil
	case ctx.Err() != nil && errors.Is(err, ctx.Err()):
		return err
	}
	aside, rerr := moveAside(p.path)
	if rerr != nil {
		p.log.Warn().Err(err).Str("state", p.path).AnErr("moveError", rerr).
			Msg("state file unreadable or corrupt and could not be moved aside: starting empty, it will be overwritten")
		return nil
	}
	// FILE is gone: lock a new, empty one so that it stays held.
	if lerr := p.lock.lockState(); lerr != nil {
		p.log.Warn().Err(lerr).Str("state", p.path).Msg("locking the new state file failed")
	}
	p.log.Warn().Err(err).Str("state", p.path).Str("movedTo", aside).
		Msg("state file unreadable or corrupt: moved aside, starting empty")
	return nil
}

// read restores the store from the state file; empty reports a missing or
// empty file, which leaves the store as it is.
func (p *Persister) read(ctx context.Context) (empty bool, err error) {
	f, err := os.Open(p.path)
	if errors.Is(err, fs.ErrNotExist) {
		return true, nil
	}
	if err != nil {
		return false, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return false, err
	}
	if fi.Size() == 0 {
		return true, nil
	}
	return false, p.store.restore(ctx, bufio.NewReaderSize(f, 256<<10))
}

// moveAside renames path to path.corrupt-<UTC time>, never over an earlier
// one.
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
	return name, nil
}

// Status says where the state lives and the last write error, if any.
func (p *Persister) Status() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	switch {
	case p.lock == nil:
		return "memory-only: " + p.reason
	case p.released:
		return "closed: " + p.path
	case p.lastErr != nil:
		return "persistent: " + p.path + "; last write failed: " + p.lastErr.Error()
	}
	return "persistent: " + p.path
}

// Notify tells the persister a request that may have changed the store is
// done. If the store changed since the last write, a write is scheduled
// after the debounce delay (or writeSpacing times the last write's
// duration, if longer); Notify calls before it fires share it.
func (p *Persister) Notify() {
	if p.lock == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed || p.timer != nil || p.store.changeCount() == p.written {
		return
	}
	p.timer = time.AfterFunc(max(p.debounce, writeSpacing*p.lastWrite), func() {
		p.mu.Lock()
		p.timer = nil
		p.mu.Unlock()
		_ = p.flush(false) // logged; the next Notify retries
	})
}

// Flush writes the store now if it changed since the last write. A failed
// write is logged and returned; the store keeps serving from memory and a
// later Notify or Flush tries again. After Close it does nothing.
func (p *Persister) Flush() error { return p.flush(false) }

func (p *Persister) flush(closing bool) error {
	if p.lock == nil {
		return nil
	}
	p.writeMu.Lock()
	defer p.writeMu.Unlock()

	p.mu.Lock()
	if p.released || (p.closed && !closing) {
		p.mu.Unlock()
		return nil
	}
	if p.timer != nil {
		p.timer.Stop()
		p.timer = nil
	}
	written := p.written
	p.mu.Unlock()

	doc, changes := p.store.snapshot()
	if changes == written {
		return nil
	}
	began := time.Now()
	size, err := p.lock.writeState(doc, p.beforeRename)
	took := time.Since(began)

	p.mu.Lock()
	defer p.mu.Unlock()
	if err != nil {
		p.lastErr = err
		p.log.Warn().Err(err).Str("state", p.path).Msg("writing state file failed: serving from memory")
		return err
	}
	if p.lastErr != nil {
		p.log.Info().Str("state", p.path).Msg("writing state file works again")
	}
	p.lastErr = nil
	p.written = changes
	p.writes++
	p.lastWrite = took
	p.log.Debug().Str("state", p.path).Int64("bytes", size).Dur("took", took).Msg("state written")
	return nil
}

// Close writes pending changes and releases the lock. It is safe to call
// more than once; later Notify and Flush calls do nothing.
func (p *Persister) Close() error {
	if p.lock == nil {
		return nil
	}
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil
	}
	p.closed = true
	p.mu.Unlock()

	err := p.flush(true)

	p.writeMu.Lock()
	defer p.writeMu.Unlock()
	p.mu.Lock()
	defer p.mu.Unlock()
	p.released = true
	if rerr := p.lock.release(); rerr != nil && err == nil {
		err = fmt.Errorf("releasing state file lock: %w", rerr)
	}
	return err
}
