package sessions

import (
	"os"
	"os/exec"
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
			assert.Equal(t, stateKey(tt.project)+".json", filepath.Base(got))
			if want, ok := shimStatePath(t, tt.project); ok {
				assert.Equal(t, want, got, "the shim's defaultStatePath")
			}
		})
	}
	assert.Regexp(t, `^My_Repo_-[0-9a-f]{16}$`, stateKey(repo))
	assert.Regexp(t, `^hidden\.dir-[0-9a-f]{16}$`, stateKey(plain))
	assert.Regexp(t, `^a{40}-[0-9a-f]{16}$`, stateKey(filepath.Join(root, strings.Repeat("a", 50))))
	assert.Regexp(t, `^project-[0-9a-f]{16}$`, stateKey(filepath.Join(root, "...")))
}

// shimStatePath runs the built shim's defaultStatePath for project with
// this process's environment; !ok when node or the built shim is missing.
func shimStatePath(t *testing.T, project string) (string, bool) {
	t.Helper()
	_, file, _, _ := runtime.Caller(0)
	options := filepath.Join(filepath.Dir(file), "..", "shim", "dist", "options.js")
	node, err := exec.LookPath("node")
	if err != nil {
		t.Log("node not found: not compared with the shim")
		return "", false
	}
	if _, err := os.Stat(options); err != nil {
		t.Log("shim not built: not compared with the shim")
		return "", false
	}
	script := `const m = await import(process.argv[1]); process.stdout.write(m.defaultStatePath(process.env, process.argv[2]));`
	out, err := exec.Command(node, "--input-type=module", "-e", script, "file://"+filepath.ToSlash(options), project).Output()
	require.NoError(t, err)
	return string(out), true
}
