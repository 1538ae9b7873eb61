package handlers

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hookwire/hookwire/sessions"
)

// TestCacheStatusNoFigures: status.cache gives no share (null) and says
// noCacheFigures for a session whose provider reported no cache figures;
// the total's share is over the sessions with figures.
func TestCacheStatusNoFigures(t *testing.T) {
	none := sessions.CacheSession{Session: "ses_n", Requests: 3, InputTokens: 900}
	writes := sessions.CacheSession{Session: "ses_w", Requests: 1, InputTokens: 50, CacheWriteTokens: 50}
	reads := sessions.CacheSession{Session: "ses_r", Requests: 2, InputTokens: 100, CacheReadTokens: 300}
	for _, tt := range []struct {
		name string
		list []sessions.CacheSession
		want string
	}{
		{"no session", nil,
			`{"sessions":0,"requests":0,"inputTokens":0,"cacheReadTokens":0,"cacheWriteTokens":0,"busts":0,"tokensLost":0,"cacheShare":0,"perSession":[]}`},
		{"only a session without figures: no share anywhere", []sessions.CacheSession{none},
			`{"sessions":1,"requests":3,"inputTokens":900,"cacheReadTokens":0,"cacheWriteTokens":0,"busts":0,"tokensLost":0,"cacheShare":null,"noCacheFigures":true,
			  "perSession":[{"session":"ses_n","requests":3,"cacheShare":null,"noCacheFigures":true,"busts":0,"bustsInARow":0}]}`},
		{"a real 0% (writes, no reads) keeps its share", []sessions.CacheSession{writes},
			`{"sessions":1,"requests":1,"inputTokens":50,"cacheReadTokens":0,"cacheWriteTokens":50,"busts":0,"tokensLost":0,"cacheShare":0,
			  "perSession":[{"session":"ses_w","requests":1,"cacheShare":0,"busts":0,"bustsInARow":0}]}`},
		{"mixed: the total's share leaves the session without figures out", []sessions.CacheSession{none, reads},
			`{"sessions":2,"requests":5,"inputTokens":1000,"cacheReadTokens":300,"cacheWriteTokens":0,"busts":0,"tokensLost":0,"cacheShare":0.75,
			  "perSession":[{"session":"ses_n","requests":3,"cacheShare":null,"noCacheFigures":true,"busts":0,"bustsInARow":0},
			                {"session":"ses_r","requests":2,"cacheShare":0.75,"busts":0,"bustsInARow":0}]}`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := json.Marshal(cacheStatusOf(tt.list))
			require.NoError(t, err)
			assert.JSONEq(t, tt.want, string(got))
		})
	}
}
