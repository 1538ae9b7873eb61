package main

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"sort"
	"testing"

	"github.com/rs/zerolog"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hookwire/hookwire/internal/seeddb"
	"github.com/hookwire/hookwire/sessiondb"
	"github.com/hookwire/hookwire/sessions"
	"github.com/hookwire/hookwire/statewatch"
)

// A serving sidecar and an observer on a database of 2,500 parents:
// sessions.list gives the newest 1000; sessions.page lists every entry
// once, a page at a time, and the serving sidecar answers the hooks
// pipelined between its pages, each before the listing ends (issue 30
// item 13).
func TestListingPages2500Parents(t *testing.T) {
	const parents = 2500
	state := filepath.Join(t.TempDir(), "state.db")
	require.NoError(t, seeddb.Seed(state, parents))
	config := map[string]any{"maxParents": 100000, "maxTrackedSessions": 100000, "maxStateBytes": 1 << 30}

	serve := start(t, false, "--state", state)
	require.Nil(t, serve.call("initialize", map[string]any{"protocolVersion": 1, "config": config}).Error)
	observe := startCommand(t, binPath, false, "observe", "--state", state)
	require.Nil(t, observe.call("initialize", map[string]any{"protocolVersion": 1}).Error)

	for name, p := range map[string]*proc{"serve": serve, "observe": observe} {
		t.Run(name+": sessions.list is the newest 1000", func(t *testing.T) {
			r := p.call("sessions.list", nil)
			require.Nil(t, r.Error)
			var list []sessions.Entry
			require.NoError(t, json.Unmarshal(r.Result, &list))
			require.Len(t, list, sessions.DefaultListLimit)
			assert.Equal(t, "ses_t0", list[0].TaskID)
			assert.Equal(t, "ses_t999", list[999].TaskID)
			require.NotNil(t, list[0].Model)
			assert.Equal(t, "fake/m0", list[0].Model.Model)
		})
	}

	// Pipelined: a page, a hook, the next page, a hook... The replies
	// come in that order: each hook waited for one page, not the listing.
	hook := `{"input":{"tool":"bash","sessionID":"ses_p0","callID":"c%d"},"output":{"output":"ok"}}`
	var order []string
	seen := map[string]bool{}
	cursor := ""
	for i := 1; ; i++ {
		params := map[string]any{"limit": 1000}
		if cursor != "" {
			params["cursor"] = cursor
		}
		serve.send("sessions.page", fmt.Sprintf("page%d", i), params)
		serve.send("tool.execute.after", fmt.Sprintf("hook%d", i), json.RawMessage(fmt.Sprintf(hook, i)))
		r := serve.recv()
		require.Nil(t, r.Error)
		order = append(order, string(r.ID))
		var page sessions.EntryPage
		require.NoError(t, json.Unmarshal(r.Result, &page))
		require.LessOrEqual(t, len(page.Entries), 1000)
		for _, e := range page.Entries {
			require.False(t, seen[e.TaskID], "listed twice: %s", e.TaskID)
			seen[e.TaskID] = true
		}
		h := serve.recv()
		require.Nil(t, h.Error, "the hook is answered")
		order = append(order, string(h.ID))
		if cursor = page.Next; cursor == "" {
			break
		}
	}
	assert.Equal(t, []string{`"page1"`, `"hook1"`, `"page2"`, `"hook2"`, `"page3"`, `"hook3"`}, order)
	assert.Len(t, seen, parents, "every entry once")

	t.Run("observe: sessions.page lists them all, status counts them", func(t *testing.T) {
		n := 0
		for cursor := ""; ; {
			params := map[string]any{"limit": 700}
			if cursor != "" {
				params["cursor"] = cursor
			}
			r := observe.call("sessions.page", params)
			require.Nil(t, r.Error)
			var page sessions.EntryPage
			require.NoError(t, json.Unmarshal(r.Result, &page))
			n += len(page.Entries)
			if cursor = page.Next; cursor == "" {
				break
			}
		}
		assert.Equal(t, parents, n)
		r := observe.call("status", nil)
		require.Nil(t, r.Error)
		var st struct {
			Store struct{ Parents, Entries int } `json:"store"`
		}
		require.NoError(t, json.Unmarshal(r.Result, &st))
		assert.Equal(t, parents, st.Store.Entries)
		assert.Equal(t, parents, st.Store.Parents)
		bad := observe.call("sessions.page", map[string]any{"cursor": "forged"})
		require.NotNil(t, bad.Error)
		assert.Equal(t, int64(-32602), bad.Error.Code)
	})
}

// BenchmarkListing100k measures, at the 100,000 parents of issue 30 item
// 13, the serving store's sessions.list of everything as it was (List:
// the whole database read under the store's lock) beside its first page
// now and all its pages, and observe's initial read as it was
// (ReadState of everything, sorted) beside statewatch's read now;
// each with its heap peak.
func BenchmarkListing100k(b *testing.B) {
	path := filepath.Join(b.TempDir(), "big.db")
	require.NoError(b, seeddb.Seed(path, 100_000))
	st := sessions.New(sessions.Config{MaxParents: 200_000, MaxTrackedSessions: 200_000, MaxStateBytes: 1 << 30})
	d, err := sessiondb.OpenDatabase(context.Background(), path, st, zerolog.Nop())
	require.NoError(b, err)
	b.Cleanup(func() { d.Close() })
	peak := func(b *testing.B, fn func()) {
		var p uint64
		for b.Loop() {
			p = max(p, heapPeak(fn))
		}
		b.ReportMetric(float64(p)/(1<<20), "MiB-peak")
	}
	b.Run("serve-list-whole-before", func(b *testing.B) {
		peak(b, func() { require.Len(b, st.Tasks().List(""), 100_000) })
	})
	b.Run("serve-list-first-page", func(b *testing.B) {
		peak(b, func() {
			page, err := st.Tasks().Page(context.Background(), "", "", 0)
			require.NoError(b, err)
			require.Len(b, page.Entries, sessions.DefaultListLimit)
		})
	})
	b.Run("serve-page-all", func(b *testing.B) {
		peak(b, func() {
			n := 0
			for cursor := ""; ; {
				page, err := st.Tasks().Page(context.Background(), "", cursor, sessions.MaxListLimit)
				require.NoError(b, err)
				n += len(page.Entries)
				if cursor = page.Next; cursor == "" {
					break
				}
			}
			require.Equal(b, 100_000, n)
		})
	})
	b.Run("observe-initialize-before", func(b *testing.B) {
		peak(b, func() {
			got, err := sessiondb.ReadState(path)
			require.NoError(b, err)
			sort.SliceStable(got.Sessions, func(i, j int) bool { return got.Sessions[i].LastUse.After(got.Sessions[j].LastUse) })
		})
	})
	b.Run("observe-initialize", func(b *testing.B) {
		peak(b, func() {
			ctx, cancel := context.WithCancel(context.Background())
			w, err := statewatch.Start(ctx, path, statewatch.Options{Log: zerolog.Nop(), Poll: true})
			require.NoError(b, err)
			require.Equal(b, 100_000, w.Count())
			cancel()
		})
	})
}
