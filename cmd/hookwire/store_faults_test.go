package main

import (
	"database/sql"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rs/zerolog"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hookwire/hookwire/sessiondb"
	"github.com/hookwire/hookwire/sessions"
)

// Issue 30's faults of the state commands, through the binary.

// envWithout is the test's environment without the variables named.
func envWithout(names ...string) []string {
	var env []string
	for _, kv := range os.Environ() {
		keep := true
		for _, n := range names {
			if strings.HasPrefix(kv, n+"=") {
				keep = false
			}
		}
		if keep {
			env = append(env, kv)
		}
	}
	return env
}

// `--state rel.db` is the working directory's rel.db, for serve and the
// commands alike (SQLite opened /rel.db, serve ran memory-only and left
// an empty ./rel.db, and sessions called a valid database not loadable);
// a relative symbolic link is refused as the absolute one is.
func TestStateRelativePath(t *testing.T) {
	dir := t.TempDir()
	cmd := exec.Command(binPath, "serve", "--state", "rel.db")
	cmd.Dir = dir
	p := startCmd(t, cmd, false)
	p.initialize()
	st := p.stateFile()
	assert.Equal(t, sessions.StatePersistent, st.Mode, "reason %q; log: %s", st.Reason, p.stderr.String())
	assert.Equal(t, filepath.Join(dir, "rel.db"), st.Path)
	p.orchestrate("ses_rel")
	p.createTask("ses_rel", "call_1", "explorer", "ses_rel_child")
	p.stdin.Close()
	require.Equal(t, 0, p.waitExit())

	got, err := sessiondb.ReadState(filepath.Join(dir, "rel.db"))
	require.NoError(t, err)
	require.Len(t, got.Sessions, 1)
	assert.Equal(t, "ses_rel_child", got.Sessions[0].TaskID)

	list := exec.Command(binPath, "sessions", "--state", "rel.db")
	list.Dir = dir
	out, err := list.CombinedOutput()
	require.NoError(t, err, string(out))
	assert.Contains(t, string(out), "ses_rel_child")

	require.NoError(t, os.Symlink("rel.db", filepath.Join(dir, "link.db")))
	cmd = exec.Command(binPath, "serve", "--state", "link.db")
	cmd.Dir = dir
	p = startCmd(t, cmd, false)
	p.initialize()
	st = p.stateFile()
	assert.Equal(t, sessions.StateMemoryOnly, st.Mode)
	assert.Contains(t, st.Reason, "symbolic link")
	for _, c := range []string{"sessions", "forget"} {
		args := []string{c, "--state", "link.db"}
		if c == "forget" {
			args = append(args, "--all")
		}
		cmd := exec.Command(binPath, args...)
		cmd.Dir = dir
		out, err := cmd.CombinedOutput()
		assert.Error(t, err, "%s through a relative link: %s", c, out)
		assert.Contains(t, string(out), "symbolic link", c)
	}
}

// With HOME and XDG_STATE_HOME both unset, serve --project answers
// initialize and runs in memory, saying why (it exited 1 before
// initialize, and the shim gave up after five restarts).
func TestServeNoStateHome(t *testing.T) {
	cmd := exec.Command(binPath, "serve", "--project", t.TempDir())
	cmd.Env = envWithout("HOME", "XDG_STATE_HOME")
	p := startCmd(t, cmd, false)
	p.initialize()
	st := p.stateFile()
	assert.Equal(t, sessions.StateMemoryOnly, st.Mode, "log: %s", p.stderr.String())
	assert.Contains(t, st.Reason, "no state directory")
	p.orchestrate("ses_mem")
	p.createTask("ses_mem", "call_1", "explorer", "ses_mem_child")
	assert.Equal(t, "ses_mem_child", p.resumes("ses_mem", "explorer", "exp-1"), "the store works in memory")
	p.stdin.Close()
	require.Equal(t, 0, p.waitExit())
}

