package handlers

import (
	"fmt"
	"strconv"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/hookwire/hookwire/core"
	"github.com/hookwire/hookwire/rpc"
)

// Incremental chat.messages.transform (PROTOCOL.md 4.6). A client that
// names a session in sync gets back a base: the id of the history the
// sidecar now holds for that session. Its next request names that base
// and carries only what changed; the sidecar rebuilds the whole history
// from it and handles that exactly as the full form, so the two forms
// cannot give different patches or change different state.

// CodeUnknownBase answers an incremental request whose base the sidecar
// does not hold (PROTOCOL.md 8): after a restart, after an eviction, or
// when another request for the session came first. The client resends in
// full.
const CodeUnknownBase int64 = -32005

// Bounds of the histories held (PROTOCOL.md 7). The counted bytes are the
// strings the sidecar reads plus a fixed cost per message and part, about
// what they take in memory.
const (
	DefaultMaxBaseBytes = 8 << 20
	maxBaseSessions     = 64
	maxBaseKeyBytes     = 256
	baseMessageOverhead = 128
	basePartOverhead    = 112
	relOpOverhead       = 32
)

// transformParams is chat.messages.transform's params: the full form
// (output), optionally with sync naming the session to keep it for, or
// the incremental form (sync with a base, no output).
type transformParams struct {
	Input  *jsontext.Value  `json:"input"`
	Output *transformOutput `json:"output"`
	Sync   *syncParams      `json:"sync"`
}

type syncParams struct {
	Session  string      `json:"session"`
	Base     *string     `json:"base"`
	Messages *[]syncItem `json:"messages"`
	// Reapply: the client takes reapply runs in the reply (4.6).
	Reapply bool `json:"reapply"`
}

// syncItem is one item of an incremental request's messages: base
// messages kept as they are, a message in full, or a base message edited.
type syncItem struct {
	Keep    *int         `json:"keep"`
	Count   *int         `json:"count"`
	Message *wireMessage `json:"message"`
	Edit    *int         `json:"edit"`
	Info    *wireInfo    `json:"info"`
	Parts   *[]partItem  `json:"parts"`
}

// partItem is one item of an edited message's parts: base parts kept, or
// a part in full.
type partItem struct {
	Keep  *int      `json:"keep"`
	Count *int      `json:"count"`
	Part  *wirePart `json:"part"`
}

// transformResult is the result of a request with sync: the patch, the
// reapply runs (only when the client asked for them), and the base the
// sidecar now holds for the session ("" when it keeps none).
type transformResult struct {
	Patch   []Op         `json:"patch"`
	Reapply []reapplyRun `json:"reapply,omitempty"`
	Base    string       `json:"base,omitempty"`
}

// MarshalJSON writes the result as AppendResult does.
func (r transformResult) MarshalJSON() ([]byte, error) { return r.AppendResult(nil) }

// AppendResult writes the result as json.Marshal does, without scanning
// each operation's bytes again (encoding/json compacts every MarshalJSON
// output): in cache-stable mode a long history's reply adds a part to
// every managed user message (4.4), so that scan grew with the history.
func (r transformResult) AppendResult(b []byte) ([]byte, error) {
	b = append(b, `{"patch":[`...)
	for i, o := range r.Patch {
		if i > 0 {
			b = append(b, ',')
		}
		var err error
		if b, err = o.appendJSON(b); err != nil {
			return nil, err
		}
	}
	b = append(b, ']')
	if len(r.Reapply) > 0 {
		b = append(b, `,"reapply":[`...)
		for i, run := range r.Reapply {
			if i > 0 {
				b = append(b, ',')
			}
			b = fmt.Appendf(b, `{"at":%d,"keep":%d,"count":%d}`, run.At, run.Keep, run.Count)
		}
		b = append(b, ']')
	}
	if r.Base != "" {
		b = append(b, `,"base":`...)
		b = appendJSONString(b, r.Base)
	}
	return append(b, '}'), nil
}

// baseMessage is one message of a history, as the per-request work reads
// it: a few words of its own, and the message as held (heldMessage),
// which the bases that keep the message share. A request that keeps a
// message from its base touches little more than these words, as the
// message's content and what follows from it alone were worked out when
// it came (issue 14: between requests the process is idle, its memory
// cold, so every line read costs a miss).
type baseMessage struct {
	*heldMessage
	// session is the message's info.sessionID, interned (retainFrozen).
	session string
	// ops are the ops the message got in the reply that made its base,
	// opsHash their hash. In a history being built from a base they are
	// still the base message's.
	ops     []relOp
	opsHash uint64
	// idHash and idBytes are the base id's hash state and the base's
	// counted bytes up to this message (transformBases.keep), so that a
	// base kept up to message k is not hashed again up to k.
	idHash  uint64
	idBytes int64
	// origin is, in a history being built from a base, the base message
	// it came from plus one (0: a message in full).
	origin int32
	flags  uint8
}

