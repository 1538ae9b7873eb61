package sessions

import (
	"context"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// populate gives h's store a bit of everything.
func populate(h *harness) {
	h.task("p1", "explorer", "one", "ses_a")
	h.task("p1", "explorer", "two", "ses_b")
	h.task("p1", "explorer", "three", "ses_c") // exp-1 evicted, counter at 3
	h.task("p1", "oracle", "four", "ses_o")
	h.task("p2", "code reviewer", "five", "ses_r")
	h.resume("p1", "explorer", "two again", "exp-2", out("ses_b"))
	h.s.Frozen().Block(context.Background(), "p1", "m1", func() string { return "### Resumable Sessions\n- explorer: exp-1 one" })
	h.s.Frozen().Block(context.Background(), "p1", "m2", func() string { return "" })
	h.s.Tracked().SetAgent(context.Background(), "p1", "orchestrator")
	h.s.Tracked().SetAgent(context.Background(), "p2", "orchestrator")
	h.s.Tracked().SetAgent(context.Background(), "ses_a", "explorer")
	h.s.Tracked().SetModelDecision(context.Background(), "ses_a", ModelDecision{Model: "fake/m1", Rung: "agent-model"})
	h.s.Tasks().BeginCall(context.Background(), "pending", "p1", "explorer", "in flight", "")
}

// populated returns a store holding a bit of everything.
func populated(t *testing.T, cfg Config) *harness {
	h := newHarness(t, cfg)
	populate(h)
	return h
}

func TestSnapshotRoundTrip(t *testing.T) {
	src := populated(t, Config{})
	data, err := src.s.Snapshot()
	require.NoError(t, err)
	assert.Regexp(t, `^\{"version":1,`, string(data))

	dst := newHarness(t, Config{})
	dst.n = 1000 // fresh call ids
	dst.task("old", "explorer", "replaced by Restore", "ses_old")
	require.NoError(t, dst.s.Restore(data))

	t.Run("same content and order", func(t *testing.T) {
		assert.Equal(t, src.s.Tasks().List(""), dst.s.Tasks().List(""))
		assert.Equal(t, src.s.Tasks().ResumableSessions("p1"), dst.s.Tasks().ResumableSessions("p1"))
		assert.Empty(t, dst.s.Tasks().List("old"))
		again, err := dst.s.Snapshot()
		require.NoError(t, err)
		assert.Equal(t, string(data), string(again), "a restored store snapshots to the same bytes")
	})
	t.Run("pending calls are not restored", func(t *testing.T) {
		assert.Equal(t, 0, dst.s.Stats().PendingCalls)
	})
	t.Run("aliases resolve", func(t *testing.T) {
		act, id := dst.resolve("p1", "explorer", "exp-3")
		assert.Equal(t, TaskIDReplace, act)
		assert.Equal(t, "ses_c", id)
		act, id = dst.resolve("p2", "code reviewer", "code-reviewer-1")
		assert.Equal(t, TaskIDReplace, act)
		assert.Equal(t, "ses_r", id)
	})
	t.Run("counters continue", func(t *testing.T) {
		dst.task("p1", "explorer", "new", "ses_new")
		assert.Equal(t, "exp-4", dst.s.Tasks().List("p1")[0].Alias)
	})
	t.Run("frozen blocks and agents", func(t *testing.T) {
		assert.Equal(t, "### Resumable Sessions\n- explorer: exp-1 one",
			dst.s.Frozen().Block(context.Background(), "p1", "m1", func() string { return "recomputed" }))
		assert.Equal(t, "", dst.s.Frozen().Block(context.Background(), "p1", "m2", func() string { return "recomputed" }))
		assert.Equal(t, "orchestrator", dst.s.Tracked().Agent("p2"))
		assert.Equal(t, "explorer", dst.s.Tracked().Agent("ses_a"))
	})
}

func TestRestoreKeepsRecencyOrder(t *testing.T) {
	src := newHarness(t, Config{})
	src.task("p1", "explorer", "one", "ses_a")
	src.task("p2", "explorer", "two", "ses_b")
	src.task("p3", "explorer", "three", "ses_c")
	src.resolve("p1", "explorer", "exp-1") // p1 active again: p2 is the oldest
	src.s.Tracked().SetAgent(context.Background(), "s1", "a")
	src.s.Tracked().SetAgent(context.Background(), "s2", "b")
	src.s.Tracked().Agent("s1")
	data, err := src.s.Snapshot()
	require.NoError(t, err)

	dst := newHarness(t, Config{MaxParents: 3, MaxTrackedSessions: 2})
	require.NoError(t, dst.s.Restore(data))
	dst.n = 1000
	dst.task("p4", "explorer", "four", "ses_d") // evicts the least recently active
	dst.s.Tracked().SetAgent(context.Background(), "s3", "c")
	assert.Empty(t, dst.s.Tasks().List("p2"))
	assert.Len(t, dst.s.Tasks().List("p1"), 1)
	assert.Len(t, dst.s.Tasks().List("p3"), 1)
	assert.Equal(t, "", dst.s.Tracked().Agent("s2"))
	assert.Equal(t, "a", dst.s.Tracked().Agent("s1"))

	// The logical clock continues: a use after Restore is the newest.
	dst.resolve("p3", "explorer", "exp-1")
	assert.Equal(t, "p3", dst.s.Tasks().List("")[0].Parent)
}

func TestRestoreAppliesBounds(t *testing.T) {
	src := newHarness(t, Config{MaxSessionsPerAgent: 5, MaxParents: 10})
	for i := 1; i <= 5; i++ {
		src.task("p1", "explorer", "t"+strconv.Itoa(i), "ses_"+strconv.Itoa(i))
		src.task("p"+strconv.Itoa(i+1), "explorer", "x", "ses_x"+strconv.Itoa(i))
	}
	src.resolve("p1", "explorer", "exp-1")
	data, err := src.s.Snapshot()
	require.NoError(t, err)

	dst := newHarness(t, Config{MaxSessionsPerAgent: 2, MaxParents: 3})
	require.NoError(t, dst.s.Restore(data))
	assert.Equal(t, 3, dst.s.Stats().Parents)
	assert.Equal(t, []string{"exp-1=ses_1 t1", "exp-5=ses_5 t5"}, dst.aliases("p1"))
	dst.n = 1000
	dst.task("p1", "explorer", "new", "ses_new")
	assert.Equal(t, "exp-6", dst.s.Tasks().List("p1")[0].Alias)
}

func TestRestoreErrors(t *testing.T) {
	entry := `{"agent":"explorer","alias":"exp-1","taskId":"ses_a","label":"l","lastUse":"2026-01-02T03:04:05Z","use":1}`
	tests := []struct {
		name string
		data string
		err  string
	}{
		{"empty", ``, "decoding session state"},
		{"not JSON", `{"version":1,`, "decoding session state"},
		{"not an object", `[1,2]`, "decoding session state"},
		{"no version", `{"parents":[]}`, "no format version"},
		{"version 0", `{"version":0}`, "unknown format version 0"},
		{"version 2", `{"version":2,"parents":[]}`, "unknown format version 2"},
		{"version a string", `{"version":"1"}`, "decoding session state"},
		{"trailing garbage", `{"version":1} x`, "decoding session state"},
		{"wrong type", `{"version":1,"parents":{}}`, "decoding session state"},
		{"parent twice", `{"version":1,"parents":[{"id":"p"},{"id":"p"}]}`, `parent "p" listed twice`},
		{"entry without alias", `{"version":1,"parents":[{"id":"p","entries":[{"agent":"explorer","taskId":"ses_a","use":1}]}]}`, "must not be empty"},
		{"alias twice", `{"version":1,"parents":[{"id":"p","entries":[` + entry + `,` + entry + `]}]}`, `alias "exp-1" listed twice`},
		{"member twice", `{"version":1,"parents":[],"parents":[]}`, `member "parents" listed twice`},
		{"frozen twice", `{"version":1,"parents":[{"id":"p","frozen":[{"messageId":"m"},{"messageId":"m"}]}]}`, "listed twice"},
		{"agent twice", `{"version":1,"sessionAgents":[{"session":"s","agent":"a"},{"session":"s","agent":"b"}]}`, "listed twice"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := populated(t, Config{})
			before, err := h.s.Snapshot()
			require.NoError(t, err)
			err = h.s.Restore([]byte(tt.data))
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.err)
			after, err := h.s.Snapshot()
			require.NoError(t, err)
			assert.Equal(t, string(before), string(after), "a failed Restore changes nothing")
			assert.Equal(t, 1, h.s.Stats().PendingCalls)
		})
	}
}

func TestRestoreCounterBehindAliases(t *testing.T) {
	s := newTestStore(Config{})
	require.NoError(t, s.Restore([]byte(`{"version":1,"parents":[{"id":"p","counters":{"exp":1},"entries":[
		{"agent":"explorer","alias":"exp-7","taskId":"ses_a","label":"l","lastUse":"2026-01-02T03:04:05Z","use":3}]}]}`)))
	s.Tasks().BeginCall(context.Background(), "c", "p", "explorer", "new", "")
	s.Tasks().CompleteCall(context.Background(), "c", out("ses_b"))
	assert.Equal(t, "exp-8", s.Tasks().List("p")[0].Alias)
}

func TestRestoreMinimalDocument(t *testing.T) {
	s := newTestStore(Config{})
	require.NoError(t, s.Restore([]byte(`{"version":1}`)))
	assert.Equal(t, Stats{}, s.Stats())
}
