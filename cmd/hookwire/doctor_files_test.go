//go:build unix

package main

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// doctor reads every file with the sidecar's checks (issue 49 item 4): a
// FIFO where a config file belongs is named, not read, so doctor cannot
// wait forever for its writer (os.ReadFile did); a tui.json that is a
// directory or a link loop is named in a warning instead of skipped. The
// FIFOs are real; the test's wait is a hang detector: when doctor hangs,
// the FIFOs are opened to let it go and the test fails.
func TestDoctorReadsOnlyRegularFiles(t *testing.T) {
	fifo := func(t *testing.T, path string) {
		require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o700))
		require.NoError(t, syscall.Mkfifo(path, 0o600))
	}
	tests := []struct {
		name  string
		setup func(t *testing.T, e *doctorEnv) []string // the FIFOs made
		code  int
		want  []string
	}{
		{name: "the project's tui.json is a FIFO",
			setup: func(t *testing.T, e *doctorEnv) []string {
				e.globalJSON(`{"plugin":["hookwire-opencode"]}`)
				p := filepath.Join(e.project, "tui.json")
				fifo(t, p)
				return []string{p}
			},
			want: []string{`^warn +tui +.*/proj/tui\.json: is a named pipe \(FIFO\), not a regular file; doctor does not read it\. Fix: correct it`}},
		{name: "the global tui.json is a FIFO",
			setup: func(t *testing.T, e *doctorEnv) []string {
				e.globalJSON(`{"plugin":["hookwire-opencode"]}`)
				p := filepath.Join(e.globalConfig, "tui.json")
				fifo(t, p)
				return []string{p}
			},
			want: []string{`^warn +tui +.*/config/opencode/tui\.json: is a named pipe \(FIFO\), not a regular file; doctor does not read it\.`}},
		{name: ".opencode/opencode.json is a FIFO", code: 1,
			setup: func(t *testing.T, e *doctorEnv) []string {
				p := filepath.Join(e.project, ".opencode", "opencode.json")
				fifo(t, p)
				return []string{p}
			},
			want: []string{`^FAIL +opencode config +.*/proj/\.opencode/opencode\.json: is a named pipe \(FIFO\), not a regular file; doctor does not read it\. Fix: correct it: OpenCode does not start with a config it cannot read\.$`}},
		{name: "the package.json above a file:// plugin is a FIFO",
			setup: func(t *testing.T, e *doctorEnv) []string {
				dir := filepath.Join(e.root, "hookwire-shim")
				url := "file://" + e.write(filepath.Join(dir, "dist", "index.js"), "export default {}\n", 0o600)
				e.globalJSON(`{"plugin":["` + url + `"]}`)
				p := filepath.Join(dir, "package.json")
				fifo(t, p)
				return []string{p}
			},
			want: []string{`^- +opencode config +.*/config/opencode/opencode\.json: does not load hookwire\.$`}},
		{name: "a tui.json that is a directory",
			setup: func(t *testing.T, e *doctorEnv) []string {
				e.globalJSON(`{"plugin":["hookwire-opencode"]}`)
				require.NoError(t, os.MkdirAll(filepath.Join(e.project, ".opencode", "tui.json"), 0o700))
				return nil
			},
			want: []string{`^warn +tui +.*/proj/\.opencode/tui\.json: is a directory, not a regular file; doctor does not read it\.`}},
		{name: "a tui.json that is a symbolic link loop",
			setup: func(t *testing.T, e *doctorEnv) []string {
				e.globalJSON(`{"plugin":["hookwire-opencode"]}`)
				p := filepath.Join(e.globalConfig, "tui.json")
				require.NoError(t, os.Symlink(p, p))
				return nil
			},
			want: []string{`^warn +tui +.*/config/opencode/tui\.json: is a symbolic link that cannot be followed \(a loop, or too many levels of symbolic links\)\.`}},
		{name: "a file named .opencode holds no config: nothing said",
			setup: func(t *testing.T, e *doctorEnv) []string {
				e.globalJSON(`{"plugin":["hookwire-opencode"]}`)
				e.write(filepath.Join(e.project, ".opencode"), "not a directory", 0o600)
				return nil
			},
			want: []string{`^- +tui +the sidebar section is off`, `^0 failures, `}},
		{name: "a tui.json linked to a regular file is read",
			setup: func(t *testing.T, e *doctorEnv) []string {
				e.globalJSON(`{"plugin":["hookwire-opencode"]}`)
				real := e.write(filepath.Join(e.root, "dotfiles", "tui.json"), `{"plugin":["hookwire-opencode"]}`, 0o600)
				require.NoError(t, os.Symlink(real, filepath.Join(e.globalConfig, "tui.json")))
				return nil
			},
			want: []string{`^ok +tui +the sidebar section is on: .*/config/opencode/tui\.json loads hookwire-opencode\.$`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newDoctorEnv(t)
			fifos := tt.setup(t, e)
			// Opened read-write a FIFO's open never blocks; closed, it
			// gives a reader stuck on it EOF.
			release := func() {
				for _, p := range fifos {
					if f, err := os.OpenFile(p, os.O_RDWR, 0); err == nil {
						f.Close()
					}
				}
			}
			r := doctorWithin(t, e.project, 20*time.Second, release, "doctor finished only once its FIFOs were opened")
			assert.Empty(t, r.stderr)
			assert.Equal(t, tt.code, r.code, r.stdout)
			assertReport(t, r.stdout, tt.want, nil)
		})
	}
}

// readRegularFile reads at most its limit and says the size of a file
// larger than that.
func TestReadRegularFileBound(t *testing.T) {
	p := filepath.Join(t.TempDir(), "big.json")
	require.NoError(t, os.WriteFile(p, []byte(strings.Repeat(" ", 3<<10)), 0o600))
	_, err := readRegularFile(p, 1<<10)
	require.EqualError(t, err, "is 3.0 KiB, more than the 1.0 KiB doctor reads of a file")
	data, err := readRegularFile(p, 3<<10)
	require.NoError(t, err)
	assert.Len(t, data, 3<<10)
}

// doctor prints what a config says made safe (issue 51, "Safe text"): a
// project's config (a cloned repository's) may name the plugin with a
// version holding terminal escapes and a bidi override; each finding
// that quotes it does so without them.
func TestDoctorPrintsSafeText(t *testing.T) {
	e := newDoctorEnv(t)
	e.write(filepath.Join(e.project, ".opencode", "opencode.json"),
		`{"plugin":["hookwire-opencode@1.0.0\u001b]52;c;aGk=\u0007\u202e\u001b[2J"]}`, 0o600)
	_, stdout, stderr := runCmd("doctor", "--project", e.project)
	assert.Empty(t, stderr)
	for _, bad := range []string{"\x1b", "\a", "\u202e", "52;c"} {
		assert.NotContains(t, stdout, bad)
	}
	assertReport(t, stdout, []string{`^ok +opencode config +.*/proj/\.opencode/opencode\.json: loads hookwire-opencode@1\.0\.0, no options\.$`}, nil)
}
