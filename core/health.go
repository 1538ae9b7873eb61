package core

import (
	"strconv"
	"strings"
	"time"
)

// Provider health (PROTOCOL.md 4.8): which failed model calls count against
// a model, and for how long a model that failed cools down. Pure: the
// caller keeps the state (sessions.Store) and passes the clock.

// Failure classes. The first five count: the model is unusable for a while,
// another model may well work. The others are about the request, or the
// user's choice, and would fail (or be unwanted) on any model.
const (
	FailureRateLimit     = "rate-limit"      // 429, "rate limit", "too many requests"
	FailureQuota         = "quota"           // quota or credit exhausted, 402
	FailureOverloaded    = "overloaded"      // "overloaded", 529
	FailureServer        = "server-error"    // 5xx
	FailureModelNotFound = "model-not-found" // the provider does not know the model
	FailureBadRequest    = "bad-request"     // 400 and other 4xx
	FailureContextLength = "context-length"  // the prompt is too long for the model
	FailureContentFilter = "content-filter"  // the provider refused the content
	FailureAborted       = "aborted"         // the user (or a plugin) aborted
	FailureUnknown       = "unknown"         // nothing to go on
)

// ProviderFailure is what OpenCode reports about one failed model call: the
// HTTP status when known (0 when not, as in a session.status retry), the
// error's name (APIError, MessageAbortedError...) and its message.
type ProviderFailure struct {
	StatusCode int
	Name       string
	Message    string
}

// ClassifyFailure names f's class and whether it counts against the model.
// The words of the message decide before the status code, as providers
// answer quota exhaustion with 429 and overload with 500 or 529; a request
// problem (context length, content filter) is never the model's fault.
func ClassifyFailure(f ProviderFailure) (class string, counted bool) {
	msg := strings.ToLower(f.Message)
	name := strings.ToLower(f.Name)
	has := func(words ...string) bool {
		for _, w := range words {
			if strings.Contains(msg, w) {
				return true
			}
		}
		return false
	}
	switch {
	case strings.Contains(name, "abort") || has("aborted", "cancelled", "canceled"):
		return FailureAborted, false
	case has("context length", "context_length", "context window", "maximum context", "too many tokens", "prompt is too long"):
		return FailureContextLength, false
	case has("content filter", "content_filter", "content policy", "content_policy", "safety system"):
		return FailureContentFilter, false
	case f.StatusCode == 402 || has("insufficient_quota", "quota", "credit", "billing", "payment required"):
		return FailureQuota, true
	case strings.Contains(name, "modelnotfound") || has("model not found", "model_not_found", "unknown model", "no such model") ||
		f.StatusCode == 404 && has("model"):
		return FailureModelNotFound, true
	case f.StatusCode == 429 || has("rate limit", "rate_limit", "ratelimit", "too many requests"):
		return FailureRateLimit, true
	case f.StatusCode == 529 || has("overloaded", "over capacity"):
		return FailureOverloaded, true
	case f.StatusCode >= 500 && f.StatusCode <= 599 || has("internal server error", "bad gateway", "service unavailable", "gateway timeout"):
		return FailureServer, true
	case f.StatusCode >= 400 && f.StatusCode <= 499 || has("bad request", "invalid request"):
		return FailureBadRequest, false
	}
	return FailureUnknown, false
}

// HealthPolicy is how long a failing model cools down.
type HealthPolicy struct {
	// Cooldown is the base cooldown (default 5 minutes).
	Cooldown time.Duration
	// Window: a failure within Window of the previous one, after the
	// model cooled, is a repeat and doubles the cooldown (default 1 hour).
	Window time.Duration
	// MaxCooldown caps the doubled cooldown (default 1 hour).
	MaxCooldown time.Duration
}

// Defaults of HealthPolicy.
const (
	DefaultCooldown     = 5 * time.Minute
	DefaultHealthWindow = time.Hour
	DefaultMaxCooldown  = time.Hour
)

