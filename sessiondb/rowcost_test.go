package sessiondb

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hookwire/hookwire/sessions"
)

// sessions.CacheRowCost is what a prompt-cache row counts in the byte
// budget, and so what the database file grows by per row: measured here
// on SQLite itself. For each size of figures, 40 rows are written into
// the cache table of a new database and the pages the file grew by are
// shared out among them; the cost must cover that (under-counting large
// rows, whose figures spill onto overflow pages, let the file outgrow its
// budget) without counting more than twice it and a page.
func TestCacheRowCostCoversWhatSQLiteStores(t *testing.T) {
	for _, size := range []int{10, 500, 1500, 2500, 8000, 8200, 16400, 50000, 120000} {
		t.Run(fmt.Sprint(size), func(t *testing.T) {
			c, _, err := openDB(t.Context(), filepath.Join(t.TempDir(), "state.db"), openReadWrite)
			require.NoError(t, err)
			defer c.close()
			pages := func() int64 {
				var n int64
				require.NoError(t, c.queryRow(t.Context(), "PRAGMA page_count").Scan(&n))
				return n
			}
			before := pages()
			const rows = 40
			data := strings.Repeat("x", size)
			var cost int
			require.NoError(t, c.inTx(t.Context(), func() error {
				for i := range rows {
					session := fmt.Sprintf("ses_%026d", i)
					cost += sessions.CacheRowCost(session, len(data))
					if err := c.exec(t.Context(), "INSERT INTO cache(session, used, bytes, data) VALUES(?,?,?,?)", session, i, 1, data); err != nil {
						return err
					}
				}
				return nil
			}))
			grew := (pages() - before) * dbPageSizeForTest
			t.Logf("%d rows of %d bytes: the file grew %d bytes, counted %d", rows, size, grew, cost)
			assert.GreaterOrEqual(t, int64(cost), grew, "the budget counts at least what the file grew by")
			assert.LessOrEqual(t, int64(cost), 2*grew+dbPageSizeForTest*rows/4, "and not far more")
		})
	}
}

// dbPageSizeForTest is a new database's page size (setUp).
const dbPageSizeForTest = 8192