// Flags of a baseMessage. All but flagKept follow from the message's
// content and the config, and are set by Server.derive.
const (
	// flagDerived: derive has run under the config in force.
	flagDerived uint8 = 1 << iota
	// flagKept: kept from the base as it was (a keep item), so idHash and
	// idBytes are still those of base message origin-1.
	flagKept
	// flagUser: a user message.
	flagUser
	// flagStable: a user message with a parts array (stableParts).
	flagStable
	// flagSetsAgent: a user message naming its session and agent.
	flagSetsAgent
	// flagThrown: it has errored task parts with a callID (thrown).
	flagThrown
	// flagGuided: it has guidance (guidance).
	flagGuided
)

// heldMessage is a message as a base holds it: its wire and core forms,
// its content hash and counted bytes (0 until computed), and what the
// handler derives from its content and the config alone (Server.derive).
// Nothing in it changes once derived, but for the memo of hasText; a
// config change (agents.update) derives it again.
type heldMessage struct {
	core      core.Message
	msg       wireMessage
	hash      uint64
	bytes     int64
	converted bool
	// wantsReminder is core.WantsReminder of the message.
	wantsReminder bool
	// thrown are its errored task parts' calls, for failThrownTasks.
	thrown []thrownCall
	// guidance are its ops of 4.1 (guideErroredTasks).
	guidance []relOp
	// hasText remembers whether a part's text is textChecked: the block
	// frozen for a message is the same string on every request.
	textChecked string
	hasText     bool
}

// thrownCall is an errored task part's callID and error text.
type thrownCall struct {
	callID, text string
}

// transformBase is the history held for one session, and the generation
// of the config its messages were derived under.
type transformBase struct {
	id    string
	msgs  []baseMessage
	bytes int64
	used  uint64
	gen   uint64
}

// transformBases holds one history per session, within a byte budget and
// a session count; the least recently used goes first.
type transformBases struct {
	maxBytes int64
	bytes    int64
	tick     uint64
	session  map[string]*transformBase
	// gen counts the config changes (configChanged): a base derived under
	// an earlier one is derived again when a request keeps its messages.
	gen uint64
	// names interns the messages' session ids (baseMessage.session).
	names map[string]string
	// per is the handler's per-message ops, reused from request to
	// request (perMessage).
	per [][]relOp
}

// perMessage returns n empty ops lists, in an array that the previous
// request used: a request reads it only while it is handled.
func (b *transformBases) perMessage(n int) [][]relOp {
	if cap(b.per) < n {
		b.per = make([][]relOp, n, n+n/4)
		return b.per
	}
	clear(b.per) // past its length it is clear already
	b.per = b.per[:n]
	return b.per
}

func newTransformBases(maxBytes int64) *transformBases {
	return &transformBases{maxBytes: maxBytes, session: map[string]*transformBase{}, names: map[string]string{}}
}

// maxInternedNames bounds transformBases.names; past it, it starts over.
const maxInternedNames = 1024

// intern returns name, the same string each time it is given.
func (b *transformBases) intern(name string) string {
	if n, ok := b.names[name]; ok {
		return n
	}
	if len(b.names) >= maxInternedNames {
		clear(b.names)
	}
	b.names[name] = name
	return name
}

// history returns the messages a request stands for: output's, or its
// base's with its items applied. A request that does not fit changes
// nothing; one that does may take over the base's array (apply).
func (b *transformBases) history(p *transformParams) ([]baseMessage, error) {
	if p.Sync == nil || p.Sync.Base == nil {
		if p.Output == nil {
			return nil, missing("output")
		}
		msgs := make([]baseMessage, len(p.Output.Messages))
		for i, m := range p.Output.Messages {
			msgs[i].heldMessage = &heldMessage{msg: m}
		}
		return msgs, nil
	}
	if p.Output != nil {
		return nil, invalidParams("output and sync.base do not go together: an incremental request carries sync.messages only")
	}
	if p.Sync.Messages == nil {
		return nil, missing("sync.messages")
	}
	base := b.session[p.Sync.Session]
	if base == nil || base.id != *p.Sync.Base {
		return nil, &rpc.Error{Code: CodeUnknownBase, Message: "unknown base: send the full history (output.messages) with sync"}
	}
	return base.apply(*p.Sync.Messages, base.gen != b.gen)
}

