package sessions

import (
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"strconv"

	"github.com/hookwire/hookwire/core"
)

// The prompt-cache figures as the state keeps them: a Backend's rows and
// the state file's "cache" member.

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

// records is every session's figures as the state keeps them, the most
// recently used first.
func (b *cacheSet) records() []CacheRecord {
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

// loadCacheSession is sc as the set keeps it: bounded, its last request
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

// restore fills the empty set from a state file's "cache" member, the
// most recently used first; what breaks the bounds is left out.
func (b *cacheSet) restore(list []CacheRecord) error {
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
