//go:build unix

package sessiondb

import (
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hookwire/hookwire/sessions"
)

// The database deleted under a process that holds frozen blocks: the
// process writes them into the new database in the order they were made
// (the oldest the lowest sequence), so the next process reading the
// parent takes the same block for the oldest as this one did. Written
// newest first, the next process would take the newest block for the
// oldest, and a session at its bound would keep the wrong ones: a cache
// bust (issue 49 item 6).
func TestReattachWritesFrozenBlocksInTheirOrder(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.db")
	h, d := dbHarness(t, path, sessions.Config{})
	ctx := context.Background()
	var want []string
	for i := range 4 {
		id := "msg_" + strconv.Itoa(i)
		want = append(want, id)
		h.s.Frozen().Block(ctx, "ses_p", id, func() string { return "block " + id })
	}
	require.Equal(t, want, frozenBySeq(t, path, "ses_p"), "as first written")

	removeDB(t, path)
	require.Eventually(t, func() bool { return hasWarning(d, "deleted under this process") }, 10*time.Second, 20*time.Millisecond)
	require.Empty(t, d.State().LastWriteError)
	assert.Equal(t, want, frozenBySeq(t, path, "ses_p"), "written again, oldest first")
}

// frozenBySeq lists parent's frozen blocks in the database at path, the
// oldest (lowest sequence) first.
func frozenBySeq(t *testing.T, path, parent string) []string {
	t.Helper()
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("no database at %s: %v", path, err)
	}
	db, err := sql.Open("sqlite", path)
	require.NoError(t, err)
	defer db.Close()
	rows, err := db.Query("SELECT message_id FROM frozen WHERE pid=(SELECT pid FROM parents WHERE id=?) ORDER BY seq", parent)
	require.NoError(t, err)
	defer rows.Close()
	var out []string
	for rows.Next() {
		var id string
		require.NoError(t, rows.Scan(&id))
		out = append(out, id)
	}
	require.NoError(t, rows.Err())
	return out
}
