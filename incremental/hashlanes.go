package incremental

// Hashing a full history's messages four at a time (issue 50). FNV-1a is
// a chain: each byte's step waits for the one before it (an xor, then a
// multiply of three cycles or so), so one message's hash runs at about a
// byte every four cycles however fast the processor is. Four messages'
// chains are independent, and stepped side by side they keep the
// multiplier busy: a text-heavy 1 MB history's 200 KB of texts hash in
// about a third of the time. The hashes are hashMessage's, bit for bit
// (TestHashContentsMatchesHashMessage): base ids are in recordings and
// prompt prints in the state file.

// hashLanes is how many messages are hashed side by side: four chains
// keep one multiplier busy.
const hashLanes = 4

// minRun is the shortest string stepped side by side with the other
// lanes; a shorter one is hashed on its own at once, as stepping the
// lanes costs a few branches.
const minRun = 32

// hashStep is one step of a message's hash as hashMessage makes it: a tag
// byte, then, unless mark, a string (its length, then its bytes).
type hashStep struct {
	tag  byte
	mark bool
	s    string
}

// hashSteps appends the steps of m's hash to steps and returns them with
// m's counted bytes, as hashMessage counts them.
func hashSteps(steps []hashStep, m *Message) ([]hashStep, int64) {
	bytes := int64(MessageOverhead)
	str := func(tag byte, s string) {
		steps = append(steps, hashStep{tag: tag, s: s})
		bytes += int64(len(s))
	}
	mark := func(tag byte) { steps = append(steps, hashStep{tag: tag, mark: true}) }
	str('i', m.Info.ID)
	str('r', m.Info.Role)
	if s, ok := m.Info.Agent.(string); ok {
		str('a', s)
	}
	str('s', m.Info.SessionID)
	if m.Parts == nil {
		mark('N')
	}
	for i := range m.Parts {
		p := &m.Parts[i]
		bytes += PartOverhead
		mark('P')
		str('t', p.Type)
		if p.Text != nil && TextRead(p.Type) {
			str('x', *p.Text)
		} else if p.Text != nil {
			bytes += int64(len(*p.Text)) // held, though not read
		}
		if p.Synthetic {
			mark('y')
		}
		str('o', p.Tool)
		str('c', p.CallID)
		if p.State != nil {
			str('S', p.State.Status)
			if s, ok := p.State.Error.(string); ok {
				str('e', s)
			}
		}
	}
	return steps, bytes
}

// lane is one message being hashed: its steps, the next one, the hash so
// far, and the long string being stepped with the other lanes (run).
type lane[D any] struct {
	c     *Content[D]
	steps []hashStep
	next  int
	h     uint64
	run   string
}

// advance hashes l's steps up to its next long string, which becomes its
// run, and reports whether it has one; false: the message is hashed.
func (l *lane[D]) advance() bool {
	h := l.h
	for l.next < len(l.steps) {
		st := &l.steps[l.next]
		l.next++
		h = fnvByte(h, st.tag)
		if st.mark {
			continue
		}
		h = fnvUint64(h, uint64(len(st.s)))
		if len(st.s) >= minRun {
			l.h, l.run = h, st.s
			return true
		}
		for i := 0; i < len(st.s); i++ {
			h = (h ^ uint64(st.s[i])) * fnvPrime
		}
	}
	l.h, l.run = h, ""
	return false
}

// hashContents works out the content hash and counted bytes
// (hashMessage) of each message of es that has none yet, hashLanes
// messages at a time.
func hashContents[L, D any](es []Entry[L, D]) {
	var lanes [hashLanes]lane[D]
	next := 0
	// start gives l the next message, or reports false when there is none.
	start := func(l *lane[D]) bool {
		for next < len(es) {
			c := es[next].Content
			next++
			if c.bytes != 0 {
				continue
			}
			l.c, l.next, l.h = c, 0, fnvOffset
			l.steps, c.bytes = hashSteps(l.steps[:0], &c.Wire)
			if l.advance() {
				return true
			}
			c.hash = l.h
		}
		l.c = nil
		return false
	}
	// finish moves l past its run: to its next run, else to the next
	// message; false when nothing is left for it.
	finish := func(l *lane[D]) bool {
		if l.advance() {
			return true
		}
		l.c.hash = l.h
		return start(l)
	}
	active := 0
	for i := range lanes {
		if start(&lanes[i]) {
			active++
		}
	}
	for active == hashLanes {
		a, b, c, d := &lanes[0], &lanes[1], &lanes[2], &lanes[3]
		n := min(len(a.run), len(b.run), len(c.run), len(d.run))
		ra, rb, rc, rd := a.run[:n], b.run[:n], c.run[:n], d.run[:n]
		ha, hb, hc, hd := a.h, b.h, c.h, d.h
		for i := 0; i < len(ra); i++ {
			ha = (ha ^ uint64(ra[i])) * fnvPrime
			hb = (hb ^ uint64(rb[i])) * fnvPrime
			hc = (hc ^ uint64(rc[i])) * fnvPrime
			hd = (hd ^ uint64(rd[i])) * fnvPrime
		}
		a.h, b.h, c.h, d.h = ha, hb, hc, hd
		a.run, b.run, c.run, d.run = a.run[n:], b.run[n:], c.run[n:], d.run[n:]
		for _, l := range [...]*lane[D]{a, b, c, d} {
			if len(l.run) == 0 && !finish(l) {
				active--
			}
		}
	}
	// Fewer messages left than lanes: each ends on its own.
	for i := range lanes {
		l := &lanes[i]
		for l.c != nil {
			h := l.h
			for j := 0; j < len(l.run); j++ {
				h = (h ^ uint64(l.run[j])) * fnvPrime
			}
			l.h, l.run = h, ""
			finish(l)
		}
	}
}
