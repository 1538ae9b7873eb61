package sessiondb

import (
	"fmt"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hookwire/hookwire/sessions"
)

// pruneDB is a database holding parents, tracked sessions and
// prompt-cache rows of the given bytes each, the first of each the least
// recently written (or used).
func pruneDB(t *testing.T, parents, tracked, cache []int64) *dbConn {
	t.Helper()
	c, _, err := openDB(t.Context(), filepath.Join(t.TempDir(), "state.db"), openReadWrite)
	require.NoError(t, err)
	t.Cleanup(func() { c.close() })
	require.NoError(t, c.inTx(t.Context(), func() error {
		for i, b := range parents {
			if err := c.exec(t.Context(), "INSERT INTO parents(id, rev, bytes) VALUES(?,?,?)", fmt.Sprintf("p%d", i), i+1, b); err != nil {
				return err
			}
		}
		for i, b := range tracked {
			if err := c.exec(t.Context(), "INSERT INTO tracked(session, agent, rev, bytes) VALUES(?,?,?,?)", fmt.Sprintf("t%d", i), "explore", i+1, b); err != nil {
				return err
			}
		}
		// The cache rows inserted newest first, so that an order by
		// insertion or by key is not the order by use.
		for i := len(cache) - 1; i >= 0; i-- {
			if err := c.exec(t.Context(), "INSERT INTO cache(session, used, bytes, data) VALUES(?,?,?,'{}')", fmt.Sprintf("c%d", i), i+1, cache[i]); err != nil {
				return err
			}
		}
		return nil
	}))
	return c
}

// The prune's arithmetic (issue 39's slips): past the byte budget it
// forgets from the kind that holds the most bytes, one at a time, exactly
// as many as bring it within the budget (subtracting a row's bytes from
// the wrong total forgot up to 200 parents where one would do), the
// least recently used prompt-cache row first (not the newest), and it
// says whether it is still over any bound (the tracked sessions' term
// included).
func TestPruneArithmetic(t *testing.T) {
	tests := []struct {
		name             string
		parents, tracked []int64
		cache            []int64 // by use, oldest first
		bounds           sessions.Bounds
		wantParents      []string
		wantTracked      []string
		wantCache        []string // the rows left
		wantOverBound    bool
	}{
		{"parents hold the most: one parent goes",
			[]int64{1000, 1000, 1000}, []int64{100, 100}, []int64{50},
			sessions.Bounds{MaxParents: 100, MaxTrackedSessions: 100, MaxBytes: 2300, Batch: 200},
			[]string{"p0"}, nil, []string{"c0"}, false},
		{"tracked sessions hold the most: one goes",
			[]int64{100, 100}, []int64{1000, 1000, 1000}, []int64{50},
			sessions.Bounds{MaxParents: 100, MaxTrackedSessions: 100, MaxBytes: 2300, Batch: 200},
			nil, []string{"t0"}, []string{"c0"}, false},
		{"prompt-cache rows hold the most: the least recently used goes",
			[]int64{100}, []int64{100}, []int64{1000, 1000, 1000},
			sessions.Bounds{MaxParents: 100, MaxTrackedSessions: 100, MaxBytes: 2300, Batch: 200},
			nil, nil, []string{"c1", "c2"}, false},
		{"a parent, then a tracked session, which then holds the most",
			[]int64{1000, 1000, 1000}, []int64{1200, 1200}, nil,
			sessions.Bounds{MaxParents: 100, MaxTrackedSessions: 100, MaxBytes: 4000, Batch: 200},
			[]string{"p0"}, []string{"t0"}, nil, false},
		{"a tracked session, then a parent, which then holds the most",
			[]int64{1200, 1200}, []int64{1000, 1000, 1000}, nil,
			sessions.Bounds{MaxParents: 100, MaxTrackedSessions: 100, MaxBytes: 4000, Batch: 200},
			[]string{"p0"}, []string{"t0"}, nil, false},
		{"a prompt-cache row, then parents, which then hold the most",
			[]int64{1000, 1000, 1000}, nil, []int64{1600, 1600},
			sessions.Bounds{MaxParents: 100, MaxTrackedSessions: 100, MaxBytes: 3000, Batch: 200},
			[]string{"p0", "p1"}, nil, []string{"c1"}, false},
		{"too many tracked sessions for one batch: still over",
			[]int64{10}, make([]int64, 20), nil,
			sessions.Bounds{MaxParents: 100, MaxTrackedSessions: 5, MaxBytes: 1 << 20, Batch: 10},
			nil, []string{"t0", "t1", "t2", "t3", "t4", "t5", "t6", "t7", "t8", "t9"}, nil, true},
		{"too many parents for one batch: still over",
			make([]int64, 20), nil, nil,
			sessions.Bounds{MaxParents: 5, MaxTrackedSessions: 100, MaxBytes: 1 << 20, Batch: 10},
			[]string{"p0", "p1", "p2", "p3", "p4", "p5", "p6", "p7", "p8", "p9"}, nil, nil, true},
		{"within every bound: nothing goes",
			[]int64{10, 10}, []int64{10}, []int64{10},
			sessions.Bounds{MaxParents: 2, MaxTrackedSessions: 1, MaxBytes: 40, Batch: 10},
			nil, nil, []string{"c0"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := pruneDB(t, tt.parents, tt.tracked, tt.cache)
			var got sessions.Pruned
			require.NoError(t, c.inTx(t.Context(), func() error {
				var err error
				got, err = prune(t.Context(), c, tt.bounds)
				return err
			}))
			assert.Equal(t, tt.wantParents, got.Parents)
			assert.Equal(t, tt.wantTracked, got.Tracked)
			assert.Equal(t, tt.wantOverBound, got.OverBound)
			rows, err := c.query(t.Context(), "SELECT session FROM cache ORDER BY session")
			require.NoError(t, err)
			var left []string
			for rows.Next() {
				var s string
				require.NoError(t, rows.Scan(&s))
				left = append(left, s)
			}
			require.NoError(t, rows.Close())
			assert.Equal(t, tt.wantCache, left, "the prompt-cache rows left")
		})
	}
}
