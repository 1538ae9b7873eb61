package sessiondb

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/hookwire/hookwire/sessions"
)

// Read-only views of the state for the CLI (`hookwire sessions`, `hookwire
// doctor`, `hookwire observe`): they never write and never wait for a
// writer (a WAL reader sees the last commit), so they work while sidecars
// serve the database.

// StateContents is what the state holds.
type StateContents struct {
	// Sessions are the remembered task sessions: the most recently active
	// parent's first, and within a parent the most recently used first.
	Sessions        []sessions.Entry
	Parents         int // parent sessions, with or without entries
	FrozenBlocks    int // frozen cache-stable blocks (PROTOCOL.md 4.4)
	TrackedSessions int // sessions whose agent is remembered
	// Health is every model's health the file keeps, latest failure first.
	Health []sessions.Health
	// Cache is each session's prompt-cache figures (PROTOCOL.md 4.9), the
	// most recently used first.
	Cache []sessions.CacheSession
}

// ReadState reads the state database at path, read-only, in one read
// transaction. A JSON state file of an earlier release (at path, or beside
// a path ending in .db while no database exists yet) is read as the
// sidecar would import it. Nothing is dropped for a bound: what is listed
// is what the state holds. A path CheckStatePath refuses is a *FileError
// at once; a missing state is an error matching fs.ErrNotExist; one the
// sidecar would move aside, or of a newer format, is an error.
func ReadState(path string) (StateContents, error) {
	if err := CheckStatePath(path); err != nil {
		return StateContents{}, err
	}
	fi, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		if lp := legacyPath(path); lp != "" {
			return readJSONState(lp)
		}
	}
	if err != nil {
		return StateContents{}, err
	}
	if fi.IsDir() {
		return StateContents{}, fmt.Errorf("%s is a directory", path)
	}
	if fi.Size() == 0 {
		return StateContents{}, nil
	}
	if isJSONFile(path) {
		return readJSONState(path)
	}
	ctx := context.Background() // ReadState takes none yet
	c, _, err := openDB(ctx, path, openReadOnly)
	if errors.Is(err, errEmptyDB) {
		return StateContents{}, nil
	}
	if err != nil {
		return StateContents{}, err
	}
	defer c.close()
	all, err := sessions.ReadAll(ctx, newStoreDB(c).backend())
	if err != nil {
		return StateContents{}, err
	}
	return contents(all), nil
}

func readJSONState(path string) (StateContents, error) {
	s, err := decodeJSONState(context.Background(), path, sessions.UnboundedConfig())
	if err != nil {
		if !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, fs.ErrPermission) {
			err = badJSONError{err}
		}
		return StateContents{}, err
	}
	return contents(s), nil
}

// contents lists what the memory-only store s holds.
func contents(s *sessions.Store) StateContents {
	c := s.Contents()
	out := StateContents{Parents: c.Parents, FrozenBlocks: c.FrozenBlocks, TrackedSessions: c.TrackedSessions, Health: c.Health}
	for _, id := range c.ParentIDs {
		out.Sessions = append(out.Sessions, s.Tasks().List(id)...) // entries as sessions.list reports them
	}
	out.Cache = s.PromptCache().List()
	return out
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

// Advice is what to do about err, an error ReadState gave for the
// state at path, true for its case ("" when the error says it already).
// IsCorrupt reports whether err means the state is damaged or not a
// hookwire database: what a sidecar moves aside.
func Advice(err error, path string) string {
	var fe *FileError
	switch {
	case err == nil, errors.As(err, &fe):
		return ""
	case errors.Is(err, ErrNewerFormat):
		return "a newer hookwire wrote it: upgrade hookwire to read it; sidecars of this build leave it as it is and run in memory only, and forget cannot change it"
	case IsCorrupt(err):
		return fmt.Sprintf("a sidecar opening it moves it aside (to %s.corrupt-<time>) and starts empty; or reset it now: hookwire forget --all --state %s", path, path)
	case errors.Is(err, fs.ErrPermission):
		return "make it readable by you (a sidecar that cannot write it runs read-only)"
	}
	return ""
}

// IsCorrupt reports an error that means the state at its path is damaged
// (SQLite found it corrupt, or its JSON does not decode) or not a hookwire
// database.
func IsCorrupt(err error) bool {
	return isBadFile(err) || errors.Is(err, errBadJSON)
}

// errBadJSON marks a JSON state file that does not decode (badJSONError
// keeps the decoder's message).
var errBadJSON = errors.New("the JSON state file does not decode")

type badJSONError struct{ err error }

func (e badJSONError) Error() string        { return e.err.Error() }
func (e badJSONError) Unwrap() error        { return e.err }
func (e badJSONError) Is(target error) bool { return target == errBadJSON }
