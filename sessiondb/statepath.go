package sessiondb

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// The state database's path and the files beside it: what is refused
// before anything is opened (PROTOCOL.md 6, Refusals).

// companionSuffixes name the files SQLite keeps beside the database.
var companionSuffixes = []string{"-wal", "-shm", "-journal"}

// FileError says why the state path cannot be used as it is: a symlink, a
// FIFO or another non-regular file, where the database or one of its
// companion files belongs. Nothing is opened, created or changed.
type FileError struct {
	Path   string
	Reason string
}

func (e *FileError) Error() string { return e.Path + ": " + e.Reason }

// CheckStatePath refuses what must never be opened as the database at
// path or one of its companion files: a symbolic link (followed it could
// make us write wherever it points; a dangling one would create its
// target) or anything but a regular file (a FIFO would hang the open). A
// missing file is fine. It never blocks: it only looks at names.
func CheckStatePath(path string) error {
	for _, name := range append([]string{path}, companions(path)...) {
		fi, err := os.Lstat(name)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return &FileError{Path: name, Reason: err.Error()}
		}
		switch m := fi.Mode(); {
		case m&fs.ModeSymlink != 0:
			return &FileError{Path: name, Reason: "is a symbolic link; hookwire does not follow links for its state (remove it, or point --state at the real file)"}
		case !m.IsRegular():
			return &FileError{Path: name, Reason: "is not a regular file (" + m.Type().String() + "); hookwire opens only regular files as state"}
		}
	}
	return nil
}

// companions names the files beside the database at path: SQLite's, and
// the writers' queue (dbqueue.go), which is not part of the database and
// is not moved aside with it.
func companions(path string) []string {
	out := make([]string, 0, len(companionSuffixes)+1)
	for _, s := range companionSuffixes {
		out = append(out, path+s)
	}
	return append(out, path+queueSuffix)
}

// DirWarning returns a warning when the directory holding path can be
// written by other users (who could plant files there), else "".
func DirWarning(path string) string {
	dir := filepath.Dir(path)
	fi, err := os.Stat(dir)
	if err != nil || fi.Mode().Perm()&0o022 == 0 {
		return ""
	}
	return fmt.Sprintf("state directory %s is writable by others (mode %04o): another user could plant files there; chmod 700 it", dir, fi.Mode().Perm())
}
