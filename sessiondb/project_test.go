package sessiondb

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestProjectStatePath(t *testing.T) {
	root := t.TempDir()
	repo := filepath.Join(root, "My Repo!")
	sub := filepath.Join(repo, "src", "deep")
	plain := filepath.Join(root, ".hidden.dir")
	require.NoError(t, os.MkdirAll(filepath.Join(repo, ".git"), 0o700))
	require.NoError(t, os.MkdirAll(sub, 0o700))
	require.NoError(t, os.MkdirAll(plain, 0o700))
	stateHome := filepath.Join(root, "state")
	t.Setenv("XDG_STATE_HOME", stateHome)

	tests := []struct {
		name    string
		dir     string
		project string // the directory that keys the file
	}{
		{"a repository's top level", repo, repo},
		{"a subdirectory of a repository keys on the top level", sub, repo},
		{"outside git the directory itself", plain, plain},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ProjectStatePath(tt.dir)
			require.NoError(t, err)
			assert.Equal(t, filepath.Join(stateHome, "hookwire"), filepath.Dir(got))
			assert.Equal(t, stateKey(tt.project)+".db", filepath.Base(got))
		})
	}
	assert.Regexp(t, `^My_Repo_-[0-9a-f]{16}$`, stateKey(repo))
	assert.Equal(t, filepath.Join(root, "state", "hookwire"), filepath.Dir(mustPath(t, root)))
	assert.Regexp(t, `^hidden\.dir-[0-9a-f]{16}$`, stateKey(plain))
	assert.Regexp(t, `^a{40}-[0-9a-f]{16}$`, stateKey(filepath.Join(root, strings.Repeat("a", 50))))
	assert.Regexp(t, `^project-[0-9a-f]{16}$`, stateKey(filepath.Join(root, "...")))
}

func mustPath(t *testing.T, dir string) string {
	t.Helper()
	p, err := ProjectStatePath(dir)
	require.NoError(t, err)
	return p
}

// The file names the shim computed itself (shim/src/options.ts stateKey,
// before it passed --project to the sidecar), pinned: existing state files
// must keep their names. The hashes are SHA-256 prefixes of the paths,
// computed outside Go.
func TestStateKeyMatchesTheShimsRule(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("unix paths")
	}
	tests := []struct{ dir, want string }{
		{"/home/u/My Repo!", "My_Repo_-1b2948411153d53d"},
		{"/srv/.hidden.dir", "hidden.dir-70936a8fbbf07798"},
		{"/", "project-8a5edab282632443"},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, stateKey(tt.dir), tt.dir)
	}
}
