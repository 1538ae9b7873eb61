package core

import (
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// The cooldown a model gets under the configured policy, failure after
// failure within the window, each failure as its cooldown ends: the cap
// bounds the doubled cooldown, and never cuts the configured cooldown
// itself (a cooldown above the cap is the cooldown).
func TestCooldownCap(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		name   string
		policy HealthPolicy
		want   []time.Duration // each failure's cooldown
	}{
		{"the cap binds after a doubling that passes it",
			HealthPolicy{Cooldown: 5 * time.Minute, MaxCooldown: 15 * time.Minute, Window: 24 * time.Hour},
			[]time.Duration{5 * time.Minute, 10 * time.Minute, 15 * time.Minute, 15 * time.Minute}},
		{"a cap that is no power of two of the cooldown",
			HealthPolicy{Cooldown: 3 * time.Minute, MaxCooldown: 20 * time.Minute, Window: 24 * time.Hour},
			[]time.Duration{3 * time.Minute, 6 * time.Minute, 12 * time.Minute, 20 * time.Minute, 20 * time.Minute}},
		{"a cooldown above the cap is kept, not cut to the cap",
			HealthPolicy{Cooldown: 30 * time.Minute, MaxCooldown: 10 * time.Minute, Window: 24 * time.Hour},
			[]time.Duration{30 * time.Minute, 30 * time.Minute}},
		{"a cooldown above the default cap is kept",
			HealthPolicy{Cooldown: 2 * time.Hour, Window: 24 * time.Hour},
			[]time.Duration{2 * time.Hour, 2 * time.Hour}},
		{"the default cap bounds the doubling",
			HealthPolicy{Cooldown: 20 * time.Minute, Window: 24 * time.Hour},
			[]time.Duration{20 * time.Minute, 40 * time.Minute, DefaultMaxCooldown, DefaultMaxCooldown}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var h ModelHealth
			now := t0
			for i, want := range tt.want {
				h = NextHealth(h, now, 0, FailureRateLimit, "Rate limit reached", tt.policy)
				assert.Equal(t, i+1, h.Strikes, "failure %d", i+1)
				assert.Equal(t, want, h.Until.Sub(now), "failure %d's cooldown", i+1)
				now = h.Until // the next failure as this cooldown ends
			}
		})
	}
}

// RetryAtDelay: the wait until OpenCode's retryAt, capped at a day like a
// retry-after header; nothing for a time past or not a number.
func TestRetryAtDelay(t *testing.T) {
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	ms := func(t time.Time) float64 { return float64(t.UnixMilli()) }
	for _, tt := range []struct {
		name string
		at   float64
		want time.Duration
	}{
		{"in 2 s", ms(now.Add(2 * time.Second)), 2 * time.Second},
		{"in 23 h", ms(now.Add(23 * time.Hour)), 23 * time.Hour},
		{"year 2200", ms(time.Date(2200, 1, 1, 0, 0, 0, 0, time.UTC)), MaxRetryAfter},
		{"year 2300 (UnixNano overflows)", ms(time.Date(2300, 1, 1, 0, 0, 0, 0, time.UTC)), MaxRetryAfter},
		{"1e300", 1e300, MaxRetryAfter},
		{"past", ms(now.Add(-time.Minute)), 0},
		{"NaN", math.NaN(), 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, RetryAtDelay(tt.at, now))
		})
	}
}
