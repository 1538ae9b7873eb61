package incremental

// hashMessage returns a message's content hash over what a transform reads
// (the fields of Message), and its counted bytes. Equal content, equal
// hash: a base id is a function of the history, so a replay of a recording
// meets the ids it recorded.
func hashMessage(m *Message) (uint64, int64) {
	h := fnvOffset
	bytes := int64(MessageOverhead)
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
		bytes += PartOverhead
		h = fnvByte(h, 'P')
		str('t', p.Type)
		if p.Text != nil && TextRead(p.Type) {
			str('x', *p.Text)
		} else if p.Text != nil {
			bytes += int64(len(*p.Text)) // held, though not read
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

// partBytes is a part's counted bytes, as hashMessage counts them.
func partBytes(p *Part) int64 {
	bytes := int64(PartOverhead + len(p.Type) + len(p.Tool) + len(p.CallID))
	if p.Text != nil {
		bytes += int64(len(*p.Text))
	}
	if p.State != nil {
		bytes += int64(len(p.State.Status))
		if e, ok := p.State.Error.(string); ok {
			bytes += int64(len(e))
		}
	}
	return bytes
}

// hashOps hashes a message's ops. A base's id covers the ops each message
// got as well as the history: the client applies a reapply run with the
// ops it holds for the base it named, so two bases that hold the same
// history with different answers (the hook's state changed between two
// requests for the same history, and the client missed the second reply)
// must not share an id.
func hashOps(ops []Op) uint64 {
	h := fnvOffset
	for _, o := range ops {
		h = fnvString(fnvUint64(h, uint64(int64(o.Part))), o.Text)
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

// ContentHash is the message's content hash over what a transform reads
// (hashMessage), worked out once per message held. Prompt-cache accounting
// (PROTOCOL.md 4.9) compares it between two requests.
func (c *Content[D]) ContentHash() uint64 {
	if c.bytes == 0 {
		c.hash, c.bytes = hashMessage(&c.Wire)
	}
	return c.hash
}

// HashOps is the hash of a message's ops, 0 for none: what the hook added
// to or replaced in the message, for prompt-cache accounting.
func (s *Store[L, D]) HashOps(ops []Op) uint64 {
	if len(ops) == 0 {
		return 0
	}
	return s.hashOps(ops)
}

// opStep is one op's step of hashOps: the hash before it, and the op.
type opStep struct {
	h uint64
	Op
}

// Bounds of Store.opSteps: at most this many steps, of ops whose text is
// at least this long (a shorter one costs less to hash than to look up).
const (
	maxOpSteps    = 256
	minOpStepText = 64
)

// hashOps is hashOps, each long op's step remembered: a history's ops
// repeat a few texts (the reminder in every user message, frozen blocks,
// guidance remembered per error), and each request hashes them twice, for
// prompt-cache accounting and for the base id.
func (s *Store[L, D]) hashOps(ops []Op) uint64 {
	h := fnvOffset
	for _, o := range ops {
		if len(o.Text) < minOpStepText {
			h = fnvString(fnvUint64(h, uint64(int64(o.Part))), o.Text)
			continue
		}
		k := opStep{h, o}
		if next, ok := s.opSteps[k]; ok {
			h = next
			continue
		}
		h = fnvString(fnvUint64(h, uint64(int64(o.Part))), o.Text)
		if s.opSteps == nil || len(s.opSteps) >= maxOpSteps {
			s.opSteps = make(map[opStep]uint64)
		}
		s.opSteps[k] = h
	}
	return h
}
