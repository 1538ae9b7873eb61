package handlers

import "github.com/hookwire/hookwire/sessions"

// cacheStatus is status.cache (PROTOCOL.md 4.9, 5): the prompt-cache
// figures summed over the sessions held, and per session a line for a
// view (the editors show share and busts per session).
type cacheStatus struct {
	Sessions         int   `json:"sessions"`
	Requests         int64 `json:"requests"`
	InputTokens      int64 `json:"inputTokens"`
	CacheReadTokens  int64 `json:"cacheReadTokens"`
	CacheWriteTokens int64 `json:"cacheWriteTokens"`
	Busts            int64 `json:"busts"`
	TokensLost       int64 `json:"tokensLost"`
	// CacheShare is over the sessions with cache figures; null when
	// NoCacheFigures.
	CacheShare *float64 `json:"cacheShare"`
	// NoCacheFigures: there were requests, and none of any session
	// reported a cache read or write (the provider reports no cache
	// figures, PROTOCOL.md 4.9).
	NoCacheFigures bool           `json:"noCacheFigures,omitempty"`
	PerSession     []cacheSummary `json:"perSession"`
}

// cacheSummary is one session of status.cache.perSession.
type cacheSummary struct {
	Session  string `json:"session"`
	Parent   string `json:"parent,omitempty"`
	Agent    string `json:"agent,omitempty"`
	Requests int64  `json:"requests"`
	// CacheShare is null when NoCacheFigures: a share of 0 would read as
	// a cache that never hits.
	CacheShare     *float64 `json:"cacheShare"`
	NoCacheFigures bool     `json:"noCacheFigures,omitempty"`
	Busts          int64    `json:"busts"`
	BustsInARow    int      `json:"bustsInARow"`
	// LastBust is the newest bust's cause and detail, absent without one.
	LastBust *sessions.CacheBust `json:"lastBust,omitempty"`
}

// cacheStatusOf sums list up. The total share is over the sessions that
// report cache figures, so one provider without them does not dilute it.
func cacheStatusOf(list []sessions.CacheSession) cacheStatus {
	st := cacheStatus{Sessions: len(list), PerSession: make([]cacheSummary, 0, len(list))}
	var withFigures sessions.CacheSession
	for _, c := range list {
		st.Requests += c.Requests
		st.InputTokens = sessions.SatAdd(st.InputTokens, c.InputTokens)
		st.CacheReadTokens = sessions.SatAdd(st.CacheReadTokens, c.CacheReadTokens)
		st.CacheWriteTokens = sessions.SatAdd(st.CacheWriteTokens, c.CacheWriteTokens)
		st.Busts += c.BustCount
		st.TokensLost = sessions.SatAdd(st.TokensLost, c.TokensLost)
		if !c.NoCacheFigures() {
			withFigures.InputTokens = sessions.SatAdd(withFigures.InputTokens, c.InputTokens)
			withFigures.CacheReadTokens = sessions.SatAdd(withFigures.CacheReadTokens, c.CacheReadTokens)
			withFigures.CacheWriteTokens = sessions.SatAdd(withFigures.CacheWriteTokens, c.CacheWriteTokens)
		}
		st.PerSession = append(st.PerSession, summaryOf(c))
	}
	st.NoCacheFigures = sessions.CacheSession{Requests: st.Requests, CacheReadTokens: st.CacheReadTokens,
		CacheWriteTokens: st.CacheWriteTokens}.NoCacheFigures()
	if !st.NoCacheFigures {
		share := round3(withFigures.CacheShare())
		st.CacheShare = &share
	}
	return st
}

// summaryOf is c's line of status.cache.perSession.
func summaryOf(c sessions.CacheSession) cacheSummary {
	sum := cacheSummary{Session: c.Session, Parent: c.Parent, Agent: c.Agent, Requests: c.Requests,
		CacheShare: shareOf(c), NoCacheFigures: c.NoCacheFigures(), Busts: c.BustCount, BustsInARow: c.BustsInARow}
	if n := len(c.Busts); n > 0 {
		b := c.Busts[n-1]
		sum.LastBust = &b
	}
	return sum
}

// shareOf is a session's cache share, rounded; nil when it has no cache
// figures.
func shareOf(c sessions.CacheSession) *float64 {
	if c.NoCacheFigures() {
		return nil
	}
	share := round3(c.CacheShare())
	return &share
}

func round3(f float64) float64 { return float64(int64(f*1000+0.5)) / 1000 }
