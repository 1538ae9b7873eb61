package sessiondb

import (
	"context"
	"net/url"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// testdata/release-v1.db is a database the release of format 1 wrote
// (testdata/release-v1.requests.jsonl made it, through that release's
// `hookwire serve --framing line --state`): the aliases, counters, run
// states, agents and frozen blocks of release-state.json, plus a model's
// health row and a session's prompt-cache figures.
func releaseV1(t *testing.T, path string) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "release-v1.db"))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(path, data, 0o600))
}

// rawConn is a connection to path, made if missing, with no schema
// applied.
func rawConn(t *testing.T, path string) *dbConn {
	t.Helper()
	c, err := connect(t.Context(), path, url.Values{"mode": {"rwc"}}, false)
	require.NoError(t, err)
	t.Cleanup(func() { c.close() })
	return c
}

func userVersion(t *testing.T, c *dbConn) int {
	t.Helper()
	var v int
	require.NoError(t, c.conn.QueryRowContext(t.Context(), "PRAGMA user_version").Scan(&v))
	return v
}

func tableNames(t *testing.T, c *dbConn) []string {
	t.Helper()
	rows, err := c.conn.QueryContext(t.Context(), "SELECT name FROM sqlite_schema WHERE type='table' ORDER BY name")
	require.NoError(t, err)
	defer rows.Close()
	var out []string
	for rows.Next() {
		var n string
		require.NoError(t, rows.Scan(&n))
		out = append(out, n)
	}
	require.NoError(t, rows.Err())
	return out
}

var allTables = []string{"cache", "counters", "entries", "frozen", "health", "meta", "parents", "tracked"}

// A database of format 1, as the release wrote it or without the tables
// that release made beside its schema (health at each open for writing,
// cache at the first figures), is read as it is by the commands and
// migrated by a sidecar, keeping everything it holds.
func TestMigrateFormat1Database(t *testing.T) {
	for _, tt := range []struct {
		name       string
		drop       []string // tables dropped from the release's file first
		health     bool
		cacheRows  int
		readTables []string
	}{
		{"as the release wrote it", nil, true, 1, allTables},
		{"without the health and cache tables", []string{"health", "cache"}, false, 0, []string{"counters", "entries", "frozen", "meta", "parents", "tracked"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "state.db")
			releaseV1(t, path)
			if len(tt.drop) > 0 {
				c := rawConn(t, path)
				for _, tb := range tt.drop {
					_, err := c.conn.ExecContext(t.Context(), "DROP TABLE "+tb)
					require.NoError(t, err)
				}
				require.NoError(t, c.close())
			}

			// Read-only (sessions, observe, doctor): read as format 1, unchanged.
			got, err := ReadState(path)
			require.NoError(t, err)
			assert.Equal(t, 2, got.Parents)
			assert.Len(t, got.Cache, tt.cacheRows)
			if tt.health {
				require.Len(t, got.Health, 1)
				assert.Equal(t, "fake/m1", got.Health[0].Model)
			}
			c := rawConn(t, path)
			assert.Equal(t, 1, userVersion(t, c), "a read-only open migrates nothing")
			assert.Equal(t, tt.readTables, tableNames(t, c))
			type cacheRow struct {
				used  int64
				bytes int64
			}
			readRows := func(c *dbConn, withBytes bool) map[string]cacheRow {
				out := map[string]cacheRow{}
				if tt.cacheRows == 0 {
					return out
				}
				q := "SELECT session, used, length(CAST(session AS BLOB)) + length(CAST(data AS BLOB)) FROM cache"
				if withBytes {
					q = "SELECT session, used, bytes FROM cache"
				}
				rows, err := c.conn.QueryContext(t.Context(), q)
				require.NoError(t, err)
				defer rows.Close()
				for rows.Next() {
					var s string
					var r cacheRow
					require.NoError(t, rows.Scan(&s, &r.used, &r.bytes))
					if !withBytes {
						r.bytes = formatRowBytes(int(r.bytes))
					}
					out[s] = r
				}
				require.NoError(t, rows.Err())
				return out
			}
			wantRows := readRows(c, false) // the release's rows, as migration 5 counts them
			require.Len(t, wantRows, tt.cacheRows)
			require.NoError(t, c.close())

			// A sidecar migrates it and serves what it held.
			h, d := dbHarness(t, path, releaseConfig)
			assertReleaseState(t, h)
			assert.Len(t, h.s.PromptCache().List(), tt.cacheRows)
			if tt.health {
				_, ok := h.s.ProviderHealth().Of("fake/m1")
				assert.True(t, ok, "the health row is kept")
			}
			require.NoError(t, d.Close())
			c = rawConn(t, path)
			assert.Equal(t, schemaVersion, userVersion(t, c))
			assert.Equal(t, allTables, tableNames(t, c))
			// Migration 5 keeps each prompt-cache row with its last use and
			// counts it in the byte budget exactly (the test checked only
			// that some count was there: a last use of 0 or a wrong sum
			// passed). The sidecar above did not rewrite them: it wrote no
			// figures.
			for _, r := range wantRows {
				require.Positive(t, r.used, "the release's rows have a last use")
			}
			assert.Equal(t, wantRows, readRows(c, true))
			require.NoError(t, c.close())

			// And a later open finds it at this format, with what was added.
			h2, _ := dbHarness(t, path, releaseConfig)
			assert.Equal(t, "rev-2", h2.s.Tasks().List("ses_parent_a")[0].Alias)
		})
	}
}

