package sessions

import (
	"math"

	"github.com/hookwire/hookwire/core"
	"github.com/hookwire/hookwire/internal/lru"
)

// The prompt-cache figures of each session (PROTOCOL.md 4.9): requests,
// tokens, busts and their causes. They are kept in a set of their own
// beside the store's other parts, with their own lock, bound and member of
// the state file ("cache"), and forgotten with the session.

// Bounds of the prompt-cache figures (PROTOCOL.md 7).
const (
	// MaxCacheSessions is how many sessions the set keeps figures for;
	// beyond it the session whose last request is oldest is forgotten.
	MaxCacheSessions = 256
	// MaxBustsPerSession is how many busts a session keeps (the newest);
	// CacheSession.BustCount counts them all.
	MaxBustsPerSession = 32
	// maxPendingPrompts is how many prompts of one session wait for their
	// usage (the usage of a request may come after the next request's
	// prompt).
	maxPendingPrompts = 4
)

// Usage is one assistant message's usage, as message.updated reports it.
type Usage struct {
	Session, Message string
	// Model is "provider/model".
	Model                                string
	Input, Output, CacheRead, CacheWrite int64
}

// CacheBust is one bust of a session (sessions --json's busts).
type CacheBust struct {
	Message    string `json:"message"`
	TokensLost int64  `json:"tokensLost"`
	core.Bust
}

// CacheSession is a session's figures (sessions --json's cache list).
type CacheSession struct {
	Session string `json:"session"`
	// Parent is the session that started it with a task ("" for a
	// top-level session, or one hookwire saw no task for).
	Parent           string      `json:"parent"`
	Agent            string      `json:"agent"`
	Requests         int64       `json:"requests"`
	InputTokens      int64       `json:"inputTokens"`
	OutputTokens     int64       `json:"outputTokens"`
	CacheReadTokens  int64       `json:"cacheReadTokens"`
	CacheWriteTokens int64       `json:"cacheWriteTokens"`
	BustCount        int64       `json:"bustCount"`
	TokensLost       int64       `json:"tokensLost"`
	BustsInARow      int         `json:"bustsInARow"`
	Busts            []CacheBust `json:"busts"`
}

// CacheShare is the share of prompt tokens read from the cache (0 to 1;
// 0 when no prompt token was counted).
func (c CacheSession) CacheShare() float64 {
	prompt := float64(c.InputTokens) + float64(c.CacheReadTokens) + float64(c.CacheWriteTokens)
	if prompt <= 0 {
		return 0
	}
	return float64(c.CacheReadTokens) / prompt
}

// SatAdd is a+b for counts that are never negative, saturating at the
// largest int64 instead of wrapping (1,100 usages of 2^53 tokens wrapped
// to a negative sum).
func SatAdd(a, b int64) int64 {
	if b > 0 && a > math.MaxInt64-b {
		return math.MaxInt64
	}
	return a + b
}

// satSub is a-b for such counts, never below 0 (a saturated sum minus
// what it counted is less than the true figure, never negative).
func satSub(a, b int64) int64 {
	if a < b {
		return 0
	}
	return a - b
}

// NoCacheFigures is true when the session had requests but every one
// reported cache read 0 and cache write 0: the provider reports no cache
// figures (OpenCode then stores zeros), so the share says nothing. A
// session that wrote to the cache and never read from it has figures: a
// real 0% (PROTOCOL.md 4.9).
func (c CacheSession) NoCacheFigures() bool {
	return c.Requests > 0 && c.CacheReadTokens == 0 && c.CacheWriteTokens == 0
}

// cacheRequest is a request counted for a session: its usage and prompt,
// and what it was compared with, so a later update of the same message
// is counted again rather than twice.
type cacheRequest struct {
	usage Usage
	print *core.PromptPrint
	// What the request before it had (prev*), and whether it was a bust.
	hasPrev       bool
	prevCacheRead int64
	prevModel     string
	prevPrint     *core.PromptPrint
	bust          bool
	// restored: read from the state file, counted by an earlier process.
	restored bool
}

type cacheSession struct {
	CacheSession
	last    *cacheRequest
	pending []*core.PromptPrint // memory only: prompts waiting for their usage
}

// cacheSet is the sessions' prompt-cache figures: pure, no lock and no
// IO. The store holds it under its one lock and gives it, where it lacks a
// session, what the database has (load); PromptCache holds the store's
// methods for it, and says when figures are written.
type cacheSet struct {
	sessions *lru.List[string, *cacheSession] // most recently used first
	changes  uint64
}

func newCacheSet() cacheSet {
	return cacheSet{sessions: lru.New[string, *cacheSession]()}
}

// session returns id's figures: the set's, else load's (the database's
// row, nil when none), else new ones (which may forget the least recently
// used session's).
func (b *cacheSet) session(id string, load func(string) *CacheRecord) *cacheSession {
	if cs, ok := b.sessions.Get(id); ok {
		b.sessions.Touch(id)
		return cs
	}
	var cs *cacheSession
	if sc := load(id); sc != nil {
		cs, _ = loadCacheSession(sc) // a print this build cannot read: the figures without it
	}
	if cs == nil {
		cs = &cacheSession{CacheSession: CacheSession{Session: keep(id)}}
	}
	b.sessions.PushFront(cs.Session, cs)
	for b.sessions.Len() > MaxCacheSessions {
		k, _, _ := b.sessions.Back()
		b.sessions.Remove(k)
	}
	return cs
}

// prompt records the prompt of a request of cs on its way.
func (cs *cacheSession) prompt(p *core.PromptPrint) {
	cs.pending = append(cs.pending, p)
	if len(cs.pending) > maxPendingPrompts {
		cs.pending = cs.pending[len(cs.pending)-maxPendingPrompts:]
	}
}

