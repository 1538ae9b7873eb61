//go:build linux

package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A state directory the sidecar cannot write: doctor warns, with where the
// user sees it and the fix (issue 42 item 6: it said ok and 0 failures,
// while every OpenCode start said the state was read-only). As root (CI)
// permission bits do not bind, so the directory is a real read-only mount;
// as a user it is made unwritable.
func TestDoctorReadOnlyStateDirectory(t *testing.T) {
	mount, _ := exec.LookPath("mount") // before the test's own PATH
	umount, _ := exec.LookPath("umount")
	for _, tt := range []struct {
		name string
		want string
	}{
		{"the project's default file, none yet", `.*/hookwire/proj-[0-9a-f]+\.db \(the project's default\): its directory .*/hookwire cannot be written`},
		{"a state file given in args, there already", `.*/hookwire/mine\.db \(the plugin option args in .*\): .*/hookwire/mine\.db cannot be written`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			e := newDoctorEnv(t)
			dir := filepath.Join(e.stateHome, "hookwire")
			require.NoError(t, os.MkdirAll(dir, 0o700))
			if strings.Contains(tt.name, "args") {
				file := e.write(filepath.Join(dir, "mine.db"), "", 0o600)
				e.globalJSON(`{"plugin":[["hookwire-opencode",{"args":["--state","` + file + `"]}]]}`)
			} else {
				e.globalJSON(`{"plugin":["hookwire-opencode"]}`)
			}
			if os.Geteuid() == 0 {
				// A read-only bind mount of the directory over itself.
				if mount == "" {
					t.Skip("no mount command")
				}
				if out, err := exec.Command(mount, "--bind", dir, dir).CombinedOutput(); err != nil {
					t.Skipf("cannot make a bind mount here: %v %s", err, out)
				}
				t.Cleanup(func() { exec.Command(umount, dir).Run() })
				out, err := exec.Command(mount, "-o", "remount,bind,ro", dir).CombinedOutput()
				require.NoError(t, err, "%s", out)
			} else {
				require.NoError(t, os.Chmod(dir, 0o500))
				t.Cleanup(func() { os.Chmod(dir, 0o700) })
			}
			_, stdout, _ := runCmd("doctor", "--project", e.project)
			assert.Regexp(t, regexp.MustCompile(`(?m)^warn +state file +`+tt.want+` \((a read-only file system|permission denied)\): the sidecar opens it read-only; .* Fix: make it writable by you, or give the plugin option state a path you can write\.$`), stdout)
			assert.NotRegexp(t, regexp.MustCompile(`(?m)^ok +state file`), stdout)
		})
	}
}
