package sessiondb

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"

	"github.com/rs/zerolog"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hookwire/hookwire/core"

	"github.com/hookwire/hookwire/sessions"
)

// Tests of what a user without write permission on the state gets, run as
// such a user even when the suite runs as root (rerunAsNobody). They use
// the store's exported methods only.

// doTask runs one complete task call, as the handlers do, that returns id.
func doTask(t *testing.T, s *sessions.Store, callID, parent, agent, label, id string) {
	t.Helper()
	act, _ := s.Tasks().BeginCall(context.Background(), callID, parent, agent, label, "")
	require.Equal(t, sessions.TaskIDLeave, act)
	s.Tasks().CompleteCall(context.Background(), callID, core.TaskOutcome{TaskID: id})
}

// aliasesOf lists parent's entries as "alias taskID".
func aliasesOf(entries []sessions.Entry) []string {
	out := []string{}
	for _, e := range entries {
		out = append(out, e.Alias+" "+e.TaskID)
	}
	return out
}

// lockedBuffer is a log's sink, safe for the store's goroutines.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

// readOnlyState makes a state database at dir/state.db holding one alias
// (p1: exp-1 → ses_a), then takes write permission on it and its
// directory away. It returns the database's path.
func readOnlyState(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "state")
	path := filepath.Join(dir, "state.db")
	s := sessions.New(sessions.Config{})
	d, err := OpenDatabase(context.Background(), path, s, zerolog.Nop())
	require.NoError(t, err)
	require.Equal(t, sessions.StatePersistent, d.State().Mode, d.State().Reason)
	doTask(t, s, "call_0", "p1", "explorer", "one", "ses_a")
	require.NoError(t, d.Close())
	require.NoError(t, os.Chmod(path, 0o400))
	require.NoError(t, os.Chmod(dir, 0o500))
	t.Cleanup(func() { os.Chmod(dir, 0o700) })
	return path
}

// A database the user cannot write is served read-only: what it holds
// resolves, and what this process learns (new parents' aliases, agents)
// lives in its memory for as long as it runs, without a failed write each
// time.
func TestReadOnlyDatabaseKeepsWhatIsNewInMemory(t *testing.T) {
	if rerunAsNobody(t) {
		return
	}
	path := readOnlyState(t)
	s := sessions.New(sessions.Config{})
	var logs lockedBuffer
	d, err := OpenDatabase(context.Background(), path, s, zerolog.New(&logs))
	require.NoError(t, err)
	t.Cleanup(func() { d.Close() })
	require.Equal(t, sessions.StateReadOnly, d.State().Mode)

	doTask(t, s, "call_1", "p1", "explorer", "two", "ses_b")
	for i := range 3 {
		doTask(t, s, "call_p"+strconv.Itoa(i), "p"+strconv.Itoa(i+2), "oracle", "new", "ses_n"+strconv.Itoa(i))
	}
	s.Tracked().SetAgent(context.Background(), "ses_x", "oracle")

	assert.Equal(t, []string{"exp-2 ses_b", "exp-1 ses_a"}, aliasesOf(s.Tasks().List("p1")))
	for i := range 3 {
		assert.Equal(t, []string{"ora-1 ses_n" + strconv.Itoa(i)}, aliasesOf(s.Tasks().List("p"+strconv.Itoa(i+2))), "a new parent's alias is kept")
	}
	assert.Equal(t, "oracle", s.Tracked().Agent("ses_x"), "a new session's agent is kept")
	act, id := s.Tasks().BeginCall(context.Background(), "call_r", "p3", "oracle", "again", "ora-1")
	assert.Equal(t, sessions.TaskIDReplace, act)
	assert.Equal(t, "ses_n1", id)
	st := d.State()
	assert.Equal(t, sessions.StateReadOnly, st.Mode)
	assert.Empty(t, st.LastWriteError, "nothing is written, so no write fails")
	assert.NotContains(t, logs.String(), "write failed")

	got, err := ReadState(path)
	require.NoError(t, err)
	assert.Equal(t, []string{"exp-1 ses_a"}, aliasesOf(got.Sessions), "the file is as it was")
}

// `hookwire forget` on a database the user cannot write says so, and the
// state is unchanged: never "forgot N" with nothing written.
func TestForgetReadOnlyDatabaseRefused(t *testing.T) {
	if rerunAsNobody(t) {
		return
	}
	for _, spec := range []ForgetSpec{{All: true}, {Parent: "p1"}, {Alias: "exp-1"}, {Parent: "p1", Alias: "exp-1"}} {
		path := readOnlyState(t)
		before, err := os.ReadFile(path)
		require.NoError(t, err)
		got, err := Forget(context.Background(), path, spec)
		require.Error(t, err, "%+v", spec)
		assert.Contains(t, err.Error(), "cannot be written", "%+v", spec)
		assert.Equal(t, Forgotten{}, got, "%+v: nothing is said forgotten", spec)
		after, err := os.ReadFile(path)
		require.NoError(t, err)
		assert.Equal(t, before, after, "%+v: the file is unchanged", spec)
		contents, err := ReadState(path)
		require.NoError(t, err)
		assert.Equal(t, []string{"exp-1 ses_a"}, aliasesOf(contents.Sessions), "%+v", spec)
	}
}
