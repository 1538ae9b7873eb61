// Package statewatch follows the state database other processes serve: it
// reads it again whenever it changes and keeps what the last good read
// found, for `hookwire observe`.
//
// It must never write the database or create it: it reads with
// sessiondb.ReadState, which opens it read-only (a WAL reader never
// blocks the writers). It notices changes with fsnotify on the file's
// directory (commits land in FILE-wal, checkpoints and an earlier
// release's renames in FILE), or, when fsnotify cannot watch, by comparing
// the identity, size and modification time of FILE and FILE-wal every
// PollInterval.
package statewatch

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"sync"
	"time"

	"github.com/fsnotify/fsnotify"
	"github.com/rs/zerolog"

	"github.com/hookwire/hookwire/sessiondb"
	"github.com/hookwire/hookwire/sessions"
	"github.com/hookwire/hookwire/subagents"
)

// Defaults of Options.
const (
	DefaultDebounce     = 50 * time.Millisecond
	DefaultPollInterval = 500 * time.Millisecond
)

// How the watcher notices changes (Status.Watch).
const (
	WatchFsnotify = "fsnotify"
	WatchPoll     = "poll"
)

// Options configures Start.
type Options struct {
	Log zerolog.Logger
	// Debounce is how long a burst of file events is let settle before the
	// file is read (DefaultDebounce when zero).
	Debounce time.Duration
	// PollInterval is the fallback's period (DefaultPollInterval when zero).
	PollInterval time.Duration
	// Poll forces the fallback (for tests and file systems without events).
	Poll bool
	// OnChange is called, from the watcher's goroutine, after a read that
	// changed the entries or the prompt-cache figures, with how many
	// entries there are now.
	OnChange func(count int)
	// OnSubagentsChanged is called, from the watcher's goroutine, after a
	// read in which subagent rows or figures of these top-level parents
	// changed (PROTOCOL.md 4.10).
	OnSubagentsChanged func(parents []string)
}

// Status is what the watcher knows of its file.
type Status struct {
	File string `json:"file"`
	// LastLoad is the outcome of the latest read: "ok", "missing" (served
	// as no entries), "corrupt: <reason>" or "unreadable: <reason>" (the
	// last good entries are kept).
	LastLoad string `json:"lastLoad"`
	Watch    string `json:"watch"`
	Loads    int    `json:"loads"`
	// Parents is how many parent sessions the last good read found.
	Parents int `json:"parents"`
}

// Watcher holds what the last good read of one state file found: the
// newest sessions.DefaultListLimit entries, how many there are, and the
// prompt-cache figures (bounded, sessions.MaxCacheSessions), never a copy
// of the whole state (issue 30 item 13); Page reads any page of the file
// as it is.
type Watcher struct {
	path string
	opts Options
	log  zerolog.Logger

	mu      sync.Mutex
	entries []sessions.Entry // the first page
	count   int
	cache   []sessions.CacheSession
	status  Status
	// What tells the next read whether the entries changed: the digest
	// of every entry, with the file, write sequence and count it was
	// taken at (the digest is taken again only when one of them moved).
	digest [sha256.Size]byte
	file   os.FileInfo
	seq    int64
	read   bool

	// subs reads the subagents' records on a connection it keeps, so that
	// the check for their changes reopens nothing (issue 51).
	subs *sessiondb.Subagents
}

// Start reads path once, then follows it until ctx is done. path is made
// absolute; a file that does not exist yet is fine.
func Start(ctx context.Context, path string, opts Options) (*Watcher, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, err
	}
	if opts.Debounce <= 0 {
		opts.Debounce = DefaultDebounce
	}
	if opts.PollInterval <= 0 {
		opts.PollInterval = DefaultPollInterval
	}
	w := &Watcher{path: abs, opts: opts, log: opts.Log, status: Status{File: abs, Watch: WatchPoll}, subs: sessiondb.ReadSubagents(abs)}
	go func() {
		<-ctx.Done()
		w.subs.Close()
	}()
	// Watch (or look) before the first read: a version that comes between
	// the two is then seen as a change.
	var fw *fsnotify.Watcher
	dirMissing := false
	if !opts.Poll {
		fw, err = watchDir(filepath.Dir(abs))
		switch {
		case err == nil:
		case errors.Is(err, fs.ErrNotExist):
			dirMissing = true
			w.log.Info().Str("dir", filepath.Dir(abs)).Msg("no state directory yet; polling until it exists")
		default:
			w.log.Warn().Err(err).Str("dir", filepath.Dir(abs)).Msg("cannot watch the state file's directory; polling")
		}
	}
	seen := w.look()
	w.load()
	w.subagentChanges() // where the next check starts
	if fw != nil {
		w.status.Watch = WatchFsnotify
		go w.watchEvents(ctx, fw)
	} else {
		go w.poll(ctx, seen, dirMissing)
	}
	return w, nil
}

