package sessions

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hookwire/hookwire/core"
)

// parentBytes computes what the budget counts for p from its contents.
func parentBytes(p *parentState) int {
	n := parentCost(p.id)
	for prefix := range p.counters {
		n += counterCost(prefix)
	}
	for _, a := range p.agents {
		n += agentCost(a.name)
		for _, e := range a.entries.All() {
			n += entryCost(e)
		}
	}
	if p.frozen != nil {
		for _, fb := range p.frozen.All() {
			n += frozenCost(fb)
		}
	}
	return n
}

// assertBytesCounted checks the running byte counts against a recount.
func assertBytesCounted(t *testing.T, s *Store) {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	parents, tracked, pending := 0, 0, 0
	for _, p := range s.parents.list.All() {
		n := parentBytes(p)
		assert.Equal(t, n, p.bytes, "parent %q bytes", p.id)
		parents += n
	}
	for _, sa := range s.tracked.list.All() {
		tracked += trackedCost(sa)
	}
	for _, pc := range s.calls.list.All() {
		pending += pendingCost(pc)
	}
	assert.Equal(t, parents, s.parents.bytes, "parent bytes")
	assert.Equal(t, tracked, s.tracked.bytes, "tracked session bytes")
	assert.Equal(t, pending, s.calls.bytes, "pending call bytes")
}

func TestJSONLen(t *testing.T) {
	tests := []struct {
		in   string
		want int
	}{
		{"", 0},
		{"plain <html> & text", 19},
		{`a"b\c`, 7},
		{"a\nb\tc\r", 9},
		{"\x00\x1f", 12},
		{"é€😀", 2 + 3 + 4},
		{"\xff\xfe", 12},
		{"\u2028", 6},
	}
	for _, tt := range tests {
		t.Run(strconv.Quote(tt.in), func(t *testing.T) {
			assert.Equal(t, tt.want, jsonLen(tt.in))
			s := newTestStore(Config{})
			s.Tracked().SetAgent(context.Background(), "s", tt.in)
			data, err := s.Snapshot()
			require.NoError(t, err)
			assert.Contains(t, string(data), `"agent":"`, "sanity")
			assert.Equal(t, len(`{"version":1,"clock":0,"parents":[],"sessionAgents":[{"session":"s","agent":""}]}`)+tt.want, len(data),
				"jsonLen counts what the state file holds")
		})
	}
}

func TestCutBytes(t *testing.T) {
	assert.Equal(t, "abc", cutBytes("abc", 5))
	assert.Equal(t, "ab", cutBytes("abc", 2))
	assert.Equal(t, "a", cutBytes("aé", 2), "never half a character")
	assert.Equal(t, "", cutBytes("😀", 3))
}

// Strings over their caps are served but not kept, so no client can make
// the store hold them.
func TestStringCaps(t *testing.T) {
	long := strings.Repeat("x", MaxIDBytes+1)
	longAgent := strings.Repeat("a", MaxAgentNameBytes+1)
	tests := []struct {
		name string
		run  func(h *harness)
		want Stats
	}{
		{"a long call id is not recorded", func(h *harness) {
			h.s.Tasks().BeginCall(context.Background(), long, "p", "explorer", "l", "")
			h.s.Tasks().CompleteCall(context.Background(), long, out("ses_a"))
		}, Stats{}},
		{"a long parent id is not recorded", func(h *harness) {
			h.s.Tasks().BeginCall(context.Background(), "c", long, "explorer", "l", "")
			h.s.Tasks().CompleteCall(context.Background(), "c", out("ses_a"))
		}, Stats{}},
		{"a long agent name is not recorded", func(h *harness) {
			h.s.Tasks().BeginCall(context.Background(), "c", "p", longAgent, "l", "")
			h.s.Tasks().CompleteCall(context.Background(), "c", out("ses_a"))
		}, Stats{}},
		{"a long alias prefix is not recorded", func(h *harness) {
			h.s.cfg.AliasOverrides = map[string]string{"explorer": strings.Repeat("e", MaxIDBytes)}
			h.s.Tasks().BeginCall(context.Background(), "c", "p", "explorer", "l", "")
			h.s.Tasks().CompleteCall(context.Background(), "c", out("ses_a"))
		}, Stats{}},
		{"a long task id is not remembered", func(h *harness) {
			h.s.Tasks().BeginCall(context.Background(), "c", "p", "explorer", "l", "")
			h.s.Tasks().CompleteCall(context.Background(), "c", out("ses_"+long))
		}, Stats{}},
		{"a long session id's agent is not tracked", func(h *harness) {
			h.s.Tracked().SetAgent(context.Background(), long, "explorer")
		}, Stats{}},
		{"a long agent name is not tracked, and forgets the old one", func(h *harness) {
			h.s.Tracked().SetAgent(context.Background(), "s", "explorer")
			h.s.Tracked().SetAgent(context.Background(), "s", longAgent)
		}, Stats{}},
		{"a long message id freezes nothing", func(h *harness) {
			assert.Equal(h.t, "", h.s.Frozen().Block(context.Background(), "p", long, func() string { return "block" }))
		}, Stats{}},
		{"a long session id freezes nothing", func(h *harness) {
			assert.Equal(h.t, "", h.s.Frozen().Block(context.Background(), long, "m", func() string { return "block" }))
		}, Stats{}},
		{"an oversized block is frozen empty, every time", func(h *harness) {
			big := strings.Repeat("b", MaxFrozenBlockBytes+1)
			assert.Equal(h.t, "", h.s.Frozen().Block(context.Background(), "p", "m", func() string { return big }))
			assert.Equal(h.t, "", h.s.Frozen().Block(context.Background(), "p", "m", func() string { return "small now" }))
		}, Stats{Parents: 1, FrozenBlocks: 1}},
		{"ids at the caps are kept", func(h *harness) {
			id := strings.Repeat("i", MaxIDBytes)
			h.s.Tasks().BeginCall(context.Background(), id, id, "explorer", "l", "")
			h.s.Tasks().CompleteCall(context.Background(), id, out(id))
			h.s.Tracked().SetAgent(context.Background(), id, strings.Repeat("a", MaxAgentNameBytes))
		}, Stats{Parents: 1, Entries: 1, TrackedSessions: 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, Config{})
			tt.run(h)
			assert.Equal(t, tt.want, h.s.Stats())
			assertBytesCounted(t, h.s)
		})
	}
}