// apply builds the history items describe against base; stale: the
// messages kept are to be derived again. When the first item keeps base
// messages from 0 (a history grown or reverted: most requests), they stay
// where they are, in base's array, which the history takes over: a
// request that names base replaces it (keep). Nothing is changed until
// every item has been checked.
func (base *transformBase) apply(items []syncItem, stale bool) ([]baseMessage, error) {
	n := len(base.msgs)
	head, skip := 0, 0
	if len(items) > 0 && items[0].isKeep() && *items[0].Keep == 0 {
		if _, count, err := keepRange(items[0].Keep, items[0].Count, n); err == nil {
			head, skip = count, 1
		}
	}
	var rest []baseMessage
	if head == 0 {
		rest = make([]baseMessage, 0, n+1)
	}
	for i, it := range items[skip:] {
		at := func(format string, args ...any) error {
			return invalidParams("sync.messages[%d]: "+format, append([]any{i + skip}, args...)...)
		}
		switch {
		case it.isKeep():
			from, count, err := keepRange(it.Keep, it.Count, n)
			if err != nil {
				return nil, at("%s", err.Error())
			}
			at := len(rest)
			rest = append(rest, base.msgs[from:from+count]...)
			keptFrom(rest[at:], from, stale)
		case it.Message != nil && it.Keep == nil && it.Count == nil && it.Edit == nil && it.Info == nil && it.Parts == nil:
			rest = append(rest, baseMessage{heldMessage: &heldMessage{msg: *it.Message}})
		case it.Edit != nil && it.Keep == nil && it.Count == nil && it.Message == nil:
			j := *it.Edit
			if j < 0 || j >= n {
				return nil, at("edit %d is not a message of the base (it has %d)", j, n)
			}
			m := base.msgs[j].msg
			if it.Info != nil {
				m.Info = *it.Info
			}
			if it.Parts != nil {
				parts, err := applyParts(m.Parts, *it.Parts)
				if err != nil {
					return nil, at("%s", err.Error())
				}
				m.Parts = parts
			}
			rest = append(rest, baseMessage{heldMessage: &heldMessage{msg: m}, origin: int32(j + 1), ops: base.msgs[j].ops, opsHash: base.msgs[j].opsHash})
		default:
			return nil, at("an item is exactly one of {keep, count}, {message} or {edit, info?, parts?}")
		}
	}
	if head == 0 {
		return rest, nil
	}
	msgs := append(base.msgs[:head], rest...)
	if len(msgs) < n && &msgs[0] == &base.msgs[0] {
		clear(base.msgs[len(msgs):n]) // hold on to no message the history dropped
	}
	keptFrom(msgs[:head], 0, stale)
	return msgs, nil
}

func (it *syncItem) isKeep() bool {
	return it.Keep != nil && it.Message == nil && it.Edit == nil && it.Info == nil && it.Parts == nil
}

// keptFrom marks msgs as base messages from, from+1, ... kept as they were.
func keptFrom(msgs []baseMessage, from int, stale bool) {
	for k := range msgs {
		m := &msgs[k]
		m.origin = int32(from + k + 1)
		m.flags |= flagKept
		if stale {
			m.flags &^= flagDerived
		}
	}
}

func applyParts(base []wirePart, items []partItem) ([]wirePart, error) {
	parts := make([]wirePart, 0, len(items))
	for k, it := range items {
		switch {
		case it.Keep != nil && it.Part == nil:
			from, count, err := keepRange(it.Keep, it.Count, len(base))
			if err != nil {
				return nil, fmt.Errorf("parts[%d]: %s", k, err.Error())
			}
			parts = append(parts, base[from:from+count]...)
		case it.Part != nil && it.Keep == nil && it.Count == nil:
			parts = append(parts, *it.Part)
		default:
			return nil, fmt.Errorf("parts[%d]: a part item is exactly one of {keep, count} or {part}", k)
		}
	}
	return parts, nil
}

// keepRange checks a keep item against a base of n elements.
func keepRange(keep, count *int, n int) (int, int, error) {
	if count == nil {
		return 0, 0, fmt.Errorf("keep needs a count")
	}
	from, c := *keep, *count
	if from < 0 || c < 1 || from > n || c > n-from {
		return 0, 0, fmt.Errorf("keep %d count %d is not within the base's %d", from, c, n)
	}
	return from, c, nil
}

