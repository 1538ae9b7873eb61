package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"strings"
	"sync/atomic"
	"testing"
	"text/tabwriter"
	"time"

	"github.com/rs/zerolog"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hookwire/hookwire/internal/racetest"
	"github.com/hookwire/hookwire/internal/seeddb"
	"github.com/hookwire/hookwire/sessiondb"
	"github.com/hookwire/hookwire/sessions"
	"github.com/hookwire/hookwire/subagents"
)

// wholeSessionsOutput is `hookwire sessions`' output as it was made
// before the entries were streamed (issue 30 item 13): the whole state
// read with ReadState, encoded with json.Encoder, the table with
// text/tabwriter. The streamed output must be these bytes.
func wholeSessionsOutput(t *testing.T, path string, asJSON bool) string {
	t.Helper()
	got, err := sessiondb.ReadState(path)
	require.NoError(t, err)
	l := sessionsList{Path: path, Exists: true, Parents: got.Parents, FrozenBlocks: got.FrozenBlocks, TrackedSessions: got.TrackedSessions,
		Sessions: got.Sessions, Health: got.Health, Cache: cacheEntries(got.Cache), Subagents: []subagents.Page{}}
	if l.Sessions == nil {
		l.Sessions = []sessions.Entry{}
	}
	if l.Health == nil {
		l.Health = []sessions.Health{}
	}
	var b bytes.Buffer
	if asJSON {
		enc := json.NewEncoder(&b)
		enc.SetIndent("", "  ")
		require.NoError(t, enc.Encode(l))
		return b.String()
	}
	fmt.Fprintf(&b, "%s: %s\n", l.Path, summaryWords(len(l.Sessions), l.Parents, l.FrozenBlocks, l.TrackedSessions))
	cacheOf := make(map[string]*cacheEntry, len(l.Cache))
	for i := range l.Cache {
		cacheOf[l.Cache[i].Session] = &l.Cache[i]
	}
	if len(l.Sessions) > 0 {
		fmt.Fprintln(&b)
		tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "PARENT\tAGENT\tALIAS\tLABEL\tTASK ID\tCACHE\tLAST USE\tMODEL")
		for _, e := range l.Sessions {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", cell(e.Parent), cell(e.Agent), cell(e.Alias),
				cell(e.Label), cell(e.TaskID), cacheCell(cacheOf[e.TaskID]), lastUse(e.LastUse), modelCell(e.Model))
		}
		tw.Flush()
		for _, e := range l.Sessions {
			for _, sw := range switchesOf(e) {
				fmt.Fprintf(&b, "switch: %s %s -> %s at %s: %s\n", cell(e.Alias), cell(sw.From), cell(sw.To), lastUse(sw.At), cell(sw.Class))
			}
		}
	}
	var rest bytes.Buffer // health and cache: printed as before
	require.NoError(t, printSessions(&rest, sessionsList{Path: path, Exists: true, Health: l.Health, Cache: l.Cache}, &sessiondb.StateView{}))
	_, tail, _ := strings.Cut(rest.String(), "\n")
	return b.String() + tail
}

// A state database (imported from a JSON state with models, switches,
// health, frozen blocks and cache figures, then grown by seeded parents)
// lists as the same bytes streamed as read whole, in text and JSON.
func TestSessionsStreamedAsReadWhole(t *testing.T) {
	const withSwitches = `{"version":1,"clock":5,"parents":[
 {"id":"ses_p2","counters":{"exp":1},"entries":[
  {"agent":"explorer","alias":"exp-1","taskId":"ses_c","label":"three","lastUse":"2026-11-30T10:00:05Z","use":5}],
  "frozen":[{"messageId":"msg_1","block":"### Resumable Sessions"}]},
 {"id":"ses_p1","counters":{"exp":2,"ora":1},"entries":[
  {"agent":"explorer","alias":"exp-2","taskId":"ses_b","label":"find\tthe\ntests «ünïcode»","lastUse":"2026-11-30T10:00:04Z","use":4},
  {"agent":"oracle","alias":"ora-1","taskId":"ses_o","label":"","lastUse":"2026-11-30T10:00:02Z","use":2,"run":{"state":"error","error":"boom <&>"}}]}],
 "sessionAgents":[{"session":"ses_b","agent":"explorer","model":{"model":"fake/m2","variant":"high","rung":"fallback-chain","changed":true},
   "switches":[{"from":"fake/m1","to":"fake/m2","reason":"rate limit","at":"2026-11-30T10:00:03Z"}]},
  {"session":"ses_p1","agent":"orchestrator"}],
 "health":[{"model":"fake/m1","until":"2026-11-30T11:00:00Z","strikes":2,"last":"2026-11-30T10:00:03Z","class":"rate_limit","message":"slow down"}],
 "cache":[{"session":"ses_b","requests":2,"inputTokens":100,"cacheReadTokens":100,"busts":[]}]}`
	dir := t.TempDir()
	db := filepath.Join(dir, "state.db")
	seeded := filepath.Join(dir, "seeded.db")
	require.NoError(t, os.WriteFile(filepath.Join(dir, "state.json"), []byte(withSwitches), 0o600))
	d, err := sessiondb.OpenDatabase(context.Background(), db, sessions.New(sessions.Config{}), zerolog.Nop())
	require.NoError(t, err)
	require.Equal(t, sessions.StatePersistent, d.State().Mode)
	require.NoError(t, d.Close())
	require.NoError(t, seeddb.Seed(seeded, 300))

	for _, path := range []string{db, seeded} {
		for _, asJSON := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s json=%v", filepath.Base(path), asJSON), func(t *testing.T) {
				args := []string{"sessions", "--state", path}
				if asJSON {
					args = append(args, "--json")
				}
				code, stdout, stderr := runCmd(args...)
				require.Equal(t, 0, code, stderr)
				want := wholeSessionsOutput(t, path, asJSON)
				assert.Equal(t, want, stdout)
				if path == db && !asJSON {
					assert.Contains(t, stdout, "switch: exp-2 fake/m1 -> fake/m2 at 2026-11-30T10:00:03Z: rate-limit")
				}
			})
		}
	}
}