func TestLabelCut(t *testing.T) {
	h := newHarness(t, Config{})
	h.task("p", "explorer", strings.Repeat("ü", MaxLabelBytes), "ses_a")
	assert.Equal(t, strings.Repeat("ü", MaxLabelBytes/2), h.s.Tasks().List("p")[0].Label)
}

// A resolution with an over-long task_id still answers as for any unknown
// id: it is passed on if it looks like a session id, else removed.
func TestLongRequestedID(t *testing.T) {
	h := newHarness(t, Config{})
	h.task("p", "explorer", "l", "ses_a")
	act, id := h.resolve("p", "explorer", "ses_"+strings.Repeat("x", MaxIDBytes))
	assert.Equal(t, TaskIDReplace, act)
	assert.Len(t, id, MaxIDBytes+4)
	act, _ = h.resolve("p", "explorer", strings.Repeat("x", MaxIDBytes+1))
	assert.Equal(t, TaskIDRemove, act)
}

// The byte budget forgets the least recently active parents, never the
// one in use, and keeps the state file within it.
func TestByteBudgetEvictsLeastRecentParent(t *testing.T) {
	const budget = 64 << 10
	h := newHarness(t, Config{MaxStateBytes: budget})
	block := strings.Repeat("b", 4000)
	for i := range 100 {
		p := "p" + strconv.Itoa(i)
		h.task(p, "explorer", "l", "ses_"+strconv.Itoa(i))
		h.s.Frozen().Block(context.Background(), p, "m", func() string { return block })
		h.s.mu.Lock()
		assert.LessOrEqual(t, storeBytes(h.s), budget)
		h.s.mu.Unlock()
	}
	n := h.s.Stats().Parents
	assert.Greater(t, n, 5)
	assert.Less(t, n, 100)
	for i := range 100 {
		assert.Equal(t, i >= 100-n, len(h.s.Tasks().List("p"+strconv.Itoa(i))) == 1, "p%d", i)
	}
	data, err := h.s.Snapshot()
	require.NoError(t, err)
	assert.LessOrEqual(t, len(data), budget, "the state file stays within the budget")
	assertBytesCounted(t, h.s)

	// One parent alone over the budget is kept: it is the one in use.
	one := newHarness(t, Config{MaxStateBytes: 1000})
	one.s.Frozen().Block(context.Background(), "p", "m", func() string { return block })
	assert.Equal(t, block, one.s.Frozen().Block(context.Background(), "p", "m", func() string { return "x" }))
}