// system records the system prompt of session's request on its way: only
// the first after a prompt counts.
func (b *cacheSet) system(session string, system, block uint64) {
	cs, ok := b.sessions.Get(session)
	if !ok || len(cs.pending) == 0 {
		return
	}
	if p := cs.pending[len(cs.pending)-1]; !p.SystemSeen {
		p.SystemSeen, p.System, p.Block = true, system, block
	}
}

// count counts u, a usage of cs: a message counted before is counted again
// with its new figures. It reports whether the figures changed, the bust
// found, if any, and whether it is the session's second (or later) in a
// row: O(1), whatever the set holds.
func (b *cacheSet) count(cs *cacheSession, u Usage) (changed bool, bust *CacheBust, inARow bool) {
	r := cs.last
	if r != nil && r.usage.Message == u.Message {
		if r.restored || r.usage == u {
			return false, nil, false
		}
		cs.uncount(r)
	} else {
		r = &cacheRequest{print: takePrompt(cs, u.Message)}
		if cs.last != nil {
			r.hasPrev, r.prevCacheRead, r.prevModel, r.prevPrint = true, cs.last.usage.CacheRead, cs.last.usage.Model, cs.last.print
		}
	}
	u.Session, u.Message, u.Model = cs.Session, keep(u.Message), keep(u.Model)
	r.usage = u
	cs.last = r
	cs.Requests = SatAdd(cs.Requests, 1)
	cs.InputTokens = SatAdd(cs.InputTokens, u.Input)
	cs.OutputTokens = SatAdd(cs.OutputTokens, u.Output)
	cs.CacheReadTokens = SatAdd(cs.CacheReadTokens, u.CacheRead)
	cs.CacheWriteTokens = SatAdd(cs.CacheWriteTokens, u.CacheWrite)
	b.changes++
	r.bust = core.IsBust(r.hasPrev, r.prevCacheRead, u.CacheRead)
	if !r.bust {
		cs.BustsInARow = 0
		return true, nil, false
	}
	cb := CacheBust{Message: u.Message, TokensLost: r.prevCacheRead - u.CacheRead,
		Bust: core.AttributeBust(r.prevModel, u.Model, r.prevPrint, r.print)}
	cs.BustCount = SatAdd(cs.BustCount, 1)
	cs.TokensLost = SatAdd(cs.TokensLost, cb.TokensLost)
	cs.BustsInARow++
	cs.Busts = append(cs.Busts, cb)
	if len(cs.Busts) > MaxBustsPerSession {
		cs.Busts = append(cs.Busts[:0:0], cs.Busts[len(cs.Busts)-MaxBustsPerSession:]...)
	}
	return true, &cb, cs.BustsInARow >= 2
}

// attribute records parent and agent as cs's (a task call from parent, for
// agent, ran in it); it reports whether that changed the figures.
func (b *cacheSet) attribute(cs *cacheSession, parent, agent string) bool {
	if cs.Parent == parent && (cs.Agent == agent || agent == "") {
		return false
	}
	cs.Parent = keep(parent)
	if agent != "" {
		cs.Agent = keep(agent)
	}
	b.changes++
	return true
}

// forget drops session's figures.
func (b *cacheSet) forget(session string) {
	if _, ok := b.sessions.Remove(session); ok {
		b.changes++
	}
}

// figures is cs's figures as they are reported, its busts copied; ok false
// while cs has none (a prompt seen, no usage yet).
func (cs *cacheSession) figures() (CacheSession, bool) {
	if cs == nil || cs.Requests == 0 && cs.last == nil {
		return CacheSession{}, false
	}
	c := cs.CacheSession
	c.Busts = append([]CacheBust{}, cs.Busts...)
	return c, true
}

// list is every session's figures, the most recently used first.
func (b *cacheSet) list() []CacheSession {
	out := make([]CacheSession, 0, b.sessions.Len())
	for _, cs := range b.sessions.All() {
		if c, ok := cs.figures(); ok {
			out = append(out, c)
		}
	}
	return out
}

// uncount takes r, the session's last request, out of its figures, before
// it is counted again with newer ones.
func (cs *cacheSession) uncount(r *cacheRequest) {
	cs.Requests = satSub(cs.Requests, 1)
	cs.InputTokens = satSub(cs.InputTokens, r.usage.Input)
	cs.OutputTokens = satSub(cs.OutputTokens, r.usage.Output)
	cs.CacheReadTokens = satSub(cs.CacheReadTokens, r.usage.CacheRead)
	cs.CacheWriteTokens = satSub(cs.CacheWriteTokens, r.usage.CacheWrite)
	if !r.bust {
		return
	}
	cs.BustCount = satSub(cs.BustCount, 1)
	cs.TokensLost = satSub(cs.TokensLost, r.prevCacheRead-r.usage.CacheRead)
	cs.BustsInARow--
	if n := len(cs.Busts); n > 0 && cs.Busts[n-1].Message == r.usage.Message {
		cs.Busts = cs.Busts[:n-1]
	}
}

// takePrompt returns the prompt of the request that answered with message:
// the newest pending prompt whose history does not hold message yet (the
// next request's history does), dropping it and those before it. nil when
// none is pending.
func takePrompt(cs *cacheSession, message string) *core.PromptPrint {
	id := core.HashID(message)
	for i := len(cs.pending) - 1; i >= 0; i-- {
		p := cs.pending[i]
		if !holds(p, id) {
			cs.pending = append(cs.pending[:0], cs.pending[i+1:]...)
			return p
		}
	}
	return nil
}

func holds(p *core.PromptPrint, id uint64) bool {
	for _, m := range p.Messages {
		if m.ID == id {
			return true
		}
	}
	return false
}
