package sessions

import (
	"errors"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestStateFile: the structured status follows the persister through each
// mode, and says what Status says in words.
func TestStateFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "hookwire.json")
	h := newHarness(t, Config{})
	first, _ := openTest(t, path, h.s, 0)
	assert.Equal(t, StateFileStatus{Mode: StateFilePersistent, Path: path}, first.StateFile())

	second, _ := openTest(t, path, newTestStore(Config{}), 0)
	got := second.StateFile()
	assert.Equal(t, StateFileMemoryOnly, got.Mode)
	assert.Equal(t, path, got.Path)
	assert.Contains(t, got.Reason, "locked by another process")
	assert.Contains(t, second.Status(), got.Reason)
	assert.Empty(t, got.LastWriteError)

	first.beforeRename = func(string) error { return errors.New("disk on fire") }
	h.task("p1", "explorer", "one", "ses_a")
	require.Error(t, first.Flush())
	assert.Equal(t, StateFileStatus{Mode: StateFilePersistent, Path: path, LastWriteError: "disk on fire"}, first.StateFile())

	first.beforeRename = nil
	require.NoError(t, first.Flush())
	assert.Equal(t, StateFileStatus{Mode: StateFilePersistent, Path: path}, first.StateFile(), "a good write clears the error")

	require.NoError(t, first.Close())
	assert.Equal(t, StateFileStatus{Mode: StateFileClosed, Path: path}, first.StateFile())
}