// One large item evicts as many small ones as it takes: the budget is
// enforced by a loop, not by one eviction per change.
func TestByteBudgetEvictsUntilItFits(t *testing.T) {
	const budget = 16 << 10
	h := newHarness(t, Config{MaxStateBytes: budget})
	for i := range 40 {
		p := "p" + strconv.Itoa(i)
		h.task(p, "x", "", "ses_"+strconv.Itoa(i)) // a small parent each
	}
	h.s.mu.Lock()
	p39, _ := h.s.parents.list.Get("p39")
	small := p39.bytes
	require.Greater(t, storeBytes(h.s), budget-small, "full of small parents")
	h.s.mu.Unlock()
	before := h.s.Stats().Parents

	block := strings.Repeat("b", 8<<10)
	assert.Equal(t, block, h.s.Frozen().Block(context.Background(), "p39", "m", func() string { return block }))

	h.s.mu.Lock()
	assert.LessOrEqual(t, storeBytes(h.s), budget)
	h.s.mu.Unlock()
	assert.LessOrEqual(t, h.s.Stats().Parents, before-(8<<10)/small, "enough small parents are forgotten for the block")
	assert.Equal(t, block, h.s.Frozen().Block(context.Background(), "p39", "m", func() string { return "x" }), "the block's parent is kept")
	assert.Len(t, h.s.Tasks().List("p39"), 1)
	assert.Empty(t, h.s.Tasks().List("p0"), "the least recent parent is forgotten")
	assertBytesCounted(t, h.s)
}

// assertWithinBudget checks the store fits its budget, or else holds only
// what enforceBudget keeps: the one parent in use and nothing else.
func assertWithinBudget(t *testing.T, s *Store) {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	if storeBytes(s) <= s.cfg.MaxStateBytes {
		return
	}
	assert.LessOrEqual(t, s.parents.list.Len(), 1, "over the budget (%d > %d) with parents left to evict", storeBytes(s), s.cfg.MaxStateBytes)
	assert.Zero(t, s.tracked.list.Len(), "over the budget with tracked sessions left to evict")
	assert.Zero(t, s.calls.list.Len(), "over the budget with pending calls left to evict")
}

// Tracked sessions are evicted when they hold more bytes than the parents.
func TestByteBudgetEvictsTrackedSessions(t *testing.T) {
	const budget = 32 << 10
	h := newHarness(t, Config{MaxStateBytes: budget})
	h.task("p", "explorer", "l", "ses_a")
	agent := strings.Repeat("a", MaxAgentNameBytes)
	for i := range 1000 {
		h.s.Tracked().SetAgent(context.Background(), "s"+strconv.Itoa(i), agent)
	}
	st := h.s.Stats()
	assert.Equal(t, 1, st.Entries, "the parent is kept")
	assert.Less(t, st.TrackedSessions, 1000)
	assert.Equal(t, agent, h.s.Tracked().Agent("s999"), "the newest session is kept")
	assert.Equal(t, "", h.s.Tracked().Agent("s0"), "the oldest is forgotten")
	assertBytesCounted(t, h.s)
}

// The running byte counts match a recount after any mix of operations.
func TestByteAccountingRandomOps(t *testing.T) {
	for seed := range uint64(20) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, 1))
			h := newHarness(t, Config{MaxParents: 8, MaxTrackedSessions: 16, MaxPendingCalls: 8, MaxSessionsPerAgent: 2, MaxStateBytes: 8 << 10})
			pick := func(prefix string, n int) string { return prefix + strconv.Itoa(rng.IntN(n)) }
			agents := []string{"explorer", "oracle", "fixer", "designer"}
			for range 2000 {
				parent := pick("p", 12)
				switch rng.IntN(9) {
				case 0, 1:
					c := pick("c", 20)
					h.s.Tasks().BeginCall(context.Background(), c, parent, agents[rng.IntN(4)], pick("label ", 50), pick("", 3)+pick("exp-", 4))
				case 2, 3:
					out := core.TaskOutcome{TaskID: pick("ses_", 30)}
					if rng.IntN(4) == 0 {
						out = core.TaskOutcome{SessionNotFound: true}
					}
					h.s.Tasks().CompleteCall(context.Background(), pick("c", 20), out)
				case 4:
					h.s.Tracked().SetAgent(context.Background(), pick("s", 24), agents[rng.IntN(4)])
				case 5:
					h.s.Frozen().Block(context.Background(), parent, pick("m", 10), func() string { return strings.Repeat("b", rng.IntN(600)) })
				case 6:
					h.s.Frozen().Retain(context.Background(), parent, func(string) bool { return rng.IntN(2) == 0 })
				case 7:
					if rng.IntN(5) == 0 {
						h.s.DeleteSession(context.Background(), pick("ses_", 30))
					} else {
						h.s.DeleteSession(context.Background(), parent)
					}
				case 8:
					h.s.Tasks().ResumableSessions(parent)
				}
				assertWithinBudget(t, h.s)
			}
			assertBytesCounted(t, h.s)
			data, err := h.s.Snapshot()
			require.NoError(t, err)
			dst := newTestStore(h.s.cfg)
			require.NoError(t, dst.Restore(data))
			assertBytesCounted(t, dst)
		})
	}
}

// storeBytes is what the budget counts (enforceBudget's sum).
func storeBytes(s *Store) int { return s.parents.bytes + s.tracked.bytes + s.calls.bytes }
