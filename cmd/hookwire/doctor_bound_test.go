//go:build unix

package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// doctor keeps its bound when a command it runs leaves a child holding
// stdout open (issue 39, item 9): before, it copied the pipe to its end
// before Wait, so a wrapper's child held it for as long as it lived. The
// child here blocks reading a FIFO that only the test releases, so without
// the bound doctor never returns; the test's own wait is a hang detector,
// not a measure of speed.
func TestDoctorBoundIncludesPipes(t *testing.T) {
	tests := []struct {
		name    string
		script  func(cat, fifo string) (opencode, hookwire string)
		want    string
		timeout time.Duration
	}{
		{name: "opencode prints its version at once, its child keeps stdout",
			script: func(cat, fifo string) (string, string) {
				return "#!/bin/sh\necho 1.15.13\n" + cat + " " + fifo + " &\nexit 0\n", ""
			},
			want: `^ok +opencode +\S+/bin/opencode: OpenCode 1\.15\.13`},
		{name: "opencode prints nothing, its child keeps stdout", timeout: 500 * time.Millisecond,
			script: func(cat, fifo string) (string, string) {
				return "#!/bin/sh\n" + cat + " " + fifo + " &\nwait\n", ""
			},
			want: `^warn +opencode +\S+/bin/opencode did not report a version \(.*it printed none within 500ms\)`},
		{name: "hookwire answers version, its child keeps stdout",
			script: func(cat, fifo string) (string, string) {
				return "", "#!/bin/sh\necho 'hookwire v0.3.0 go1.26.0 linux/amd64'\n" + cat + " " + fifo + " &\nexit 0\n"
			},
			want: `^ok +sidecar +.*hookwire v0\.3\.0`},
	}
	cat, err := exec.LookPath("cat") // doctor's PATH holds only the test's bin
	require.NoError(t, err)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newDoctorEnv(t)
			fifo := filepath.Join(e.root, "hold")
			require.NoError(t, syscall.Mkfifo(fifo, 0o600))
			// Opened read-write it never blocks; closed, it gives the
			// children EOF, so none outlives the test.
			release := func() {
				if f, err := os.OpenFile(fifo, os.O_RDWR, 0); err == nil {
					f.Close()
				}
			}
			t.Cleanup(release)
			if tt.timeout != 0 {
				old := versionTimeout
				versionTimeout = tt.timeout
				t.Cleanup(func() { versionTimeout = old })
			}
			oc, hw := tt.script(cat, fifo)
			if oc != "" {
				e.write(filepath.Join(e.bin, "opencode"), oc, 0o755)
			}
			if hw != "" {
				e.write(filepath.Join(e.bin, "hookwire"), hw, 0o755)
			} else {
				e.sidecar("v0.3.0")
			}
			e.globalJSON(`{"plugin":["hookwire-opencode"]}`)
			e.installed("hookwire-opencode@latest", "0.3.0") // without its platform package: PATH's hookwire runs
			r := doctorWithin(t, e.project, 2*time.Minute, release, "doctor returned only once the child let go of its stdout")
			assert.Empty(t, r.stderr)
			assert.Regexp(t, regexp.MustCompile(`(?m)`+tt.want), r.stdout)
		})
	}
}

// doctorResult is what a doctor run printed and returned.
type doctorResult struct {
	code           int
	stdout, stderr string
}

// doctorWithin runs doctor on project and fails the test when it has not
// finished within limit: release then lets go of whatever held it (so
// a regression fails here instead of hanging the suite), and the failure
// says why with what doctor printed.
func doctorWithin(t *testing.T, project string, limit time.Duration, release func(), why string) doctorResult {
	t.Helper()
	done := make(chan doctorResult, 1)
	go func() {
		code, stdout, stderr := runCmd("doctor", "--project", project)
		done <- doctorResult{code, stdout, stderr}
	}()
	select {
	case r := <-done:
		return r
	case <-time.After(limit):
		release()
		r := <-done
		t.Fatalf("%s:\n%s", why, r.stdout)
		return r
	}
}
