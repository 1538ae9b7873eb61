//go:build unix

package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// serveOnce runs the built sidecar with args and an empty stdin (it exits
// at EOF), in memory (--state off is not needed: XDG_STATE_HOME is a temp
// dir); it returns the exit code and stderr.
func serveOnce(t *testing.T, dir string, args ...string) (int, string) {
	t.Helper()
	cmd := exec.Command(binPath, append([]string{"serve"}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "XDG_STATE_HOME="+filepath.Join(dir, "state"), "HOME="+dir)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	done := make(chan error, 1)
	require.NoError(t, cmd.Start())
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else {
			require.NoError(t, err)
		}
		return code, stderr.String()
	case <-time.After(20 * time.Second):
		_ = cmd.Process.Kill()
		t.Fatalf("serve %v did not return: it blocked on a file", args)
		return 0, ""
	}
}

// Files a checkout can plant where hookwire writes (issue 23): a symbolic
// link at the log file or the recording is not followed, a FIFO does not
// block.
func TestPlantedFilesAreNotFollowed(t *testing.T) {
	t.Run("log file: a symlink to a file", func(t *testing.T) {
		dir := t.TempDir()
		target := filepath.Join(dir, "bashrc")
		require.NoError(t, os.WriteFile(target, []byte("keep\n"), 0o600))
		require.NoError(t, os.Symlink(target, filepath.Join(dir, "sidecar.log")))
		code, stderr := serveOnce(t, dir, "--log-file", "sidecar.log")
		assert.NotEqual(t, 0, code)
		assert.Contains(t, stderr, "sidecar.log is a symbolic link; refusing to write through it")
		got, err := os.ReadFile(target)
		require.NoError(t, err)
		assert.Equal(t, "keep\n", string(got))
	})
	t.Run("log file: a dangling symlink", func(t *testing.T) {
		dir := t.TempDir()
		target := filepath.Join(dir, "created-by-nobody")
		require.NoError(t, os.Symlink(target, filepath.Join(dir, "sidecar.log")))
		code, _ := serveOnce(t, dir, "--log-file", "sidecar.log")
		assert.NotEqual(t, 0, code)
		assert.NoFileExists(t, target)
	})
	t.Run("log file: a FIFO is refused at once", func(t *testing.T) {
		dir := t.TempDir()
		require.NoError(t, syscall.Mkfifo(filepath.Join(dir, "sidecar.log"), 0o600))
		code, stderr := serveOnce(t, dir, "--log-file", "sidecar.log")
		assert.NotEqual(t, 0, code)
		assert.Contains(t, stderr, "is not a regular file")
	})
	t.Run("log file: a plain file is appended to", func(t *testing.T) {
		dir := t.TempDir()
		log := filepath.Join(dir, "sidecar.log")
		require.NoError(t, os.WriteFile(log, []byte("before\n"), 0o600))
		code, stderr := serveOnce(t, dir, "--log-file", log)
		assert.Equal(t, 0, code, stderr)
		got, err := os.ReadFile(log)
		require.NoError(t, err)
		assert.True(t, strings.HasPrefix(string(got), "before\n{"), "%q", got)
	})
	for _, dangling := range []bool{false, true} {
		name := "recording: a symlink to a file"
		if dangling {
			name = "recording: a dangling symlink"
		}
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			target := filepath.Join(dir, "victim")
			if !dangling {
				require.NoError(t, os.WriteFile(target, []byte("keep\n"), 0o600))
			}
			require.NoError(t, os.Symlink(target, filepath.Join(dir, "rec.json")))
			code, stderr := serveOnce(t, dir, "--record", "rec.json", "--record-redact")
			assert.Equal(t, 0, code, stderr)
			if dangling {
				assert.NoFileExists(t, target)
			} else {
				got, err := os.ReadFile(target)
				require.NoError(t, err)
				assert.Equal(t, "keep\n", string(got))
			}
			fi, err := os.Lstat(filepath.Join(dir, "rec-2.json"))
			require.NoError(t, err, "the recording goes beside the link")
			assert.True(t, fi.Mode().IsRegular())
		})
	}
}