// A relative XDG_STATE_HOME is ignored (the XDG spec): the state goes
// under HOME, and nothing is made under the working directory.
func TestServeRelativeXDGStateHome(t *testing.T) {
	home, cwd, project := t.TempDir(), t.TempDir(), t.TempDir()
	cmd := exec.Command(binPath, "serve", "--project", project)
	cmd.Dir = cwd
	cmd.Env = append(envWithout("HOME", "XDG_STATE_HOME"), "HOME="+home, "XDG_STATE_HOME=rel/state")
	p := startCmd(t, cmd, false)
	p.initialize()
	st := p.stateFile()
	assert.Equal(t, sessions.StatePersistent, st.Mode, "log: %s", p.stderr.String())
	assert.True(t, strings.HasPrefix(st.Path, filepath.Join(home, ".local", "state", "hookwire")+string(filepath.Separator)), st.Path)
	p.stdin.Close()
	require.Equal(t, 0, p.waitExit())
	_, err := os.Lstat(filepath.Join(cwd, "rel"))
	assert.ErrorIs(t, err, os.ErrNotExist, "nothing made under the working directory")
}

// corruptDatabase makes a hookwire database at path holding 400 parents,
// then zeroes its fourth page: the header is intact, the data is not.
func corruptDatabase(t *testing.T, path string) {
	t.Helper()
	d, err := sessiondb.OpenDatabase(t.Context(), path, sessions.New(sessions.Config{}), zerolog.Nop())
	require.NoError(t, err)
	require.NoError(t, d.Close())
	db, err := sql.Open("sqlite", path)
	require.NoError(t, err)
	_, err = db.Exec("WITH RECURSIVE k(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM k WHERE i < 400) " +
		"INSERT INTO parents(pid,id,rev,bytes) SELECT i, 'ses_parent_with_a_long_enough_id_'||i, i, 300 FROM k")
	require.NoError(t, err)
	require.NoError(t, db.Close())
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	require.NoError(t, err)
	_, err = f.WriteAt(make([]byte, 8192), 3*8192)
	require.NoError(t, err)
	require.NoError(t, f.Close())
}

// A corrupt database whose header is intact: sessions and doctor call it
// corrupt, with advice that holds; forget --all resets it (exit 0, the
// damaged file kept aside), and a sidecar's writes then persist.
func TestCorruptDatabaseCommands(t *testing.T) {
	dir := t.TempDir()
	state := filepath.Join(dir, "state.db")
	corruptDatabase(t, state)

	out, err := exec.Command(binPath, "sessions", "--state", state).CombinedOutput()
	require.Error(t, err)
	assert.Contains(t, string(out), "(corrupt)")
	assert.Contains(t, string(out), "hookwire forget --all --state "+state)

	out, err = exec.Command(binPath, "forget", "--all", "--state", state).CombinedOutput()
	require.NoError(t, err, "forget --all resets a corrupt database: %s", out)
	aside, _ := filepath.Glob(state + ".corrupt-*")
	assert.NotEmpty(t, aside, "the damaged file is kept aside")

	p := start(t, false, "--state", state)
	p.initialize()
	require.Equal(t, sessions.StatePersistent, p.stateFile().Mode)
	p.orchestrate("ses_after")
	p.createTask("ses_after", "call_1", "explorer", "ses_after_child")
	p.stdin.Close()
	require.Equal(t, 0, p.waitExit())
	got, err := sessiondb.ReadState(state)
	require.NoError(t, err)
	require.Len(t, got.Sessions, 1)
}

// Advice holds for each case: a newer format is never said to be moved
// aside or reset (serve leaves it, forget refuses it).
func TestStateAdviceTrue(t *testing.T) {
	dir := t.TempDir()
	newer := filepath.Join(dir, "newer.db")
	d, err := sessiondb.OpenDatabase(t.Context(), newer, sessions.New(sessions.Config{}), zerolog.Nop())
	require.NoError(t, err)
	require.NoError(t, d.Close())
	db, err := sql.Open("sqlite", newer)
	require.NoError(t, err)
	_, err = db.Exec("PRAGMA user_version = 99")
	require.NoError(t, err)
	require.NoError(t, db.Close())

	out, err := exec.Command(binPath, "sessions", "--state", newer).CombinedOutput()
	require.Error(t, err)
	assert.Contains(t, string(out), "newer hookwire")
	assert.NotContains(t, string(out), "moves it aside")
	assert.NotContains(t, string(out), "forget --all")
	out, err = exec.Command(binPath, "forget", "--all", "--state", newer).CombinedOutput()
	assert.Error(t, err, "forget cannot reset a newer format: %s", out)
	_, serr := os.Stat(newer)
	assert.NoError(t, serr, "left where it is")
}
