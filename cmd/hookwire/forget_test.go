package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hookwire/hookwire/sessiondb"
)

// TestForgetCommand: forget says what it removed in correct plurals, and
// asking by name for something nothing holds (a typo in an alias or a
// parent id) is an error that changes nothing, not a success.
func TestForgetCommand(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		missing bool // no state database at all
		code    int
		stdout  string
		stderr  string
		entries int // entries left (-1: not checked)
	}{
		{name: "an alias under every parent", args: []string{"--alias", "exp-1"},
			stdout: ": forgot 0 parent sessions, 2 entries, 0 session agents\n", entries: 2},
		{name: "an alias under one parent", args: []string{"--alias", "exp-2", "--parent", "ses_p1"},
			stdout: ": forgot 0 parent sessions, 1 entry, 0 session agents\n", entries: 3},
		{name: "one parent", args: []string{"--parent", "ses_p2"},
			stdout: ": forgot 1 parent session, 0 entries, 1 session agent\n", entries: 3},
		{name: "everything", args: []string{"--all"},
			stdout: ": forgot everything: 2 parent sessions, 4 entries, 2 session agents, 2 prompt-cache records, 0 model health records, 0 subagent records\n", entries: 0},
		{name: "an alias nobody holds", args: []string{"--alias", "exp-9"}, code: 1,
			stderr: `nothing holds the alias "exp-9" (under any parent session); nothing forgotten`, entries: 4},
		{name: "an alias the parent does not hold", args: []string{"--alias", "ora-1", "--parent", "ses_p2"}, code: 1,
			stderr: `nothing holds the alias "ora-1" under the parent session ses_p2; nothing forgotten`, entries: 4},
		{name: "a parent nobody knows", args: []string{"--parent", "ses_nope"}, code: 1,
			stderr: "nothing holds the parent session ses_nope; nothing forgotten", entries: 4},
		{name: "no database: an alias", args: []string{"--alias", "exp-1"}, missing: true, code: 1,
			stderr: `no state database, so nothing holds the alias "exp-1"`, entries: -1},
		{name: "no database: --all has nothing to do", args: []string{"--all"}, missing: true,
			stdout: ": no state database, nothing to forget\n", entries: -1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			state := filepath.Join(t.TempDir(), "state.json")
			if !tt.missing {
				require.NoError(t, os.WriteFile(state, []byte(twoParentState), 0o600))
			}
			code, stdout, stderr := runCmd(append([]string{"forget", "--state", state}, tt.args...)...)
			assert.Equal(t, tt.code, code, "stdout %q stderr %q", stdout, stderr)
			if tt.stdout != "" {
				assert.Equal(t, state+tt.stdout, stdout)
			} else {
				assert.Empty(t, stdout)
			}
			if tt.stderr != "" {
				assert.Contains(t, stderr, tt.stderr)
			} else {
				assert.Empty(t, stderr)
			}
			if tt.entries >= 0 {
				got, err := sessiondb.ReadState(state)
				require.NoError(t, err)
				assert.Len(t, got.Sessions, tt.entries)
			}
			if tt.missing {
				assert.NoFileExists(t, state, "forget creates no database")
			}
		})
	}
}