// heapPeak runs fn while sampling the live heap every 200 µs and returns
// the highest figure seen above the heap before fn ran.
func heapPeak(fn func()) uint64 {
	runtime.GC()
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	read := func() uint64 { metrics.Read(sample); return sample[0].Value.Uint64() }
	base := read()
	var peak atomic.Uint64
	stop, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(200 * time.Microsecond)
		defer tick.Stop()
		for {
			if v := read(); v > peak.Load() {
				peak.Store(v)
			}
			select {
			case <-stop:
				return
			case <-tick.C:
			}
		}
	}()
	fn()
	close(stop)
	<-done
	if v := read(); v > peak.Load() {
		peak.Store(v)
	}
	if p := peak.Load(); p > base {
		return p - base
	}
	return 0
}

// `hookwire sessions` (text and --json) streams the entries: its heap
// stays a few MiB while the whole read of the same database, as it was
// done before, takes many times that (issue 30 item 13; 20,000 parents
// here, the 100,000 of the issue in BenchmarkSessionsCommand).
func TestVolumeSessionsBoundedMemory20kParents(t *testing.T) {
	racetest.Volume(t)
	if testing.Short() {
		t.Skip("seeds 20,000 parents")
	}
	path := filepath.Join(t.TempDir(), "big.db")
	require.NoError(t, seeddb.Seed(path, 20_000))
	whole := heapPeak(func() {
		got, err := sessiondb.ReadState(path)
		require.NoError(t, err)
		require.Len(t, got.Sessions, 20_000)
	})
	for _, args := range [][]string{{"sessions", "--state", path}, {"sessions", "--json", "--state", path}} {
		mode := "text"
		if len(args) == 4 {
			mode = "json"
		}
		var n countWriter
		streamed := heapPeak(func() {
			code := run(args, strings.NewReader(""), &n, io.Discard)
			require.Equal(t, 0, code)
		})
		t.Logf("%s: heap peak %.1f MiB streamed, %.1f MiB read whole (%.0fx), %d bytes out",
			mode, float64(streamed)/(1<<20), float64(whole)/(1<<20), float64(whole)/float64(max(streamed, 1)), n.n)
		assert.Less(t, streamed, uint64(8<<20), "streamed heap peak")
		assert.Less(t, streamed*5, whole, "streamed vs whole")
	}
}

type countWriter struct{ n int64 }

func (w *countWriter) Write(p []byte) (int, error) { w.n += int64(len(p)); return len(p), nil }

// BenchmarkSessionsCommand is `hookwire sessions --json` and the whole read
// it replaced at 100,000 parents, with their heap peaks.
func BenchmarkSessionsCommand(b *testing.B) {
	path := filepath.Join(b.TempDir(), "big.db")
	require.NoError(b, seeddb.Seed(path, 100_000))
	b.Run("whole", func(b *testing.B) {
		var peak uint64
		for b.Loop() {
			peak = max(peak, heapPeak(func() {
				got, err := sessiondb.ReadState(path)
				require.NoError(b, err)
				l := sessionsList{Sessions: got.Sessions}
				require.NoError(b, json.NewEncoder(io.Discard).Encode(l))
			}))
		}
		b.ReportMetric(float64(peak)/(1<<20), "MiB-peak")
	})
	for _, mode := range []string{"text", "json"} {
		b.Run("streamed-"+mode, func(b *testing.B) {
			args := []string{"sessions", "--state", path}
			if mode == "json" {
				args = append(args, "--json")
			}
			var peak uint64
			for b.Loop() {
				peak = max(peak, heapPeak(func() {
					require.Equal(b, 0, run(args, strings.NewReader(""), io.Discard, io.Discard))
				}))
			}
			b.ReportMetric(float64(peak)/(1<<20), "MiB-peak")
		})
	}
}