// withDefaults fills the zero fields of p.
func (p HealthPolicy) withDefaults() HealthPolicy {
	if p.Cooldown <= 0 {
		p.Cooldown = DefaultCooldown
	}
	if p.Window <= 0 {
		p.Window = DefaultHealthWindow
	}
	if p.MaxCooldown <= 0 {
		p.MaxCooldown = DefaultMaxCooldown
	}
	p.MaxCooldown = max(p.MaxCooldown, p.Cooldown)
	return p
}

// ModelHealth is one model's health: cooling until Until; Strikes counts
// the failures that started a cooldown within the window of each other;
// Last is the latest counted failure, with its class and message.
type ModelHealth struct {
	Until   time.Time
	Strikes int
	Last    time.Time
	Class   string
	Message string
}

// Cooling reports whether h is still cooling at now.
func (h ModelHealth) Cooling(now time.Time) bool { return now.Before(h.Until) }

// NextHealth is prev after a counted failure at now whose provider asked
// to wait retryAfter (0: it did not say). The cooldown is the longer of
// retryAfter and the policy's cooldown, which doubles for each repeat: a
// failure after the previous cooldown ended but within the window. A
// failure while the model still cools (OpenCode's own retries, the same
// failure reported by several events) starts nothing new: it only extends
// Until when its retryAfter reaches further.
func NextHealth(prev ModelHealth, now time.Time, retryAfter time.Duration, class, message string, p HealthPolicy) ModelHealth {
	p = p.withDefaults()
	next := prev
	next.Last, next.Class, next.Message = now, class, message
	if prev.Cooling(now) {
		if until := now.Add(retryAfter); until.After(next.Until) {
			next.Until = until
		}
		return next
	}
	next.Strikes = 1
	if prev.Strikes > 0 && !prev.Last.IsZero() && now.Sub(prev.Last) <= p.Window {
		next.Strikes = prev.Strikes + 1
	}
	cooldown := p.Cooldown
	for i := 1; i < next.Strikes && cooldown < p.MaxCooldown; i++ {
		cooldown *= 2
	}
	cooldown = min(cooldown, p.MaxCooldown)
	next.Until = now.Add(max(cooldown, retryAfter))
	return next
}

// MaxRetryAfter is the longest wait a provider's retry-after or OpenCode's
// retryAt can ask for; a longer one is taken as this.
const MaxRetryAfter = 24 * time.Hour

// RetryAtDelay is how long until retryAtMs (epoch milliseconds, OpenCode's
// next try) from now: 0 for a time past or not a number, at most
// MaxRetryAfter (a retryAt in 2200 cooled the model until 2200, and one
// past 2262 overflowed into the past).
func RetryAtDelay(retryAtMs float64, now time.Time) time.Duration {
	d := retryAtMs - float64(now.UnixMilli())
	if !(d > 0) { // also NaN
		return 0
	}
	if d >= float64(MaxRetryAfter.Milliseconds()) {
		return MaxRetryAfter
	}
	return time.Duration(d * float64(time.Millisecond))
}

// ParseRetryAfter reads a retry-after header value: seconds (fractions
// allowed) or an HTTP date. Anything else, or a time in the past, is 0.
// A value over a day is taken as a day.
func ParseRetryAfter(value string, now time.Time) time.Duration {
	value = strings.TrimSpace(value)
	if value == "" {
		return 0
	}
	const most = MaxRetryAfter
	if secs, err := strconv.ParseFloat(value, 64); err == nil {
		if secs <= 0 || secs != secs {
			return 0
		}
		if secs >= most.Seconds() {
			return most
		}
		return time.Duration(secs * float64(time.Second))
	}
	if at, err := time.Parse(time.RFC1123, value); err == nil {
		if d := at.Sub(now); d > 0 {
			return min(d, most)
		}
	}
	return 0
}
