package handlers

import "github.com/hookwire/hookwire/sessions"

// cacheStatus is status.cache (PROTOCOL.md 4.9, 5): the prompt-cache
// figures summed over the sessions held, and per session a line for a
// view (the editors show share and busts per session).
type cacheStatus struct {
	Sessions         int            `json:"sessions"`
	Requests         int64          `json:"requests"`
	InputTokens      int64          `json:"inputTokens"`
	CacheReadTokens  int64          `json:"cacheReadTokens"`
	CacheWriteTokens int64          `json:"cacheWriteTokens"`
	Busts            int64          `json:"busts"`
	TokensLost       int64          `json:"tokensLost"`
	CacheShare       float64        `json:"cacheShare"`
	PerSession       []cacheSummary `json:"perSession"`
}

// cacheSummary is one session of status.cache.perSession.
type cacheSummary struct {
	Session     string  `json:"session"`
	Parent      string  `json:"parent,omitempty"`
	Agent       string  `json:"agent,omitempty"`
	Requests    int64   `json:"requests"`
	CacheShare  float64 `json:"cacheShare"`
	Busts       int64   `json:"busts"`
	BustsInARow int     `json:"bustsInARow"`
	// LastBust is the newest bust's cause and detail, absent without one.
	LastBust *sessions.CacheBust `json:"lastBust,omitempty"`
}

// cacheStatusOf sums list up.
func cacheStatusOf(list []sessions.CacheSession) cacheStatus {
	st := cacheStatus{Sessions: len(list), PerSession: make([]cacheSummary, 0, len(list))}
	for _, c := range list {
		st.Requests += c.Requests
		st.InputTokens += c.InputTokens
		st.CacheReadTokens += c.CacheReadTokens
		st.CacheWriteTokens += c.CacheWriteTokens
		st.Busts += c.BustCount
		st.TokensLost += c.TokensLost
		sum := cacheSummary{Session: c.Session, Parent: c.Parent, Agent: c.Agent, Requests: c.Requests,
			CacheShare: round3(c.CacheShare()), Busts: c.BustCount, BustsInARow: c.BustsInARow}
		if n := len(c.Busts); n > 0 {
			b := c.Busts[n-1]
			sum.LastBust = &b
		}
		st.PerSession = append(st.PerSession, sum)
	}
	st.CacheShare = round3(sessions.CacheSession{InputTokens: st.InputTokens, CacheReadTokens: st.CacheReadTokens,
		CacheWriteTokens: st.CacheWriteTokens}.CacheShare())
	return st
}

func round3(f float64) float64 { return float64(int64(f*1000+0.5)) / 1000 }
