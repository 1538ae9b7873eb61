package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

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
	assert.Equal(t, sessions.StateFilePersistent, st.Mode, "reason %q; log: %s", st.Reason, p.stderr.String())
	assert.Equal(t, filepath.Join(dir, "rel.db"), st.Path)
	p.orchestrate("ses_rel")
	p.createTask("ses_rel", "call_1", "explorer", "ses_rel_child")
	p.stdin.Close()
	require.Equal(t, 0, p.waitExit())

	got, err := sessions.ReadStateFile(filepath.Join(dir, "rel.db"))
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
	assert.Equal(t, sessions.StateFileMemoryOnly, st.Mode)
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
	assert.Equal(t, sessions.StateFileMemoryOnly, st.Mode, "log: %s", p.stderr.String())
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
	assert.Equal(t, sessions.StateFilePersistent, st.Mode, "log: %s", p.stderr.String())
	assert.True(t, strings.HasPrefix(st.Path, filepath.Join(home, ".local", "state", "hookwire")+string(filepath.Separator)), st.Path)
	p.stdin.Close()
	require.Equal(t, 0, p.waitExit())
	_, err := os.Lstat(filepath.Join(cwd, "rel"))
	assert.ErrorIs(t, err, os.ErrNotExist, "nothing made under the working directory")
}
