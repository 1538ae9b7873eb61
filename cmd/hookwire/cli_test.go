package main

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hookwire/hookwire/sessiondb"
)

// runCmd runs the CLI in process.
func runCmd(args ...string) (code int, stdout, stderr string) {
	var out, errb bytes.Buffer
	code = run(args, strings.NewReader(""), &out, &errb)
	return code, out.String(), errb.String()
}

func TestHelpGoesToStdout(t *testing.T) {
	tests := []struct {
		args []string
		want string // in stdout
	}{
		{[]string{"--help"}, "hookwire sessions [--project DIR | --state FILE] [--json]"},
		{[]string{"-h"}, "hookwire doctor [--project DIR]"},
		{[]string{"help"}, "hookwire version"},
		{[]string{"serve", "--help"}, "-project DIR"},
		{[]string{"serve", "-h"}, "usage: hookwire [serve]"},
		{[]string{"sessions", "-h"}, "-json"},
		{[]string{"doctor", "--help"}, "usage: hookwire doctor [--project DIR]"},
		{[]string{"forget", "-h"}, "-alias"},
		{[]string{"replay", "-h"}, "-update"},
		{[]string{"demo", "-h"}, "usage: hookwire demo"},
		{[]string{"observe", "-h"}, "-log-file"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			code, stdout, stderr := runCmd(tt.args...)
			assert.Equal(t, 0, code)
			assert.Contains(t, stdout, tt.want)
			assert.Empty(t, stderr)
		})
	}
}

// TestHelpPlaceholders: each flag's value in -h is a placeholder (FILE,
// DIR) or a type, never words that flag took from the usage text's first
// backquoted phrase (serve printed "-record hookwire replay").
func TestHelpPlaceholders(t *testing.T) {
	flagLine := regexp.MustCompile(`^  -([a-z-]+)(?: (.+))?$`)
	placeholder := regexp.MustCompile(`^([A-Z][A-Z0-9_]*|string|int|uint|float|duration|value)$`)
	for _, cmd := range []string{"serve", "observe", "sessions", "doctor", "forget", "replay"} {
		t.Run(cmd, func(t *testing.T) {
			_, stdout, _ := runCmd(cmd, "-h")
			flags := 0
			for _, line := range strings.Split(stdout, "\n") {
				m := flagLine.FindStringSubmatch(line)
				if m == nil {
					continue
				}
				flags++
				if m[2] != "" {
					assert.Regexp(t, placeholder, m[2], "-%s's placeholder in %q", m[1], line)
				}
			}
			assert.Positive(t, flags, "no flag lines in %q", stdout)
		})
	}
	_, stdout, _ := runCmd("serve", "-h")
	assert.Contains(t, stdout, "  -record FILE\n")
}

func TestUsageErrors(t *testing.T) {
	tests := []struct {
		args []string
		want string // in stderr
	}{
		{[]string{"frobnicate"}, `unknown command "frobnicate"`},
		{[]string{"serve", "--project", "a", "--state", "b"}, "give --project or --state, not both"},
		{[]string{"sessions", "--project", "a", "--state", "b"}, "give --project or --state, not both"},
		{[]string{"forget", "--all", "--project", "a", "--state", "b"}, "give --project or --state, not both"},
		{[]string{"sessions", "--bogus"}, "flag provided but not defined: -bogus"},
		{[]string{"sessions", "extra"}, `unexpected argument "extra"`},
		{[]string{"doctor", "--project", "/does/not/exist"}, "no such file or directory"},
		{[]string{"serve", "--framing", "smoke"}, "hookwire: --framing: "},
		{[]string{"serve", "--log-level", "loud"}, `hookwire: --log-level must be trace, debug, info, warn or error, not "loud"`},
		{[]string{"observe", "--framing", "smoke"}, "hookwire observe: --framing: "},
		{[]string{"observe", "--log-level", ""}, `hookwire observe: --log-level must be trace, debug, info, warn or error, not ""`},
		{[]string{"observe", "--project", "a", "--state", "b"}, "give --project or --state, not both"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			code, stdout, stderr := runCmd(tt.args...)
			assert.Equal(t, 2, code)
			assert.Empty(t, stdout)
			assert.Contains(t, stderr, tt.want)
		})
	}
}

// serve --project keeps the store in sessiondb.ProjectStatePath(DIR): an
// alias made by one process is in that file for the next.
func TestServeProject(t *testing.T) {
	root := t.TempDir()
	t.Setenv("XDG_STATE_HOME", filepath.Join(root, "state"))
	project := filepath.Join(root, "proj")
	sub := filepath.Join(project, "src")
	require.NoError(t, mkdirs(filepath.Join(project, ".git"), sub))
	want, err := sessiondb.ProjectStatePath(project)
	require.NoError(t, err)

	p := start(t, false, "--project", sub) // a subdirectory finds the same file
	p.initialize()
	p.orchestrate("ses_a")
	p.createTask("ses_a", "call_1", "explorer", "ses_child")
	p.stdin.Close()
	require.Equal(t, 0, p.waitExit())

	got, err := sessiondb.ReadState(want)
	require.NoError(t, err)
	require.Len(t, got.Sessions, 1)
	assert.Equal(t, "ses_child", got.Sessions[0].TaskID)
}

func mkdirs(dirs ...string) error {
	for _, d := range dirs {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return err
		}
	}
	return nil
}
