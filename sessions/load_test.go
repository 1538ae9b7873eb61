package sessions

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// manyAgentsState is a state file with agents agents under one parent, one
// entry each, agent i's entry used at tick i+1 (so the last is newest).
func manyAgentsState(agents int) []byte {
	var b bytes.Buffer
	b.WriteString(`{"version":1,"clock":` + strconv.Itoa(agents) + `,"parents":[{"id":"ses_parent","counters":{`)
	for i := range agents {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `"agent-%d":1`, i)
	}
	b.WriteString(`},"entries":[`)
	for i := range agents {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"agent":"agent %d","alias":"agent-%d-1","taskId":"ses_%08d","label":"a task for agent %d","lastUse":"2026-01-02T03:04:05Z","use":%d}`,
			i, i, i, i, i+1)
	}
	b.WriteString(`]}],"sessionAgents":[]}`)
	return b.Bytes()
}

// A file with 64k agents under one parent took minutes to load (each
// agent beyond the bound scanned all the others). It loads in one pass,
// keeping the MaxAgentsPerParent newest agents and a bounded set of
// counters; BenchmarkRestoreManyAgents measures the time.
func TestRestoreManyAgents(t *testing.T) {
	const agents = 64 << 10
	data := manyAgentsState(agents)
	require.Greater(t, len(data), 8<<20, "the file is as large as the one that blocked initialize")

	s := newTestStore(Config{})
	require.NoError(t, s.Restore(data))
	st := s.Stats()
	assert.Equal(t, 1, st.Parents)
	assert.Equal(t, MaxAgentsPerParent, st.Entries)

	block := s.Tasks().ResumableSessions("ses_parent")
	require.Len(t, block, MaxAgentsPerParent)
	for i, a := range block {
		assert.Equal(t, "agent "+strconv.Itoa(agents-1-i), a.Agent, "the newest agents are kept, newest first")
	}
	p, _ := s.parents.list.Get("ses_parent")
	assert.Len(t, p.counters, MaxAliasPrefixesPerParent)
	for i := agents - MaxAgentsPerParent; i < agents; i++ {
		assert.Equal(t, 1, p.counters["agent-"+strconv.Itoa(i)], "a kept agent's counter is kept")
	}

	// A kept agent's counter continues; an agent with a new prefix is not
	// remembered, as MaxAliasPrefixesPerParent counters are held.
	s.Tasks().BeginCall(context.Background(), "c1", "ses_parent", "agent 65535", "new", "")
	s.Tasks().CompleteCall(context.Background(), "c1", out("ses_new"))
	assert.Equal(t, "agent-65535-2", s.Tasks().List("ses_parent")[0].Alias)
	s.Tasks().BeginCall(context.Background(), "c2", "ses_parent", "explorer", "new", "")
	s.Tasks().CompleteCall(context.Background(), "c2", out("ses_other"))
	assert.Equal(t, MaxAgentsPerParent+1, s.Stats().Entries)
	assertBytesCounted(t, s)
}

func BenchmarkRestoreManyAgents(b *testing.B) {
	data := manyAgentsState(64 << 10)
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		s := New(Config{})
		if err := s.Restore(data); err != nil {
			b.Fatal(err)
		}
	}
}

// A bad alias counter is repaired from the aliases present, never a
// reason to discard the file, and no counter overflows.
func TestRestoreRepairsCounters(t *testing.T) {
	entry := func(alias string, use int) string {
		return `{"agent":"explorer","alias":"` + alias + `","taskId":"ses_` + alias + `","label":"l","lastUse":"2026-01-02T03:04:05Z","use":` + strconv.Itoa(use) + `}`
	}
	doc := func(counter, entries string) string {
		return `{"version":1,"parents":[{"id":"p","counters":{"exp":` + counter + `},"entries":[` + entries + `]}]}`
	}
	tests := []struct {
		name      string
		data      string
		wantAlias string // the alias the next explorer task gets; "" none
		wantSaved string // the counter the next snapshot holds
	}{
		{"MaxInt64 is recomputed from the aliases", doc("9223372036854775807", entry("exp-3", 1)), "exp-4", "4"},
		{"negative", doc("-1", entry("exp-2", 1)), "exp-3", "3"},
		{"beyond int64", doc("1e30", entry("exp-2", 1)), "exp-3", "3"},
		{"fractional", doc("1.5", entry("exp-1", 1)), "exp-2", "2"},
		{"a string", doc(`"7"`, entry("exp-5", 1)), "exp-6", "6"},
		{"bad, without entries, starts over", doc("-5", ""), "exp-1", "1"},
		{"an alias number beyond the range does not raise it", doc("1", entry("exp-9223372036854775807", 1)), "exp-2", "2"},
		{"at the top of the range hands out no more", doc(strconv.Itoa(MaxAliasCounter), ""), "", strconv.Itoa(MaxAliasCounter)},
		{"just below the top hands out the last one", doc(strconv.Itoa(MaxAliasCounter-1), ""), "exp-" + strconv.Itoa(MaxAliasCounter), strconv.Itoa(MaxAliasCounter)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newTestStore(Config{MaxSessionsPerAgent: 5})
			require.NoError(t, s.Restore([]byte(tt.data)))
			s.Tasks().BeginCall(context.Background(), "c", "p", "explorer", "new", "")
			s.Tasks().CompleteCall(context.Background(), "c", out("ses_new"))
			var got string
			for _, e := range s.Tasks().List("p") {
				if e.TaskID == "ses_new" {
					got = e.Alias
				}
			}
			assert.Equal(t, tt.wantAlias, got)

			data, err := s.Snapshot()
			require.NoError(t, err)
			var saved struct {
				Parents []struct {
					Counters map[string]json.RawMessage `json:"counters"`
				} `json:"parents"`
			}
			require.NoError(t, json.Unmarshal(data, &saved))
			assert.Equal(t, tt.wantSaved, string(saved.Parents[0].Counters["exp"]))
			require.NoError(t, newTestStore(Config{}).Restore(data), "what it writes back loads")
		})
	}
}

// A logical clock near its maximum is renumbered on load, so the next use
// is still the newest.
func TestRestoreRepairsClock(t *testing.T) {
	maxU := strconv.FormatUint(math.MaxUint64, 10)
	data := `{"version":1,"clock":` + maxU + `,"parents":[{"id":"p","entries":[
		{"agent":"explorer","alias":"exp-2","taskId":"ses_b","label":"b","lastUse":"2026-01-02T03:04:05Z","use":` + maxU + `},
		{"agent":"explorer","alias":"exp-1","taskId":"ses_a","label":"a","lastUse":"2026-01-02T03:04:05Z","use":` + strconv.FormatUint(math.MaxUint64-1, 10) + `}]}]}`
	h := newHarness(t, Config{MaxSessionsPerAgent: 5})
	require.NoError(t, h.s.Restore([]byte(data)))
	assert.Equal(t, []string{"exp-2=ses_b b", "exp-1=ses_a a"}, h.aliases("p"), "order kept")
	h.resolve("p", "explorer", "exp-1")
	assert.Equal(t, []string{"exp-1=ses_a a", "exp-2=ses_b b"}, h.aliases("p"), "a use after the load is the newest")
	assert.Less(t, h.s.clock, uint64(maxClock))
}

// Strings over their caps in a state file are dropped (or, labels and
// frozen blocks, cut), not a reason to discard the file.
func TestRestoreCapsStrings(t *testing.T) {
	long := strings.Repeat("x", MaxIDBytes+1)
	longAgent := strings.Repeat("a", MaxAgentNameBytes+1)
	longLabel := strings.Repeat("é", MaxLabelBytes) // 2 bytes each
	bigBlock := strings.Repeat("b", MaxFrozenBlockBytes+1)
	e := func(agent, alias, task, label string, use int) string {
		return `{"agent":"` + agent + `","alias":"` + alias + `","taskId":"` + task + `","label":"` + label + `","lastUse":"2026-01-02T03:04:05Z","use":` + strconv.Itoa(use) + `}`
	}
	data := `{"version":1,"parents":[
		{"id":"` + long + `","entries":[` + e("explorer", "exp-1", "ses_x", "l", 9) + `]},
		{"id":"p","entries":[` +
		e(longAgent, "a-1", "ses_1", "l", 8) + `,` +
		e("explorer", "exp-9", long, "l", 7) + `,` +
		e("explorer", "exp-"+long, "ses_2", "l", 6) + `,` +
		e("explorer", "exp-1", "ses_3", longLabel, 5) + `],
		"frozen":[{"messageId":"` + long + `","block":"x"},{"messageId":"m_big","block":"` + bigBlock + `"},{"messageId":"m","block":"ok"}]}],
		"sessionAgents":[{"session":"` + long + `","agent":"a"},{"session":"s","agent":"` + longAgent + `"},{"session":"s2","agent":"b"}]}`
	s := newTestStore(Config{MaxSessionsPerAgent: 5})
	require.NoError(t, s.Restore([]byte(data)))

	assert.Equal(t, 1, s.Stats().Parents, "a parent with a long id is dropped")
	list := s.Tasks().List("p")
	require.Len(t, list, 1)
	assert.Equal(t, "ses_3", list[0].TaskID)
	assert.Equal(t, MaxLabelBytes, len(list[0].Label), "the label is cut at a character boundary")
	assert.Equal(t, strings.Repeat("é", MaxLabelBytes/2), list[0].Label)
	assert.Equal(t, 2, s.Stats().FrozenBlocks)
	assert.Equal(t, "", s.Frozen().Block(context.Background(), "p", "m_big", func() string { return "recomputed" }), "an oversized block is frozen empty")
	assert.Equal(t, "ok", s.Frozen().Block(context.Background(), "p", "m", func() string { return "recomputed" }))
	assert.Equal(t, 1, s.Stats().TrackedSessions)
	assert.Equal(t, "b", s.Tracked().Agent("s2"))

	// exp-9's entry is dropped (its task id is too long) but its number
	// still counts: the alias is never handed out again.
	s.Tasks().BeginCall(context.Background(), "c", "p", "explorer", "new", "")
	s.Tasks().CompleteCall(context.Background(), "c", out("ses_new"))
	assert.Equal(t, "exp-10", s.Tasks().List("p")[0].Alias)
}

// Parents beyond the byte budget are not loaded: the newest that fit are.
func TestRestoreAppliesByteBudget(t *testing.T) {
	src := newTestStore(Config{})
	block := strings.Repeat("b", 4000)
	for i := range 40 {
		src.Frozen().Block(context.Background(), "p"+strconv.Itoa(i), "m", func() string { return block })
	}
	data, err := src.Snapshot()
	require.NoError(t, err)
	require.Greater(t, len(data), 40*4000)

	const budget = 64 << 10
	dst := newTestStore(Config{MaxStateBytes: budget})
	require.NoError(t, dst.Restore(data))
	n := dst.Stats().Parents
	assert.Greater(t, n, 5)
	assert.Less(t, n, 40)
	for i := 39; i >= 0; i-- {
		kept := dst.parents.list.Has("p" + strconv.Itoa(i))
		assert.Equal(t, i >= 40-n, kept, "p%d: the newest parents are kept", i)
	}
	again, err := dst.Snapshot()
	require.NoError(t, err)
	assert.LessOrEqual(t, len(again), budget)
	assertBytesCounted(t, dst)
}

// A load whose context ends stops, and changes nothing.
func TestRestoreCancelled(t *testing.T) {
	h := populated(t, Config{})
	before, err := h.s.Snapshot()
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	err = h.s.RestoreFrom(ctx, bytes.NewReader(manyAgentsState(100)))
	require.ErrorIs(t, err, context.Canceled)
	after, err := h.s.Snapshot()
	require.NoError(t, err)
	assert.Equal(t, string(before), string(after))
}
