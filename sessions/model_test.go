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
)

func TestModelDecision(t *testing.T) {
	long := strings.Repeat("m", MaxModelBytes+1)
	fallback := ModelDecision{Model: "fake/fake-model-2", Rung: "fallback-chain", Changed: true}
	tests := []struct {
		name    string
		tracked bool // SetAgent ran for the session first
		set     []ModelDecision
		want    *ModelDecision
	}{
		{name: "kept for a tracked session", tracked: true, set: []ModelDecision{fallback}, want: &fallback},
		{name: "an untracked session keeps none", set: []ModelDecision{fallback}},
		{name: "the latest wins", tracked: true,
			set:  []ModelDecision{fallback, {Model: "fake/fake-model", Variant: "high", Rung: "category-default"}},
			want: &ModelDecision{Model: "fake/fake-model", Variant: "high", Rung: "category-default"}},
		{name: "a model over the cap is not kept and drops the older one", tracked: true,
			set: []ModelDecision{fallback, {Model: "p/" + long, Rung: "user"}}},
		{name: "a variant over the cap is not kept", tracked: true, set: []ModelDecision{{Model: "p/m", Variant: long}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newTestStore(Config{})
			if tt.tracked {
				s.Tracked().SetAgent(context.Background(), "ses_c", "explorer")
			}
			for _, d := range tt.set {
				s.Tracked().SetModelDecision(context.Background(), "ses_c", d)
			}
			got, ok := s.Tracked().ModelDecision("ses_c")
			if tt.want == nil {
				assert.False(t, ok)
			} else {
				require.True(t, ok)
				assert.Equal(t, *tt.want, got)
			}
			assertBytesCounted(t, s)
		})
	}
}

// sessions.list shows the decision of an entry's task session; the
// session's deletion forgets it with the session's agent.
func TestListShowsTaskSessionModel(t *testing.T) {
	h := newHarness(t, Config{})
	h.s.Tracked().SetAgent(context.Background(), "ses_a", "explorer")
	h.s.Tracked().SetModelDecision(context.Background(), "ses_a", ModelDecision{Model: "fake/fake-model-2", Rung: "fallback-chain", Changed: true})
	h.task("ses_p", "explorer", "look", "ses_a")
	h.task("ses_p", "oracle", "think", "ses_b")

	list := h.s.Tasks().List("ses_p")
	require.Len(t, list, 2)
	assert.Nil(t, list[0].Model, "ses_b has no decision")
	require.NotNil(t, list[1].Model)
	assert.Equal(t, ModelDecision{Model: "fake/fake-model-2", Rung: "fallback-chain", Changed: true}, *list[1].Model)

	h.s.DeleteSession(context.Background(), "ses_a")
	_, ok := h.s.Tracked().ModelDecision("ses_a")
	assert.False(t, ok)
}

// The byte counts stay exact, and the budget holds, when decisions come
// and go with the sessions they belong to.
func TestModelDecisionBytes(t *testing.T) {
	for seed := range uint64(10) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, 2))
			const budget = 8 << 10
			s := newTestStore(Config{MaxTrackedSessions: 16, MaxStateBytes: budget})
			pick := func(n int) string { return "s" + strconv.Itoa(rng.IntN(n)) }
			for range 2000 {
				switch rng.IntN(4) {
				case 0:
					s.Tracked().SetAgent(context.Background(), pick(24), "explorer")
				case 1, 2:
					s.Tracked().SetModelDecision(context.Background(), pick(24), ModelDecision{Model: "p/" + strings.Repeat("m", rng.IntN(300)), Rung: "fallback-chain", Changed: rng.IntN(2) == 0})
				case 3:
					s.DeleteSession(context.Background(), pick(24))
				}
				require.LessOrEqual(t, storeBytes(s), budget)
			}
			assertBytesCounted(t, s)
		})
	}
}
