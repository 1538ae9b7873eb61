package sessiondb

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
)

// ProjectStatePath is the default state database of the project in dir,
// the one rule for it (the OpenCode shim passes --project and relies on
// it; it is the rule the shim used to apply itself, and an earlier
// release's JSON file, <name>-<hash>.json, is imported from beside it):
// <state dir>/<name>-<hash>.db, where the state dir is
// $XDG_STATE_HOME/hookwire, else ~/.local/state/hookwire (StateHome); the project is
// the git worktree's top level containing dir, else dir itself; name is its
// base name (letters, digits, '.', '_', '-'; at most 40 characters) and
// hash the first 16 hex digits of the SHA-256 of its absolute path.
func ProjectStatePath(dir string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	stateHome, err := StateHome()
	if err != nil {
		return "", err
	}
	return filepath.Join(stateHome, "hookwire", stateKey(projectDir(abs))+".db"), nil
}

// ErrNoStateDir: neither XDG_STATE_HOME nor HOME names an absolute
// directory, so a project has no state database (serve then runs in
// memory only and says so).
var ErrNoStateDir = errors.New("no state directory: neither XDG_STATE_HOME nor HOME is set to an absolute path")

// StateHome is the base of the state directory: $XDG_STATE_HOME, else
// $HOME/.local/state. A relative value is ignored, as the XDG Base
// Directory specification says (it would name a directory under whatever
// the working directory is).
func StateHome() (string, error) {
	if x := os.Getenv("XDG_STATE_HOME"); filepath.IsAbs(x) {
		return filepath.Clean(x), nil
	}
	if home := os.Getenv("HOME"); filepath.IsAbs(home) {
		return filepath.Join(home, ".local", "state"), nil
	}
	return "", ErrNoStateDir
}

// projectDir is the top level of the git worktree containing abs (the
// nearest directory with a .git entry), else abs. A worktree at the
// filesystem's root does not count, as in the shim.
func projectDir(abs string) string {
	for d := abs; ; {
		if _, err := os.Lstat(filepath.Join(d, ".git")); err == nil {
			if filepath.Dir(d) == d {
				return abs
			}
			return d
		}
		parent := filepath.Dir(d)
		if parent == d {
			return abs
		}
		d = parent
	}
}

var unsafeNameRe = regexp.MustCompile(`[^A-Za-z0-9._-]+`)

// stateKey is the shim's former stateKey: a readable, collision-safe file name
// for the absolute directory abs.
func stateKey(abs string) string {
	base := filepath.Base(abs)
	if filepath.Dir(abs) == abs {
		base = "" // the root has no base name (node's basename("/") is "")
	}
	name := unsafeNameRe.ReplaceAllString(base, "_")
	name = strings.TrimLeft(name, ".")
	if len(name) > 40 {
		name = name[:40]
	}
	if name == "" {
		name = "project"
	}
	sum := sha256.Sum256([]byte(abs))
	return name + "-" + hex.EncodeToString(sum[:])[:16]
}
