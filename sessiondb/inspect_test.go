package sessiondb

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hookwire/hookwire/sessions"
)

// writeState writes h's store to a new state file and returns its path.
func writeState(t *testing.T, h *harness) string {
	t.Helper()
	data, err := h.s.Snapshot()
	require.NoError(t, err)
	path := filepath.Join(t.TempDir(), "hookwire.json")
	require.NoError(t, os.WriteFile(path, data, 0o600))
	return path
}

func TestReadState(t *testing.T) {
	small := newHarness(t, sessions.Config{})
	small.task("p1", "explorer", "one", "ses_a")
	small.task("p1", "oracle", "two", "ses_o")
	small.task("p2", "explorer", "three", "ses_c")
	small.task("p1", "explorer", "four", "ses_d")
	small.s.Frozen().Block(context.Background(), "p2", "m1", func() string { return "block" })
	small.s.Frozen().Block(context.Background(), "p2", "m2", func() string { return "" })
	small.s.Tracked().SetAgent(context.Background(), "p1", "orchestrator")

	// Written by a sidecar configured to keep 5 per agent: a reader with
	// the default bounds (2) would drop three.
	wide := newHarness(t, sessions.Config{MaxSessionsPerAgent: 5})
	for _, id := range []string{"ses_1", "ses_2", "ses_3", "ses_4", "ses_5"} {
		wide.task("p", "explorer", id, id)
	}

	dir := t.TempDir()
	empty := filepath.Join(dir, "empty.json")
	require.NoError(t, os.WriteFile(empty, nil, 0o600))
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, []byte(content), 0o600))
		return p
	}

	tests := []struct {
		name    string
		path    string
		want    []string // "parent agent alias taskId label", in the listed order
		parents int
		frozen  int
		tracked int
		err     string // substring of the error; "" none
	}{
		{
			name: "the most recently active parent first, newest entry first",
			path: writeState(t, small),
			want: []string{
				"p2 explorer exp-1 ses_c three", // its frozen blocks came last
				"p1 explorer exp-2 ses_d four",
				"p1 oracle ora-1 ses_o two",
				"p1 explorer exp-1 ses_a one",
			},
			parents: 2, frozen: 2, tracked: 1,
		},
		{
			name:    "no bound drops what the file holds",
			path:    writeState(t, wide),
			want:    []string{"p explorer exp-5 ses_5 ses_5", "p explorer exp-4 ses_4 ses_4", "p explorer exp-3 ses_3 ses_3", "p explorer exp-2 ses_2 ses_2", "p explorer exp-1 ses_1 ses_1"},
			parents: 1,
		},
		{name: "an empty file is an empty state", path: empty},
		{name: "a minimal document", path: write("minimal.json", `{"version":1}`)},
		{name: "not JSON", path: write("garbage.json", "{not json"), err: "decoding session state"},
		{name: "an unknown version", path: write("v9.json", `{"version":9,"parents":[]}`), err: "unknown format version 9"},
		{name: "a duplicate alias", path: write("dup.json", `{"version":1,"parents":[{"id":"p","entries":[
			{"agent":"explorer","alias":"exp-1","taskId":"ses_a","label":"","lastUse":"2026-01-01T00:00:00Z","use":2},
			{"agent":"explorer","alias":"exp-1","taskId":"ses_b","label":"","lastUse":"2026-01-01T00:00:00Z","use":1}]}]}`),
			err: `alias "exp-1" listed twice`},
		{name: "a directory", path: dir, err: "not a regular file"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ReadState(tt.path)
			if tt.err != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tt.err)
				return
			}
			require.NoError(t, err)
			var lines []string
			for _, e := range got.Sessions {
				lines = append(lines, e.Parent+" "+e.Agent+" "+e.Alias+" "+e.TaskID+" "+e.Label)
				assert.Equal(t, epoch, e.LastUse)
			}
			assert.Equal(t, tt.want, lines)
			assert.Equal(t, tt.parents, got.Parents, "parents")
			assert.Equal(t, tt.frozen, got.FrozenBlocks, "frozen blocks")
			assert.Equal(t, tt.tracked, got.TrackedSessions, "tracked sessions")
		})
	}

	_, err := ReadState(filepath.Join(dir, "missing.json"))
	assert.ErrorIs(t, err, fs.ErrNotExist)
}

// ReadState reads a database while a store writes it, and sees each
// commit.
func TestReadStateWhileServed(t *testing.T) {
	path := filepath.Join(t.TempDir(), "hookwire.db")
	h, _ := dbHarness(t, path, sessions.Config{})
	h.task("p1", "explorer", "one", "ses_a")
	got, err := ReadState(path)
	require.NoError(t, err)
	require.Len(t, got.Sessions, 1)
	assert.Equal(t, "exp-1", got.Sessions[0].Alias)
	h.task("p2", "explorer", "two", "ses_b")
	h.s.Frozen().Block(context.Background(), "p2", "m1", func() string { return "b" })
	got, err = ReadState(path)
	require.NoError(t, err)
	assert.Len(t, got.Sessions, 2)
	assert.Equal(t, "p2", got.Sessions[0].Parent, "the most recently written parent first")
	assert.Equal(t, 1, got.FrozenBlocks)
	h.task("p1", "explorer", "three", "ses_c")
	got, err = ReadState(path)
	require.NoError(t, err)
	assert.Len(t, got.Sessions, 3)
}

func TestProjectRoot(t *testing.T) {
	root := t.TempDir()
	repo := filepath.Join(root, "repo")
	sub := filepath.Join(repo, "a", "b")
	require.NoError(t, os.MkdirAll(filepath.Join(repo, ".git"), 0o700))
	require.NoError(t, os.MkdirAll(sub, 0o700))
	for _, tt := range []struct{ dir, want string }{{sub, repo}, {repo, repo}, {root, root}} {
		got, err := ProjectRoot(tt.dir)
		require.NoError(t, err)
		assert.Equal(t, tt.want, got, tt.dir)
	}
}