// keep holds msgs as the session's history and returns its base id; ""
// when the session cannot be a key or the history is over the budget on
// its own (the session's earlier history is dropped then too).
func (b *transformBases) keep(session string, msgs []baseMessage) string {
	old := b.session[session]
	if old != nil {
		b.bytes -= old.bytes
		delete(b.session, session)
	}
	if session == "" || len(session) > maxBaseKeyBytes {
		return ""
	}
	base := &transformBase{msgs: msgs, gen: b.gen}
	h, bytes := fnvString(fnvOffset, session), int64(0)
	// The messages kept in place from the base this history was built
	// from (with their ops, see Server.chatMessagesTransform) hash as
	// they did there: the base held for session was made with this key.
	i := 0
	for i < len(msgs) && msgs[i].flags&flagKept != 0 && int(msgs[i].origin) == i+1 {
		i++
	}
	if i > 0 {
		h, bytes = msgs[i-1].idHash, msgs[i-1].idBytes
	}
	for ; i < len(msgs); i++ {
		m := &msgs[i]
		if m.bytes == 0 {
			m.hash, m.bytes = hashMessage(&m.msg)
		}
		bytes += m.bytes
		h = fnvUint64(h, m.hash)
		if len(m.ops) > 0 { // the answer is part of the base: see hashOps
			h = fnvUint64(h, m.opsHash)
			// The ops' texts are the store's frozen blocks, the
			// configured reminder or remembered guidance: counted there.
			bytes += int64(len(m.ops)) * relOpOverhead
		}
		m.idHash, m.idBytes = h, bytes
	}
	base.bytes = bytes
	if base.bytes > b.maxBytes {
		return ""
	}
	base.id = strconv.FormatUint(fnvUint64(h, uint64(len(msgs))), 16)
	for len(b.session) >= maxBaseSessions || b.bytes+base.bytes > b.maxBytes {
		b.evictOldest()
	}
	b.tick++
	base.used = b.tick
	b.session[session] = base
	b.bytes += base.bytes
	return base.id
}

func (b *transformBases) evictOldest() {
	var oldest string
	var at *transformBase
	for k, v := range b.session {
		if at == nil || v.used < at.used {
			oldest, at = k, v
		}
	}
	b.bytes -= at.bytes
	delete(b.session, oldest)
}

// hashMessage returns a message's content hash over what the handler
// reads, and its counted bytes. Equal content, equal hash: a base id is a
// function of the history, so a replay of a recording meets the ids it
// recorded.
func hashMessage(m *wireMessage) (uint64, int64) {
	h := fnvOffset
	bytes := int64(baseMessageOverhead)
	str := func(tag byte, s string) {
		h = fnvString(fnvByte(h, tag), s)
		bytes += int64(len(s))
	}
	anyStr := func(tag byte, v any) {
		if s, ok := v.(string); ok {
			str(tag, s)
		}
	}
	str('i', m.Info.ID)
	str('r', m.Info.Role)
	anyStr('a', m.Info.Agent)
	str('s', m.Info.SessionID)
	if m.Parts == nil {
		h = fnvByte(h, 'N')
	}
	for i := range m.Parts {
		p := &m.Parts[i]
		bytes += basePartOverhead
		h = fnvByte(h, 'P')
		str('t', p.Type)
		if p.Text != nil {
			str('x', *p.Text)
		}
		if p.Synthetic {
			h = fnvByte(h, 'y')
		}
		str('o', p.Tool)
		str('c', p.CallID)
		if p.State != nil {
			str('S', p.State.Status)
			anyStr('e', p.State.Error)
		}
	}
	return h, bytes
}

// hashOps hashes a message's ops. A base's id covers the ops each message
// got as well as the history: the client applies a reapply run with the
// ops it holds for the base it named, so two bases that hold the same
// history with different answers (the store changed between two requests
// for the same history, and the client missed the second reply) must not
// share an id.
func hashOps(ops []relOp) uint64 {
	h := fnvOffset
	for _, o := range ops {
		h = fnvString(fnvUint64(h, uint64(int64(o.part))), o.text)
	}
	return h
}

// FNV-1a, 64 bits: stable across processes and versions, unlike
// hash/maphash.
const (
	fnvOffset uint64 = 14695981039346656037
	fnvPrime  uint64 = 1099511628211
)

func fnvByte(h uint64, c byte) uint64 { return (h ^ uint64(c)) * fnvPrime }

// fnvString hashes s's length, then its bytes, so that fields cannot run
// into each other.
func fnvString(h uint64, s string) uint64 {
	h = fnvUint64(h, uint64(len(s)))
	for i := 0; i < len(s); i++ {
		h = (h ^ uint64(s[i])) * fnvPrime
	}
	return h
}

func fnvUint64(h, v uint64) uint64 {
	for i := 0; i < 8; i++ {
		h = (h ^ (v & 0xff)) * fnvPrime
		v >>= 8
	}
	return h
}
