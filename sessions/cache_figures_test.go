package sessions

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestNoCacheFigures(t *testing.T) {
	for _, tc := range []struct {
		name string
		c    CacheSession
		want bool
	}{
		{"no request yet", CacheSession{}, false},
		{"requests, reads and writes all 0", CacheSession{Requests: 3, InputTokens: 900}, true},
		{"writes but no reads: a real 0%", CacheSession{Requests: 1, InputTokens: 50, CacheWriteTokens: 50}, false},
		{"reads", CacheSession{Requests: 2, InputTokens: 50, CacheReadTokens: 10}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, tc.c.NoCacheFigures())
		})
	}
}