// A new database runs every migration in order, in one transaction, and
// is marked as hookwire's.
func TestMigrateNewDatabase(t *testing.T) {
	c := rawConn(t, filepath.Join(t.TempDir(), "state.db"))
	require.NoError(t, c.migrate(t.Context(), migrations[:]))
	assert.Equal(t, schemaVersion, userVersion(t, c))
	assert.Equal(t, allTables, tableNames(t, c))
	var app int64
	require.NoError(t, c.conn.QueryRowContext(t.Context(), "PRAGMA application_id").Scan(&app))
	assert.Equal(t, int64(applicationID), app)
	require.NoError(t, c.migrate(t.Context(), migrations[:]), "nothing left to do")
	assert.Equal(t, schemaVersion, userVersion(t, c))
}

// Migrations run in order, all or none: the database starts at format
// from of list, and is migrated to format to.
func TestMigrateOrderAndFailure(t *testing.T) {
	ctx := context.Background()
	for _, tt := range []struct {
		name     string
		list     []migration
		from, to int
		wantErr  string
		version  int
		tables   []string
	}{
		{
			name: "in order: a later migration uses an earlier one's table",
			list: []migration{
				{"a", "CREATE TABLE a(x INTEGER)"},
				{"b", "INSERT INTO a VALUES(1)"},
				{"c", "CREATE TABLE c AS SELECT x FROM a"},
			},
			from: 1, to: 3,
			version: 3, tables: []string{"a", "c"},
		},
		{
			name: "a failing migration leaves the database as it was",
			list: []migration{
				{"a", "CREATE TABLE a(x INTEGER)"},
				{"b", "CREATE TABLE b(x INTEGER)"},
				{"c", "INSERT INTO nowhere VALUES(1)"},
			},
			from: 1, to: 3,
			wantErr: "migrating the database to format 3 (c)",
			version: 1, tables: []string{"a"},
		},
		{
			name: "a newer format is refused, unchanged",
			list: []migration{{"a", "CREATE TABLE a(x INTEGER)"}, {"b", "CREATE TABLE b(x INTEGER)"}},
			from: 2, to: 1,
			wantErr: "format 2 written by a newer hookwire (this build reads 1)",
			version: 2, tables: []string{"a", "b"},
		},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c := rawConn(t, filepath.Join(t.TempDir(), "state.db"))
			require.NoError(t, c.migrate(ctx, tt.list[:tt.from]))
			err := c.migrate(ctx, tt.list[:tt.to])
			if tt.wantErr != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tt.wantErr)
			} else {
				require.NoError(t, err)
			}
			assert.Equal(t, tt.version, userVersion(t, c))
			assert.Equal(t, tt.tables, tableNames(t, c))
			// The writer's turn was given back: the next transaction runs.
			require.NoError(t, c.inTx(ctx, func() error { return nil }))
		})
	}
}
