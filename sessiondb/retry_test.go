package sessiondb

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A process whose reopen of its database failed tries again when the
// file at the path changes, and else at most every retryEvery, and at
// least that often: a file that cannot be opened and stays unchanged is
// not retried on every tick, and not given up on (issue 49 item 6).
func TestFailedReopenRetryDue(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.db")
	require.NoError(t, os.WriteFile(path, []byte("cannot be opened"), 0o600))
	was, err := os.Stat(path)
	require.NoError(t, err)
	other := filepath.Join(t.TempDir(), "other.db")
	require.NoError(t, os.WriteFile(other, []byte("another file"), 0o600))
	replaced, err := os.Stat(other)
	require.NoError(t, err)

	tests := []struct {
		name     string
		failedAt time.Duration // before now
		now      os.FileInfo
		statErr  error
		want     bool
	}{
		{"unchanged, just failed: not yet", 0, was, nil, false},
		{"unchanged, failed a moment ago: not yet", retryEvery / 2, was, nil, false},
		{"unchanged, failed retryEvery ago: again", retryEvery + time.Second, was, nil, true},
		{"unchanged, failed long ago: again", 10 * retryEvery, was, nil, true},
		{"another file at the path: at once", 0, replaced, nil, true},
		{"nothing at the path: at once (a reopen makes it)", 0, nil, os.ErrNotExist, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := &Database{path: path, failedOpen: was, failedAt: time.Now().Add(-tt.failedAt)}
			assert.Equal(t, tt.want, d.retryDue(tt.now, tt.statErr))
		})
	}
}
