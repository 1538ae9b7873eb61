package core

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

func TestClassifyFailure(t *testing.T) {
	tests := []struct {
		name    string
		f       ProviderFailure
		class   string
		counted bool
	}{
		{"429 status", ProviderFailure{StatusCode: 429, Message: "slow down"}, FailureRateLimit, true},
		{"retry event text, no status", ProviderFailure{Message: "Rate limit reached for fake-model-3"}, FailureRateLimit, true},
		{"too many requests", ProviderFailure{Message: "Too Many Requests"}, FailureRateLimit, true},
		{"quota on a 429", ProviderFailure{StatusCode: 429, Message: "You exceeded your current quota (insufficient_quota)"}, FailureQuota, true},
		{"credit exhausted", ProviderFailure{StatusCode: 400, Message: "Your credit balance is too low"}, FailureQuota, true},
		{"402", ProviderFailure{StatusCode: 402}, FailureQuota, true},
		{"overloaded 529", ProviderFailure{StatusCode: 529, Message: "Overloaded"}, FailureOverloaded, true},
		{"overloaded on a 500", ProviderFailure{StatusCode: 500, Message: "overloaded_error"}, FailureOverloaded, true},
		{"503", ProviderFailure{StatusCode: 503, Message: "upstream"}, FailureServer, true},
		{"500 without text", ProviderFailure{StatusCode: 500}, FailureServer, true},
		{"model not found 404", ProviderFailure{StatusCode: 404, Message: "The model `x` does not exist"}, FailureModelNotFound, true},
		{"model not found by name", ProviderFailure{Name: "ProviderModelNotFoundError", Message: "x"}, FailureModelNotFound, true},
		{"model not found text", ProviderFailure{Message: "Model not found: ghost/big-model."}, FailureModelNotFound, true},
		{"400 bad request", ProviderFailure{StatusCode: 400, Message: "Invalid value for tools"}, FailureBadRequest, false},
		{"404 not about a model", ProviderFailure{StatusCode: 404, Message: "not here"}, FailureBadRequest, false},
		{"context length on a 400", ProviderFailure{StatusCode: 400, Message: "This model's maximum context length is 128000 tokens"}, FailureContextLength, false},
		{"context length on a 429 stays a request problem", ProviderFailure{StatusCode: 429, Message: "context_length_exceeded"}, FailureContextLength, false},
		{"content filter", ProviderFailure{StatusCode: 400, Message: "blocked by the content filter"}, FailureContentFilter, false},
		{"user abort", ProviderFailure{Name: "MessageAbortedError", Message: "The operation was aborted."}, FailureAborted, false},
		{"task cancelled", ProviderFailure{Message: "Task cancelled"}, FailureAborted, false},
		{"nothing known", ProviderFailure{Message: "socket hang up"}, FailureUnknown, false},
		{"empty", ProviderFailure{}, FailureUnknown, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			class, counted := ClassifyFailure(tt.f)
			assert.Equal(t, tt.class, class)
			assert.Equal(t, tt.counted, counted)
		})
	}
}

func TestNextHealth(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	p := HealthPolicy{Cooldown: 5 * time.Minute, Window: time.Hour, MaxCooldown: 20 * time.Minute}
	type step struct {
		at         time.Duration // after t0
		retryAfter time.Duration
		wantUntil  time.Duration // after t0
		wantStrike int
	}
	tests := []struct {
		name  string
		steps []step
	}{
		{"first failure cools for the cooldown", []step{{0, 2 * time.Second, 5 * time.Minute, 1}}},
		{"a longer retry-after wins", []step{{0, 10 * time.Minute, 10 * time.Minute, 1}}},
		{"failures while cooling start nothing new", []step{
			{0, 2 * time.Second, 5 * time.Minute, 1}, {2 * time.Second, 2 * time.Second, 5 * time.Minute, 1}, {time.Minute, 0, 5 * time.Minute, 1}}},
		{"while cooling a longer retry-after extends", []step{{0, 0, 5 * time.Minute, 1}, {4 * time.Minute, 3 * time.Minute, 7 * time.Minute, 1}}},
		{"a repeat within the window doubles, up to the cap", []step{
			{0, 0, 5 * time.Minute, 1},
			{6 * time.Minute, 0, 16 * time.Minute, 2},
			{17 * time.Minute, 0, 37 * time.Minute, 3},
			{38 * time.Minute, 0, 58 * time.Minute, 4}}},
		{"after the window a failure starts over", []step{{0, 0, 5 * time.Minute, 1}, {2 * time.Hour, 0, 2*time.Hour + 5*time.Minute, 1}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var h ModelHealth
			for i, s := range tt.steps {
				h = NextHealth(h, t0.Add(s.at), s.retryAfter, FailureRateLimit, "m", p)
				assert.Equal(t, t0.Add(s.wantUntil), h.Until, "step %d until", i)
				assert.Equal(t, s.wantStrike, h.Strikes, "step %d strikes", i)
				assert.True(t, h.Cooling(t0.Add(s.at)))
				assert.False(t, h.Cooling(h.Until))
			}
		})
	}
	t.Run("zero policy takes the defaults", func(t *testing.T) {
		h := NextHealth(ModelHealth{}, t0, 0, FailureServer, "x", HealthPolicy{})
		assert.Equal(t, t0.Add(DefaultCooldown), h.Until)
	})
}

func TestParseRetryAfter(t *testing.T) {
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		in   string
		want time.Duration
	}{
		{"2", 2 * time.Second},
		{" 1.5 ", 1500 * time.Millisecond},
		{"0", 0},
		{"-3", 0},
		{"NaN", 0},
		{"abc", 0},
		{"", 0},
		{"999999", 24 * time.Hour},
		{now.Add(90 * time.Second).Format(time.RFC1123), 90 * time.Second},
		{now.Add(-time.Minute).Format(time.RFC1123), 0},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, ParseRetryAfter(tt.in, now), tt.in)
	}
}
