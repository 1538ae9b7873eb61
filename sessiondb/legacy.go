package sessiondb

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strconv"
	"strings"

	"github.com/hookwire/hookwire/sessions"
)

// The import of an earlier release's JSON state file (PROTOCOL.md 6,
// Migration), apart from the live store: found beside a database
// (legacyPath) or at --state itself (isJSONFile), decoded into a
// memory-only store (decodeJSONState, snapshot.go's format) and written
// into the database once (importInto), or turned into the database at the
// same path (migrateInPlace).

// legacyPath is the JSON state file an earlier release kept for the
// database at path (PROTOCOL.md 6), when there is one to import.
func legacyPath(path string) string {
	base, ok := strings.CutSuffix(path, ".db")
	if !ok {
		return ""
	}
	lp := base + ".json"
	if fi, err := os.Lstat(lp); err != nil || !fi.Mode().IsRegular() {
		return ""
	}
	return lp
}

// decodeJSONState reads the JSON state file at path into a new store with
// cfg's bounds.
func decodeJSONState(ctx context.Context, path string, cfg sessions.Config) (*sessions.Store, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|oNoFollow, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	s := sessions.New(cfg)
	if err := s.RestoreFrom(ctx, bufio.NewReaderSize(f, 256<<10)); err != nil {
		return nil, err
	}
	return s, nil
}

// importLegacy imports the JSON state file lp into the database once (the
// first process to get there does it; a marker in the database says it was
// done) and renames it lp.bak.
func (d *Database) importLegacy(ctx context.Context, lp string) {
	src, err := decodeJSONState(ctx, lp, d.store.Config())
	if err != nil {
		if ctx.Err() != nil {
			return
		}
		aside, merr := moveAside(lp)
		if merr == nil {
			d.warn(fmt.Sprintf("the JSON state file %s could not be imported (%v): moved to %s", lp, err, aside))
		} else {
			d.warn(fmt.Sprintf("the JSON state file %s could not be imported (%v) and stays where it is: %v", lp, err, merr))
		}
		return
	}
	imported := false
	err = d.c.inTx(ctx, func() error {
		var done int
		if err := d.c.conn.QueryRowContext(ctx, "SELECT count(*) FROM meta WHERE key='imported'").Scan(&done); err != nil || done > 0 {
			return err
		}
		imported = true
		return importInto(ctx, d.c, src)
	})
	if err != nil {
		d.warn(fmt.Sprintf("importing the JSON state file %s failed: %v; it stays where it is", lp, err))
		return
	}
	if err := os.Rename(lp, lp+".bak"); err != nil && !errors.Is(err, fs.ErrNotExist) {
		d.warn(fmt.Sprintf("renaming the imported JSON state file %s failed: %v", lp, err))
	}
	if imported {
		st := src.Stats()
		d.log.Info().Str("state", d.path).Str("from", lp).Str("keptAs", lp+".bak").Int("parents", st.Parents).
			Int("entries", st.Entries).Msg("imported the JSON state file of an earlier release")
	}
}

// importInto writes everything src holds into c, inside c's write
// transaction, keeping src's recency order, and marks the import done.
func importInto(ctx context.Context, c *dbConn, src *sessions.Store) error {
	b := newStoreDB(c)
	if err := src.WriteAll(ctx, b.backend()); err != nil {
		return err
	}
	return txRows{b}.setMeta(ctx, "imported", 1)
}

// migrateInPlace turns the JSON state file at d.path (a --state FILE an
// earlier release wrote) into a database at the same path: the database
// is built beside it, FILE is kept as FILE.bak, and the database renamed
// over FILE. A crash at any point leaves either the JSON file or the
// database at FILE. In a directory that cannot be written, the JSON file
// is read into the store instead (read-only). On failure the store is in
// memory only (or read-only) and the error says why.
func (d *Database) migrateInPlace(ctx context.Context) error {
	src, err := decodeJSONState(ctx, d.path, d.store.Config())
	if err != nil {
		if ctx.Err() != nil {
			d.stopping(err)
			return err
		}
		aside, merr := moveAside(d.path)
		if merr != nil {
			d.memoryOnly(fmt.Sprintf("the JSON state file is not loadable (%v) and could not be moved aside: %v", err, merr))
			return err
		}
		d.warn(fmt.Sprintf("the JSON state file was not loadable (%v): moved to %s, starting empty", err, aside))
		return nil
	}
	tmp := d.path + ".migrating-" + strconv.Itoa(os.Getpid())
	for _, name := range append([]string{tmp}, companions(tmp)...) {
		os.Remove(name)
	}
	c, ro, err := openDB(ctx, tmp, openReadWrite)
	if err == nil && ro != "" {
		c.close()
		err = errors.New(ro)
	}
	if err != nil {
		os.Remove(tmp)
		// Serve what the file holds, read-only, rather than nothing.
		d.store.Adopt(src)
		d.mode, d.reason = sessions.StateReadOnly, "the JSON state file of an earlier release could not be made a database ("+err.Error()+"): read, never written"
		d.log.Warn().Str("state", d.path).Str("reason", d.reason).Msg("state file is read-only: existing aliases resolve, new ones last as long as this process")
		return err
	}
	err = c.inTx(ctx, func() error { return importInto(ctx, c, src) })
	if cerr := c.close(); err == nil {
		err = cerr
	}
	os.Remove(tmp + queueSuffix) // its queue: no other process knew tmp
	if err == nil && !isJSONFile(d.path) {
		os.Remove(tmp) // another process migrated it meanwhile: use theirs
		return nil
	}
	if err == nil {
		err = keepCopy(d.path, d.path+".bak")
	}
	if err == nil {
		err = os.Rename(tmp, d.path)
	}
	if err != nil {
		for _, name := range append([]string{tmp}, companions(tmp)...) {
			os.Remove(name)
		}
		d.memoryOnly("migrating the JSON state file failed: " + err.Error())
		return err
	}
	st := src.Stats()
	d.log.Info().Str("state", d.path).Str("keptAs", d.path+".bak").Int("parents", st.Parents).Int("entries", st.Entries).
		Msg("imported the JSON state file of an earlier release")
	return nil
}

// keepCopy makes dst a copy of src (a hard link where it can), replacing
// an earlier dst.
func keepCopy(src, dst string) error {
	os.Remove(dst)
	if os.Link(src, dst) == nil {
		return nil
	}
	in, err := os.OpenFile(src, os.O_RDONLY|oNoFollow, 0)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL|oNoFollow, 0o600)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// isJSONFile reports whether path holds a JSON document (a state file of
// an earlier release), by its first non-blank byte.
func isJSONFile(path string) bool {
	f, err := os.OpenFile(path, os.O_RDONLY|oNoFollow, 0)
	if err != nil {
		return false
	}
	defer f.Close()
	buf := make([]byte, 512)
	n, _ := io.ReadFull(f, buf)
	s := strings.TrimLeft(string(buf[:n]), " \t\r\n")
	return strings.HasPrefix(s, "{")
}
