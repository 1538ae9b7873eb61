package sessions

import (
	"context"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"strconv"
	"sync"
	"time"

	"github.com/hookwire/hookwire/core"
	"github.com/hookwire/hookwire/internal/lru"
)

// The prompt-cache figures of each session (PROTOCOL.md 4.9): requests,
// tokens, busts and their causes. They are kept in a book of their own
// beside the store's other parts, with their own lock, bound and member of
// the state file ("cache"), and forgotten with the session.

// Bounds of the cache book (PROTOCOL.md 7).
const (
	// MaxCacheSessions is how many sessions the book keeps figures for;
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

// cacheBook is the store's cache figures.
type cacheBook struct {
	mu       sync.Mutex
	sessions *lru.List[string, *cacheSession] // most recently used first
	changes  uint64
}

func (b *cacheBook) init() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.sessions = lru.New[string, *cacheSession]()
}

// cacheSession returns id's figures: the book's, else the database's,
// else new ones (which may forget the least recently used session's). The
// caller holds mu and the book's mu.
func (s *Store) cacheSession(id string) *cacheSession {
	b := &s.cache
	if cs, ok := b.sessions.Get(id); ok {
		b.sessions.Touch(id)
		return cs
	}
	var cs *cacheSession
	if sc := s.cacheLoad(id); sc != nil {
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

// CachePrompt records the prompt of a request of session that is on its
// way (chat.messages.transform): the usage that comes next for the
// session is paired with it.
func (s *Store) CachePrompt(session string, p *core.PromptPrint) {
	if session == "" || len(session) > MaxIDBytes || p == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	b := &s.cache
	b.mu.Lock()
	defer b.mu.Unlock()
	cs := s.cacheSession(session)
	cs.pending = append(cs.pending, p)
	if len(cs.pending) > maxPendingPrompts {
		cs.pending = cs.pending[len(cs.pending)-maxPendingPrompts:]
	}
}

// CacheSystem records the system prompt of session's request on its way
// (chat.system.transform): system hashes what came to hookwire, block what
// hookwire added. Only the first after a CachePrompt counts: OpenCode's
// title request goes through the system transform alone.
func (s *Store) CacheSystem(session string, system, block uint64) {
	b := &s.cache
	b.mu.Lock()
	defer b.mu.Unlock()
	cs, ok := b.sessions.Get(session)
	if !ok || len(cs.pending) == 0 {
		return
	}
	if p := cs.pending[len(cs.pending)-1]; !p.SystemSeen {
		p.SystemSeen, p.System, p.Block = true, system, block
	}
}

// CacheUsage counts one assistant message's usage. A message counted
// before is counted again with its new figures (OpenCode reports a message
// more than once). It returns the bust it found, if any, and whether it is
// the session's second (or later) in a row.
func (s *Store) CacheUsage(ctx context.Context, u Usage) (bust *CacheBust, inARow bool) {
	if u.Session == "" || u.Message == "" || len(u.Session) > MaxIDBytes || len(u.Message) > MaxIDBytes {
		return nil, false
	}
	if len(u.Model) > MaxIDBytes {
		u.Model = ""
	}
	s.lock(ctx)
	defer s.unlock() // finishes the transaction cacheSave begins
	// The parent and agent as the store knows them now, while the task
	// runs: its entry may be forgotten later (maxSessionsPerAgent).
	parent, agent := s.parentAndAgent(u.Session)
	b := &s.cache
	b.mu.Lock()
	defer b.mu.Unlock()
	cs := s.cacheSession(u.Session)
	if parent != "" {
		cs.Parent = parent
	}
	if agent != "" {
		cs.Agent = agent
	}
	r := cs.last
	if r != nil && r.usage.Message == u.Message {
		if r.restored || r.usage == u {
			return nil, false
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
	defer s.cacheSave(cs)
	r.bust = core.IsBust(r.hasPrev, r.prevCacheRead, u.CacheRead)
	if !r.bust {
		cs.BustsInARow = 0
		return nil, false
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
	return &cb, cs.BustsInARow >= 2
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

// CacheList returns every session's figures, the most recently used
// first, with the parent and agent the store knows for it.
func (s *Store) CacheList() []CacheSession {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []CacheSession
	if s.db != nil {
		// The database's: every process's sessions, not only this one's.
		rows, err := s.db.b.Cache.ReadAll(s.db.ctx)
		if err != nil {
			s.db.fail(err)
		}
		for _, sc := range rows {
			out = append(out, sc.CacheSession)
		}
		// This process's own figures the database lacks (read only, or
		// a write failed), after the database's.
		seen := make(map[string]bool, len(out))
		for _, c := range out {
			seen[c.Session] = true
		}
		b := &s.cache
		b.mu.Lock()
		for _, cs := range b.sessions.All() {
			if !seen[cs.Session] && cs.Requests > 0 {
				c := cs.CacheSession
				c.Busts = append([]CacheBust{}, cs.Busts...)
				out = append(out, c)
			}
		}
		b.mu.Unlock()
	}
	if out == nil {
		b := &s.cache
		b.mu.Lock()
		out = make([]CacheSession, 0, b.sessions.Len())
		for _, cs := range b.sessions.All() {
			if cs.Requests == 0 && cs.last == nil {
				continue // a prompt seen, no usage yet
			}
			c := cs.CacheSession
			c.Busts = append([]CacheBust{}, cs.Busts...)
			out = append(out, c)
		}
		b.mu.Unlock()
	}
	for i := range out {
		c := &out[i]
		if c.Busts == nil {
			c.Busts = []CacheBust{}
		}
		parent, agent := s.parentAndAgent(c.Session)
		if parent != "" {
			c.Parent = parent
		}
		if agent != "" {
			c.Agent = agent
		}
	}
	return out
}

// CacheOf returns one session's figures as CacheList gives them, reading
// no other session's: what a bust in a row tells the client. The book's
// when it holds the session (this process counted its last usage), else
// the database's row.
func (s *Store) CacheOf(session string) (CacheSession, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	b := &s.cache
	b.mu.Lock()
	var c CacheSession
	cs, ok := b.sessions.Get(session)
	if !ok {
		if sc := s.cacheLoad(session); sc != nil {
			cs, _ = loadCacheSession(sc)
		}
	}
	if cs != nil && (cs.Requests > 0 || cs.last != nil) {
		c = cs.CacheSession
		c.Busts = append([]CacheBust{}, cs.Busts...)
	}
	b.mu.Unlock()
	if c.Session == "" {
		return CacheSession{}, false
	}
	parent, agent := s.parentAndAgent(c.Session)
	if parent != "" {
		c.Parent = parent
	}
	if agent != "" {
		c.Agent = agent
	}
	return c, true
}

// parentAndAgent is the parent that started session with a task and the
// agent it runs, as far as the store knows them ("" where not); the
// caller holds mu.
func (s *Store) parentAndAgent(session string) (parent, agent string) {
	if sa := s.cachedAgent(session); sa != nil {
		agent, parent = sa.agent, sa.parent // the parent session.created named (health.go)
		if parent != "" {
			return parent, agent
		}
	}
	for e := range s.byTaskID[session] {
		parent = e.parent.id
		if agent == "" {
			agent = e.agent.name
		}
		return parent, agent
	}
	if s.db != nil {
		if ps := s.db.parentsOfTask(session); len(ps) > 0 {
			parent = ps[0]
		}
	}
	return parent, agent
}

// cacheParent records that a task call from parent, for agent, ran in
// session (tool.execute.after): a task session's usage comes before its
// entry is made, and the entry may be forgotten later (maxSessionsPerAgent),
// so its figures keep both. Only a session with figures is written; the
// caller holds mu.
func (s *Store) cacheParent(session, parent, agent string) {
	b := &s.cache
	b.mu.Lock()
	defer b.mu.Unlock()
	cs, ok := b.sessions.Get(session)
	if !ok {
		if s.db == nil {
			return
		}
		if s.cacheLoad(session) == nil {
			return
		}
		cs = s.cacheSession(session)
	}
	if cs.Parent == parent && (cs.Agent == agent || agent == "") {
		return
	}
	cs.Parent = keep(parent)
	if agent != "" {
		cs.Agent = keep(agent)
	}
	b.changes++
	s.cacheSave(cs)
}

// forgetCache drops session's figures (session.deleted); the caller
// holds mu.
func (s *Store) forgetCache(session string) {
	s.cacheDelete(session)
	b := &s.cache
	b.mu.Lock()
	defer b.mu.Unlock()
	if _, ok := b.sessions.Remove(session); ok {
		b.changes++
	}
}

func (s *Store) cacheChanges() uint64 {
	b := &s.cache
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.changes
}

// CacheRecord is one session's figures as the state keeps them (the
// state file's "cache" member, a Backend's row): the counts, the busts,
// and the last request's usage and prompt (so that the next process
// compares its first request with it).
type CacheRecord struct {
	CacheSession
	Last *CacheRequestRecord `json:"last,omitempty"`
}

// CacheRequestRecord is the last request of a CacheRecord.
type CacheRequestRecord struct {
	Message   string `json:"message"`
	Model     string `json:"model,omitempty"`
	CacheRead int64  `json:"cacheRead"`
	Print     string `json:"print,omitempty"` // encodePrint
}

func (b *cacheBook) snapshot() []CacheRecord {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := make([]CacheRecord, 0, b.sessions.Len())
	for _, cs := range b.sessions.All() {
		out = append(out, cs.save())
	}
	return out
}

// save is cs as the state keeps it.
func (cs *cacheSession) save() CacheRecord {
	sc := CacheRecord{CacheSession: cs.CacheSession}
	if r := cs.last; r != nil {
		sc.Last = &CacheRequestRecord{Message: r.usage.Message, Model: r.usage.Model, CacheRead: r.usage.CacheRead, Print: encodePrint(r.print)}
	}
	return sc
}

// loadCacheSession is sc as the book keeps it: bounded, its last request
// restored to be compared with (never counted again). An error (a print
// this build cannot read) still returns the figures, without the print.
func loadCacheSession(sc *CacheRecord) (*cacheSession, error) {
	cs := &cacheSession{CacheSession: sc.CacheSession}
	if len(cs.Parent) > MaxIDBytes || len(cs.Agent) > MaxAgentNameBytes {
		cs.Parent, cs.Agent = "", ""
	}
	if len(cs.Busts) > MaxBustsPerSession {
		cs.Busts = cs.Busts[len(cs.Busts)-MaxBustsPerSession:]
	}
	l := sc.Last
	if l == nil || l.Message == "" {
		return cs, nil
	}
	p, err := decodePrint(l.Print)
	cs.last = &cacheRequest{usage: Usage{Session: sc.Session, Message: l.Message, Model: l.Model, CacheRead: l.CacheRead}, print: p, restored: true}
	if err != nil {
		return cs, fmt.Errorf("cache of session %s: %w", sc.Session, err)
	}
	return cs, nil
}

// restore fills the empty book from a state file's "cache" member, the
// most recently used first; what breaks the bounds is left out.
func (b *cacheBook) restore(list []CacheRecord) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	for i := range list {
		sc := &list[i]
		if sc.Session == "" || len(sc.Session) > MaxIDBytes || b.sessions.Has(sc.Session) {
			continue
		}
		if b.sessions.Len() >= MaxCacheSessions {
			break
		}
		cs, err := loadCacheSession(sc)
		if err != nil {
			return err
		}
		b.sessions.PushBack(cs.Session, cs)
	}
	return nil
}

// encodePrint packs a prompt print: "s<system hex>.<block hex>" when the
// system was seen, then "m" and the messages' three hashes each, little
// endian, in base64; "t" marks a truncated history. "" for nil.
func encodePrint(p *core.PromptPrint) string {
	if p == nil {
		return ""
	}
	out := "-"
	if p.SystemSeen {
		out = "s" + strconv.FormatUint(p.System, 16) + "." + strconv.FormatUint(p.Block, 16)
	}
	if p.Truncated {
		out += "t"
	}
	raw := make([]byte, 0, 24*len(p.Messages))
	for _, m := range p.Messages {
		raw = binary.LittleEndian.AppendUint64(raw, m.ID)
		raw = binary.LittleEndian.AppendUint64(raw, m.Content)
		raw = binary.LittleEndian.AppendUint64(raw, m.Ops)
	}
	return out + "m" + base64.RawStdEncoding.EncodeToString(raw)
}

var errBadPrint = errors.New("malformed prompt print")

func decodePrint(s string) (*core.PromptPrint, error) {
	if s == "" {
		return nil, nil
	}
	p := &core.PromptPrint{}
	head, msgs, ok := cut(s, 'm')
	if !ok {
		return nil, errBadPrint
	}
	if n := len(head); n > 0 && head[n-1] == 't' {
		p.Truncated, head = true, head[:n-1]
	}
	switch {
	case head == "-":
	case len(head) > 1 && head[0] == 's':
		sys, block, ok := cut(head[1:], '.')
		if !ok {
			return nil, errBadPrint
		}
		var err1, err2 error
		p.System, err1 = strconv.ParseUint(sys, 16, 64)
		p.Block, err2 = strconv.ParseUint(block, 16, 64)
		if err1 != nil || err2 != nil {
			return nil, errBadPrint
		}
		p.SystemSeen = true
	default:
		return nil, errBadPrint
	}
	raw, err := base64.RawStdEncoding.DecodeString(msgs)
	if err != nil || len(raw)%24 != 0 || len(raw)/24 > core.MaxPrintMessages {
		return nil, errBadPrint
	}
	for i := 0; i < len(raw); i += 24 {
		p.Messages = append(p.Messages, core.MessagePrint{
			ID:      binary.LittleEndian.Uint64(raw[i:]),
			Content: binary.LittleEndian.Uint64(raw[i+8:]),
			Ops:     binary.LittleEndian.Uint64(raw[i+16:]),
		})
	}
	return p, nil
}

func cut(s string, sep byte) (before, after string, found bool) {
	for i := 0; i < len(s); i++ {
		if s[i] == sep {
			return s[:i], s[i+1:], true
		}
	}
	return s, "", false
}

// The cache book's backing (Backend's cache rows); the caller of each
// holds the store's mu.

// cacheWritable reports whether the figures go to a database (one open
// for writing has the table: schema's migration 3).
func (s *Store) cacheWritable() bool {
	return s.db != nil && !s.db.readOnly
}

// cacheLoad reads session's figures from the database, nil when it has
// none (or there is no database).
func (s *Store) cacheLoad(session string) *CacheRecord {
	d := s.db
	if d == nil {
		return nil
	}
	sc, ok, err := d.b.Cache.Read(d.ctx, session)
	if err != nil {
		d.fail(err)
		return nil
	}
	if !ok || sc.Session != session {
		return nil // a row this build cannot read is replaced at the next write
	}
	return &sc
}

// cacheSave writes cs's figures, stamped with the store's clock.
func (s *Store) cacheSave(cs *cacheSession) {
	if !s.cacheWritable() {
		return
	}
	d := s.db
	// In a write transaction (finished by the caller's unlock), so the
	// row takes its turn with the other writers and the prune that follows
	// keeps the table inside the byte budget.
	s.begin()
	if !d.inTx {
		return
	}
	if err := d.b.Cache.Write(d.ctx, cs.save(), s.now()); err != nil {
		d.fail(err)
		d.rollback()
		return
	}
	d.pruneDue = true
}

// cacheDelete forgets session's row (session.deleted).
func (s *Store) cacheDelete(session string) {
	if !s.cacheWritable() {
		return
	}
	if err := s.db.b.Cache.Delete(s.db.ctx, session); err != nil {
		s.db.fail(err)
	}
}

// importCache writes every session's figures into the database the store
// is being imported into (WriteAll), the least recently used first,
// each stamped a nanosecond after the one before, so the database keeps
// the book's order; the caller holds mu.
func (s *Store) importCache() error {
	b := &s.cache
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.sessions.Len() == 0 {
		return nil
	}
	if !s.cacheWritable() {
		return errors.New("the prompt-cache table cannot be made")
	}
	now := s.now()
	i := 0
	for _, cs := range b.sessions.Backward() {
		if err := s.db.b.Cache.Write(s.db.ctx, cs.save(), now.Add(time.Duration(i))); err != nil {
			return err
		}
		i++
	}
	return nil
}
