package sessions

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hookwire/hookwire/core"
)

func TestHealthKeptAndRestored(t *testing.T) {
	h := newHarness(t, Config{})
	s := h.s
	until := epoch.Add(5 * time.Minute)
	s.ProviderHealth().Set(context.Background(), "fake/fake-model-3", core.ModelHealth{Until: until, Strikes: 1, Last: epoch, Class: core.FailureRateLimit, Message: "Rate limit reached"})
	s.ProviderHealth().Set(context.Background(), strings.Repeat("m", MaxModelBytes+1), core.ModelHealth{Until: until})
	assert.True(t, s.ProviderHealth().Cooling("fake/fake-model-3", epoch))
	assert.False(t, s.ProviderHealth().Cooling("fake/fake-model-3", until))
	assert.False(t, s.ProviderHealth().Cooling("fake/other", epoch))
	require.Len(t, s.ProviderHealth().List(), 1, "a model over the cap is not kept")

	s.Tracked().SetAgent(context.Background(), "ses_child", "explorer")
	s.Tracked().SetParent(context.Background(), "ses_child", "ses_parent")
	s.Tracked().SetRunning(context.Background(), "ses_child", "fake/fake-model")
	s.Tracked().AddSwitch(context.Background(), "ses_child", Switch{From: "fake/fake-model-3", To: "fake/fake-model", Reason: "rate-limit: Rate limit reached", At: epoch})
	h.task("ses_parent", "explorer", "Explore", "ses_child")

	data, err := s.Snapshot()
	require.NoError(t, err)
	r := newTestStore(Config{})
	require.NoError(t, r.Restore(data))
	got, ok := r.ProviderHealth().Of("fake/fake-model-3")
	require.True(t, ok)
	assert.True(t, got.Until.Equal(until))
	assert.Equal(t, core.FailureRateLimit, got.Class)
	assert.Equal(t, "ses_parent", r.Tracked().Parent("ses_child"))
	assert.Equal(t, "fake/fake-model", r.Tracked().Running("ses_child"))
	list := r.Tasks().List("ses_parent")
	require.Len(t, list, 1)
	require.Len(t, list[0].Switches, 1)
	assert.Equal(t, "fake/fake-model-3", list[0].Switches[0].From)
	assert.Equal(t, "fake/fake-model", list[0].Switches[0].To)

	again, err := r.Snapshot()
	require.NoError(t, err)
	assert.Equal(t, string(data), string(again), "the same state gives the same bytes")
}

func TestHealthBounds(t *testing.T) {
	s := newTestStore(Config{})
	for i := 0; i < MaxHealthModels+5; i++ {
		s.ProviderHealth().Set(context.Background(), fmt.Sprintf("p/m%d", i), core.ModelHealth{Until: epoch.Add(time.Hour), Last: epoch.Add(time.Duration(i) * time.Second)})
	}
	list := s.ProviderHealth().List()
	require.Len(t, list, MaxHealthModels)
	assert.Equal(t, fmt.Sprintf("p/m%d", MaxHealthModels+4), list[0].Model, "newest failure first")
	_, kept := s.ProviderHealth().Of("p/m4")
	assert.False(t, kept, "the oldest failures are forgotten first")
	_, kept = s.ProviderHealth().Of("p/m5")
	assert.True(t, kept)

	s.Tracked().SetAgent(context.Background(), "ses", "a")
	for i := 0; i < MaxSwitchesPerSession+3; i++ {
		s.Tracked().AddSwitch(context.Background(), "ses", Switch{From: "p/a", To: fmt.Sprintf("p/b%d", i), Reason: strings.Repeat("r", MaxReasonBytes+10), At: epoch})
	}
	sw := s.Tracked().Switches("ses")
	require.Len(t, sw, MaxSwitchesPerSession)
	assert.Equal(t, fmt.Sprintf("p/b%d", MaxSwitchesPerSession+2), sw[len(sw)-1].To, "the newest switches are kept")
	assert.Len(t, sw[0].Reason, MaxReasonBytes)

	s.Tracked().AddSwitch(context.Background(), "untracked", Switch{From: "p/a", To: "p/b"})
	assert.Nil(t, s.Tracked().Switches("untracked"), "an untracked session keeps no switch")
	s.Tracked().SetParent(context.Background(), "untracked", "x")
	assert.Equal(t, "", s.Tracked().Parent("untracked"))
}

func TestHealthCountsAgainstTheBudget(t *testing.T) {
	s := newTestStore(Config{})
	s.Tracked().SetAgent(context.Background(), "ses", "a")
	before := s.tracked.bytes
	s.Tracked().SetParent(context.Background(), "ses", "ses_parent")
	s.Tracked().SetRunning(context.Background(), "ses", "p/m")
	s.Tracked().AddSwitch(context.Background(), "ses", Switch{From: "p/a", To: "p/b", Reason: "why", At: epoch})
	assert.Greater(t, s.tracked.bytes, before)
	s.DeleteSession(context.Background(), "ses")
	assert.Equal(t, 0, s.tracked.bytes, "forgetting the session gives its bytes back")
}