func watchDir(dir string) (*fsnotify.Watcher, error) {
	fw, err := fsnotify.NewWatcher()
	if err != nil {
		return nil, err
	}
	if err := fw.Add(dir); err != nil {
		fw.Close()
		return nil, err
	}
	return fw, nil
}

// Entries returns the newest entries the last good read found (at most
// sessions.DefaultListLimit), newest use first.
func (w *Watcher) Entries() []sessions.Entry {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.entries
}

// Count returns how many entries the last good read found, all parents.
func (w *Watcher) Count() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.count
}

// Page reads one page of the file as it is now (sessions.Store.Page's
// order), without reading the rest: a missing file is an empty page.
func (w *Watcher) Page(ctx context.Context, parent, cursor string, limit int) (sessions.EntryPage, error) {
	return sessiondb.ReadPage(ctx, w.path, parent, cursor, limit)
}

// Subagents reads one page of a parent's subagents from the file as it is
// now (subagents.list), on the watcher's kept connection.
func (w *Watcher) Subagents(ctx context.Context, parent, cursor string, limit int) (subagents.Page, error) {
	return w.subs.SubagentsOf(ctx, parent, cursor, limit)
}

// subagentChanges asks the kept connection which parents' subagents
// changed since the last ask: nothing is read when nobody committed.
func (w *Watcher) subagentChanges() []string {
	parents, err := w.subs.Changes(context.Background())
	if err != nil {
		w.log.Debug().Err(err).Msg("subagents' changes not read")
	}
	return parents
}

// Cache returns the sessions' prompt-cache figures the last good read
// found (PROTOCOL.md 4.9), the most recently used first.
func (w *Watcher) Cache() []sessions.CacheSession {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.cache
}

// Status reports the file and the latest read's outcome.
func (w *Watcher) Status() Status {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.status
}

// watchEvents reads the file again Debounce after the last event that
// names it. Events for other files in the directory (the writer's temp
// files, other projects' state files) are ignored.
func (w *Watcher) watchEvents(ctx context.Context, fw *fsnotify.Watcher) {
	defer fw.Close()
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	for {
		select {
		case <-ctx.Done():
			timer.Stop()
			return
		case ev, ok := <-fw.Events:
			if !ok {
				return
			}
			// A Chmod alone is no change: reading a WAL database (this
			// watcher's own reads included) touches FILE-wal's attributes,
			// and taking that for a write made each read set off the next.
			if ev.Op == fsnotify.Chmod {
				continue
			}
			if name := filepath.Clean(ev.Name); name == w.path || name == w.path+"-wal" {
				timer.Reset(w.opts.Debounce)
			}
		case err, ok := <-fw.Errors:
			if !ok {
				return
			}
			// An overflow loses events: read again to be sure.
			w.log.Warn().Err(err).Msg("file watch error; reading the state file again")
			timer.Reset(w.opts.Debounce)
		case <-timer.C:
			w.reload()
		}
	}
}

// dirRetryInterval is how often poll looks for a state directory that
// did not exist, to start watching it soon after the sidecar creates it.
const dirRetryInterval = 100 * time.Millisecond

// poll reads the file again when its identity, size or modification time
// changed since the last look (last, nil when it was missing). With
// dirMissing, it looks every dirRetryInterval for the directory and hands
// over to fsnotify once it can watch it.
func (w *Watcher) poll(ctx context.Context, last [2]os.FileInfo, dirMissing bool) {
	interval := w.opts.PollInterval
	if dirMissing {
		interval = min(interval, dirRetryInterval)
	}
	tick := time.NewTicker(interval)
	defer tick.Stop()
	dir := filepath.Dir(w.path)
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
			if dirMissing {
				if _, err := os.Stat(dir); err == nil {
					fw, err := watchDir(dir)
					if err == nil {
						w.log.Info().Str("dir", dir).Msg("watching the state file's directory")
						w.mu.Lock()
						w.status.Watch = WatchFsnotify
						w.mu.Unlock()
						w.reload() // what changed before the watch began
						go w.watchEvents(ctx, fw)
						return
					}
					w.log.Warn().Err(err).Str("dir", dir).Msg("cannot watch the state file's directory; polling")
					dirMissing = false
					tick.Reset(w.opts.PollInterval)
				}
			}
			cur := w.look()
			if !sameVersion(last[0], cur[0]) || !sameVersion(last[1], cur[1]) {
				last = cur
				w.reload()
			}
		}
	}
}

