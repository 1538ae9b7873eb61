package sessiondb

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
)

// rerunAsNobody runs the calling test again, alone, as the user nobody
// when the suite runs as root (CI does), who writes read-only files
// regardless: the test's checks of a store that cannot be written then run
// as a user who cannot write. It returns true in the parent, whose verdict
// is the child's; false when the test runs as a user already (then the
// test goes on itself). The test binary is copied where nobody can run it.
func rerunAsNobody(t *testing.T) bool {
	t.Helper()
	if os.Geteuid() != 0 {
		return false
	}
	const nobody = 65534
	dir, err := os.MkdirTemp("", "hookwire-as-nobody-*")
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(dir) })
	require.NoError(t, os.Chmod(dir, 0o777|os.ModeSticky))
	self, err := os.Executable()
	require.NoError(t, err)
	data, err := os.ReadFile(self)
	require.NoError(t, err)
	bin := filepath.Join(dir, "sessiondb.test")
	require.NoError(t, os.WriteFile(bin, data, 0o755))

	cmd := exec.Command(bin, "-test.run=^"+regexp.QuoteMeta(t.Name())+"$", "-test.count=1", "-test.v")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "HOME="+dir, "TMPDIR="+dir)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: nobody, Gid: nobody}}
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "as nobody:\n%s", out)
	require.Contains(t, string(out), "--- PASS: "+t.Name(), "as nobody:\n%s", out)
	require.NotContains(t, string(out), "--- SKIP", "as nobody:\n%s", out)
	t.Logf("ran as nobody (uid %d):\n%s", nobody, strings.TrimSpace(string(out)))
	return true
}
