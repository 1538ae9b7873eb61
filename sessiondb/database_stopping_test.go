package sessiondb

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/rs/zerolog"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hookwire/hookwire/sessions"
)

// TestOpenDatabaseWhileStopping: a process told to stop while it opens the
// database (OpenCode's `session list` disposes the plugin at once) says so
// at debug level, never the memory-only warning, and leaves a database
// that holds state as it is (never moved aside).
func TestOpenDatabaseWhileStopping(t *testing.T) {
	for _, tt := range []struct {
		name  string
		setUp func(t *testing.T, path string)
	}{
		{"a database", func(t *testing.T, path string) {
			d, err := OpenDatabase(context.Background(), path, sessions.New(sessions.Config{}), zerolog.Nop())
			require.NoError(t, err)
			require.NoError(t, d.Close())
		}},
		{"no file yet", func(*testing.T, string) {}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "state.db")
			tt.setUp(t, path)
			before, berr := os.ReadFile(path)

			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			var logged bytes.Buffer
			d, err := OpenDatabase(ctx, path, sessions.New(sessions.Config{}), zerolog.New(&logged).Level(zerolog.InfoLevel))
			require.NoError(t, err)
			defer d.Close()
			assert.Equal(t, sessions.StateMemoryOnly, d.State().Mode)
			assert.Contains(t, d.State().Reason, "stopped before the state database was opened")
			assert.NotContains(t, logged.String(), `"warn"`, "stopping is not a problem to warn of")
			if berr == nil {
				after, err := os.ReadFile(path)
				require.NoError(t, err)
				assert.Equal(t, before, after, "the file is left as it was")
			}
			entries, err := os.ReadDir(dir)
			require.NoError(t, err)
			for _, e := range entries {
				assert.NotContains(t, e.Name(), "corrupt", "nothing moved aside")
			}
		})
	}
}