// look stats FILE and FILE-wal (nil: missing), without following links.
func (w *Watcher) look() [2]os.FileInfo {
	var out [2]os.FileInfo
	out[0], _ = os.Lstat(w.path)
	out[1], _ = os.Lstat(w.path + "-wal")
	return out
}

// sameVersion reports whether two looks at the file (nil: missing) saw the
// same version: the same file (a rename over it makes another), size and
// modification time.
func sameVersion(a, b os.FileInfo) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return os.SameFile(a, b) && a.Size() == b.Size() && a.ModTime().Equal(b.ModTime())
}

// reload reads the file and tells OnChange when the entries changed.
func (w *Watcher) reload() {
	count, changed := w.load()
	if changed && w.opts.OnChange != nil {
		w.opts.OnChange(count)
	}
	if parents := w.subagentChanges(); len(parents) > 0 && w.opts.OnSubagentsChanged != nil {
		w.opts.OnSubagentsChanged(parents)
	}
}

// load reads the file once: its counts and figures, the first page of
// its entries and, when the file, its write sequence or its count moved
// since the last read, a digest of all its entries, streamed (a write
// that changed no entry, such as a frozen block, changes no digest). A
// missing file is no entries; a corrupt or unreadable one keeps the last
// good read.
func (w *Watcher) load() (count int, changed bool) {
	fi, _ := os.Stat(w.path)
	v, err := sessiondb.OpenStateView(w.path)
	var page sessions.EntryPage
	digest, seq := w.lastDigest(fi, v)
	if err == nil {
		page, err = v.Page(context.Background(), "", "", sessions.DefaultListLimit)
		if err == nil && digest == nil {
			digest, err = entriesDigest(v)
		}
		v.Close()
	}
	var outcome string
	switch {
	case err == nil:
		outcome = "ok"
	case errors.Is(err, fs.ErrNotExist):
		outcome, v, page = "missing", &sessiondb.StateView{}, sessions.EntryPage{}
		none := sha256.Sum256(nil) // as a file with no entries
		digest, fi, seq = &none, nil, 0
	case isDecodeError(err):
		outcome = "corrupt: " + err.Error()
	default:
		outcome = "unreadable: " + err.Error()
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.status.Loads++
	if w.status.LastLoad != outcome {
		w.log.Info().Str("file", w.path).Str("load", outcome).Msg("state file read")
	}
	w.status.LastLoad = outcome
	if err != nil && outcome != "missing" {
		return w.count, false
	}
	entries := page.Entries
	if entries == nil {
		entries = []sessions.Entry{}
	}
	changed = !w.read || *digest != w.digest || !reflect.DeepEqual(v.Cache, w.cache)
	w.entries, w.count, w.cache = entries, v.Entries, v.Cache
	w.digest, w.file, w.seq, w.read = *digest, fi, seq, true
	w.status.Parents = v.Parents
	return v.Entries, changed
}

// lastDigest is the last read's digest when v is the file it was taken
// of, at the same write sequence and count (nil: take it again), and v's
// sequence.
func (w *Watcher) lastDigest(fi os.FileInfo, v *sessiondb.StateView) (*[sha256.Size]byte, int64) {
	if v == nil {
		return nil, 0
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.read && v.Seq != 0 && v.Seq == w.seq && v.Entries == w.count && fi != nil && w.file != nil && os.SameFile(fi, w.file) {
		d := w.digest
		return &d, v.Seq
	}
	return nil, v.Seq
}

// entriesDigest is a digest of every entry of v, in EachEntry's order,
// streamed.
func entriesDigest(v *sessiondb.StateView) (*[sha256.Size]byte, error) {
	h := sha256.New()
	enc := json.NewEncoder(h)
	if err := v.EachEntry(func(e sessions.Entry) error { return enc.Encode(e) }); err != nil {
		return nil, err
	}
	var d [sha256.Size]byte
	h.Sum(d[:0])
	return &d, nil
}

// isDecodeError tells a file whose contents cannot be read as a state
// (corrupt) from one the system would not let us read.
func isDecodeError(err error) bool {
	var pe *fs.PathError
	var fe *sessiondb.FileError
	return !errors.As(err, &pe) && !errors.As(err, &fe)
}
