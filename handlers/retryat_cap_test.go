package handlers

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A retryAt far ahead (2200, 2300 — past 2262 UnixNano overflowed and the
// cooldown landed in 1715 — or a number past any date) cools the model
// for a day at most, as a retry-after header is capped; after that day it
// is healthy again.
func TestModelFailedRetryAtCappedAtADay(t *testing.T) {
	for _, tt := range []struct {
		name    string
		retryAt any
	}{
		{"2200", time.Date(2200, 1, 1, 0, 0, 0, 0, time.UTC).UnixMilli()},
		{"2300", time.Date(2300, 1, 1, 0, 0, 0, 0, time.UTC).UnixMilli()},
		{"1e300", 1e300},
		{"2300 as a string", "10413792000000"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := newFallbackRig(t, nil)
			r.child("ses_p", "ses_c", "oracle", "fake-model-3")
			params := retry("ses_c", r.now)
			params["retryAt"] = tt.retryAt
			res := r.failed(params)
			require.True(t, res.Counted)
			require.NotNil(t, res.Until)
			assert.Equal(t, r.now.Add(24*time.Hour), *res.Until, "a day, no more")
			assert.True(t, r.s.store.ProviderHealth().Cooling("fake/fake-model-3", r.now.Add(23*time.Hour)))
			assert.False(t, r.s.store.ProviderHealth().Cooling("fake/fake-model-3", r.now.Add(24*time.Hour+time.Second)), "healthy after a day")
		})
	}
}
