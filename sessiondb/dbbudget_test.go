package sessiondb

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hookwire/hookwire/core"
	"github.com/hookwire/hookwire/internal/racetest"
	"github.com/hookwire/hookwire/sessions"
)

// maxID is an id of the longest kept size (MaxIDBytes), unique by n.
func maxID(kind string, n int) string {
	head := fmt.Sprintf("%s_%08d_", kind, n)
	return head + strings.Repeat("x", sessions.MaxIDBytes-len(head))
}

// TestVolumeDatabaseFileWithinBudget fills a small byte budget as hostilely as
// the store's caps allow, through the Store API and the cache usage path
// (every id, agent name, label and model at 256 bytes, the prompt-cache
// table full with 256-message prints and 32 busts a session), and checks
// that the file, checkpointed, stays within an eighth above the budget
// (PROTOCOL.md 7: what each item really takes in FILE is counted, its ids
// in the row and again in each index over them, and the cache table's rows
// inside the same budget; issue 30 item 8).
func TestVolumeDatabaseFileWithinBudget(t *testing.T) {
	racetest.Volume(t)
	for _, budget := range []int{1 << 20} {
		t.Run(fmt.Sprintf("%dMiB", budget>>20), func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "state.db")
			h, d := dbHarness(t, path, sessions.Config{MaxStateBytes: budget})
			s, ctx := h.s, context.Background()
			rng := rand.New(rand.NewPCG(1, 2))
			agents := make([]string, 4)
			for a := range agents {
				// 256 bytes, its alias prefix as long as one is kept.
				head := fmt.Sprintf("agent%d", a)
				agents[a] = head + strings.Repeat("x", sessions.MaxIDBytes-12-len(head)) + strings.Repeat("!", 12)
			}
			label := strings.Repeat("l", sessions.MaxLabelBytes)
			model := strings.Repeat("m", sessions.MaxModelBytes)
			print := func() *core.PromptPrint {
				p := &core.PromptPrint{SystemSeen: true, System: rng.Uint64(), Block: rng.Uint64(), Truncated: true}
				for range core.MaxPrintMessages {
					p.Messages = append(p.Messages, core.MessagePrint{ID: rng.Uint64(), Content: rng.Uint64(), Ops: rng.Uint64()})
				}
				return p
			}
			task, msg, cached := 0, 0, 0
			// Enough parents to fill the budget three times over.
			for k := 0; k < 3*budget/(30<<10) || cached < sessions.MaxCacheSessions; k++ {
				parent := maxID("ses_parent", k)
				for _, agent := range agents {
					for range sessions.DefaultMaxSessionsPerAgent {
						task++
						child := maxID("ses_task", task)
						call := maxID("call", task)
						act, _ := s.Tasks().BeginCall(ctx, call, parent, agent, label, "")
						require.Equal(t, sessions.TaskIDLeave, act)
						s.Tasks().CompleteCall(ctx, call, out(child))
						s.Tracked().SetAgent(ctx, child, agent)
						s.Tracked().SetParent(ctx, child, parent)
						s.Tracked().SetRunning(ctx, child, model)
						s.Tracked().SetModelDecision(ctx, child, sessions.ModelDecision{Model: model, Variant: model[:200]})
						s.Tracked().AddSwitch(ctx, child, sessions.Switch{From: model, To: model, Reason: label, At: time.Now()})
					}
				}
				for j := range 4 {
					msg++
					text := strings.Repeat("b", 100)
					if j%2 == 1 {
						text = strings.Repeat("b", 4<<10)
					}
					s.Frozen().Block(ctx, parent, maxID("msg", msg), func() string { return text })
				}
				// The cache table: a session's usages until it holds its
				// most busts, a new session every few parents.
				if cached < sessions.MaxCacheSessions {
					cached++
					session := maxID("ses_cache", cached)
					for u := 0; u <= sessions.MaxBustsPerSession; u++ {
						msg++
						s.PromptCache().Prompt(session, print())
						s.PromptCache().Usage(ctx, sessions.Usage{Session: session, Message: maxID("msg", msg), Model: model,
							Input: 100000, CacheRead: int64(100000 - 1000*u)})
					}
				}
			}
			require.NoError(t, d.Close())
			fi, err := os.Stat(path)
			require.NoError(t, err)
			db := rawDB(t, path)
			var parents, tracked, cacheRows int
			require.NoError(t, db.QueryRow("SELECT (SELECT count(*) FROM parents), (SELECT count(*) FROM tracked), (SELECT count(*) FROM cache)").Scan(&parents, &tracked, &cacheRows))
			t.Logf("budget %d bytes: file %d bytes (%.3f of the budget; the bound is 1.125) holding %d parents, %d tracked sessions, %d cache rows, after %d tasks and %d cache sessions",
				budget, fi.Size(), float64(fi.Size())/float64(budget), parents, tracked, cacheRows, task, cached)
			var ne, nf int
			var tl, pb, tb, cb float64
			require.NoError(t, db.QueryRow("SELECT (SELECT count(*) FROM entries), (SELECT count(*) FROM frozen), (SELECT avg(length(model)) FROM tracked), (SELECT sum(bytes) FROM parents), (SELECT sum(bytes) FROM tracked), (SELECT sum(bytes) FROM cache)").Scan(&ne, &nf, &tl, &pb, &tb, &cb))
			t.Logf("entries %d frozen %d tracked model avg %.0f parent bytes %.0f tracked bytes %.0f cache bytes %.0f", ne, nf, tl, pb, tb, cb)
			rows, err := db.Query("SELECT name, sum(pgsize) FROM dbstat GROUP BY name ORDER BY 2 DESC")
			require.NoError(t, err)
			for rows.Next() {
				var name string
				var size int64
				require.NoError(t, rows.Scan(&name, &size))
				t.Logf("  %s: %d bytes", name, size)
			}
			require.NoError(t, rows.Err())
			assert.LessOrEqual(t, fi.Size(), int64(budget)*9/8, "FILE over the byte budget and an eighth")
			assert.Greater(t, parents, 1, "the budget holds more than the newest parent")
		})
	}
}
