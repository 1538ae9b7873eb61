package sessiondb

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hookwire/hookwire/sessions"
)

// forgetState writes a state with two parents and returns its path.
func forgetState(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "hookwire.db")
	h, d := dbHarness(t, path, sessions.Config{})
	h.task("p1", "explorer", "one", "ses_a")
	h.task("p1", "explorer", "two", "ses_b")
	h.task("p2", "explorer", "three", "ses_c")
	h.task("p2", "oracle", "p1 again", "p1") // an entry whose task is p1
	h.s.Frozen().Block(context.Background(), "p1", "m1", func() string { return "block" })
	h.s.Tracked().SetAgent(context.Background(), "p1", "orchestrator")
	h.s.Tracked().SetAgent(context.Background(), "ses_a", "explorer")
	require.NoError(t, d.Close())
	return path
}

func loadState(t *testing.T, path string) *harness {
	t.Helper()
	h, _ := dbHarness(t, path, sessions.Config{})
	return h
}

func TestForget(t *testing.T) {
	tests := []struct {
		name   string
		spec   ForgetSpec
		want   Forgotten
		p1, p2 []string
		agents map[string]string
	}{
		{"all", ForgetSpec{All: true}, Forgotten{Parents: 2, Entries: 4, Sessions: 2}, nil, nil,
			map[string]string{"p1": "", "ses_a": ""}},
		{"a parent, as session.deleted", ForgetSpec{Parent: "p1"}, Forgotten{Parents: 1, Entries: 1, Sessions: 1},
			nil, []string{"exp-1=ses_c three"}, map[string]string{"p1": "", "ses_a": "explorer"}},
		{"an alias under every parent", ForgetSpec{Alias: "exp-1"}, Forgotten{Entries: 2},
			[]string{"exp-2=ses_b two"}, []string{"ora-1=p1 p1 again"}, map[string]string{"p1": "orchestrator"}},
		{"an alias under one parent", ForgetSpec{Parent: "p2", Alias: "exp-1"}, Forgotten{Entries: 1},
			[]string{"exp-2=ses_b two", "exp-1=ses_a one"}, []string{"ora-1=p1 p1 again"}, nil},
		{"an unknown parent", ForgetSpec{Parent: "nope"}, Forgotten{},
			[]string{"exp-2=ses_b two", "exp-1=ses_a one"}, []string{"ora-1=p1 p1 again", "exp-1=ses_c three"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := forgetState(t)
			got, err := Forget(context.Background(), path, tt.spec)
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
			h := loadState(t, path)
			assert.Equal(t, tt.p1, h.aliases("p1"))
			assert.Equal(t, tt.p2, h.aliases("p2"))
			for session, agent := range tt.agents {
				assert.Equal(t, agent, h.s.Tracked().Agent(session), "agent of %s", session)
			}
		})
	}
}

// A forgotten alias is never handed out again: its counter stays.
func TestForgetKeepsCounters(t *testing.T) {
	path := forgetState(t)
	_, err := Forget(context.Background(), path, ForgetSpec{Parent: "p1", Alias: "exp-2"})
	require.NoError(t, err)
	h := loadState(t, path)
	h.n = 100
	h.task("p1", "explorer", "new", "ses_new")
	assert.Equal(t, "exp-3", h.s.Tasks().List("p1")[0].Alias)
}

// A sidecar serving the database sees what forget removed at its next
// request; forget needs nobody stopped.
func TestForgetWhileServed(t *testing.T) {
	path := forgetState(t)
	h, _ := dbHarness(t, path, sessions.Config{})
	act, _ := h.resolve("p2", "explorer", "exp-1")
	require.Equal(t, sessions.TaskIDReplace, act)
	got, err := Forget(context.Background(), path, ForgetSpec{Alias: "exp-1"})
	require.NoError(t, err)
	assert.Equal(t, Forgotten{Entries: 2}, got)
	act, _ = h.resolve("p2", "explorer", "exp-1")
	assert.Equal(t, sessions.TaskIDRemove, act, "the serving store read the change")
	_, err = Forget(context.Background(), path, ForgetSpec{All: true})
	require.NoError(t, err)
	assert.Empty(t, h.s.Tasks().List(""))
}

func TestForgetCorruptFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "hookwire.db")
	require.NoError(t, os.WriteFile(path, []byte("not a database at all, but long enough to look like one"), 0o600))
	_, err := Forget(context.Background(), path, ForgetSpec{Parent: "p1"})
	require.ErrorContains(t, err, "moved to "+path+".corrupt-")
	_, err = Forget(context.Background(), path, ForgetSpec{All: true})
	require.NoError(t, err)
	h := loadState(t, path)
	assert.Equal(t, sessions.Stats{}, h.s.Stats())
}

func TestForgetMissingFileAndBadSpecs(t *testing.T) {
	path := filepath.Join(t.TempDir(), "none", "hookwire.db")
	got, err := Forget(context.Background(), path, ForgetSpec{All: true})
	require.NoError(t, err)
	assert.Equal(t, Forgotten{}, got)
	_, err = Forget(context.Background(), path, ForgetSpec{})
	assert.Error(t, err)
	_, err = Forget(context.Background(), path, ForgetSpec{All: true, Alias: "exp-1"})
	assert.Error(t, err)
}

// TestHasState: Forget (and `hookwire forget`) finds state to change where
// the database is, or where a release's JSON state file lies beside it to
// be imported; a JSON file that is not regular, or beside a path that does
// not end in .db, is none.
func TestHasState(t *testing.T) {
	tests := []struct {
		name  string
		files map[string]string // name in the directory → contents ("" : a directory)
		path  string
		want  bool
	}{
		{"nothing", nil, "hookwire.db", false},
		{"the database", map[string]string{"hookwire.db": "x"}, "hookwire.db", true},
		{"a legacy file beside it", map[string]string{"hookwire.json": "{}"}, "hookwire.db", true},
		{"a legacy name that is a directory", map[string]string{"hookwire.json": ""}, "hookwire.db", false},
		{"no .db suffix, no legacy file", map[string]string{"state.json": "{}"}, "state", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			for name, data := range tt.files {
				if data == "" {
					require.NoError(t, os.Mkdir(filepath.Join(dir, name), 0o700))
					continue
				}
				require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(data), 0o600))
			}
			assert.Equal(t, tt.want, HasState(filepath.Join(dir, tt.path)))
		})
	}
}
