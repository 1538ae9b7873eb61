package sessions

import "context"

// The frozen cache-stable blocks (PROTOCOL.md 4.4): per session and
// message, the Resumable Sessions block the message carries, computed once.

type frozenBlock struct{ messageID, text string }

// Frozen is the store's methods for the frozen cache-stable blocks (the
// parent set keeps them with each parent).
type Frozen struct{ s *Store }

// Frozen is the store's frozen blocks.
func (s *Store) Frozen() Frozen { return Frozen{s} }

// Block returns the block frozen for (session, messageID), computing
// and storing it with compute on first sight (cache-stable mode, 4.4).
// compute runs without the store's lock held, so it may call
// ResumableSessions; if two callers race on one key, the first stored
// result wins and both get it. A session holding MaxFrozenBlocksPerSession
// blocks freezes no more: a new message gets "" and nothing is stored, so
// it gets "" again next time.
//
// A session or message id over MaxIDBytes gets "" (nothing is stored, so it
// gets "" every time); a block over MaxFrozenBlockBytes is frozen as "".
func (f Frozen) Block(ctx context.Context, session, messageID string, compute func() string) string {
	s := f.s
	if len(session) > MaxIDBytes || len(messageID) > MaxIDBytes {
		return ""
	}
	s.lock(ctx)
	s.db.refresh()
	p := s.parent(session)
	if text, ok := frozenText(p, messageID); ok {
		s.release()
		return text
	}
	full := frozenFull(p)
	s.release()
	if full {
		return ""
	}

	text := compute()
	if len(text) > MaxFrozenBlockBytes {
		text = ""
	}

	s.lock(ctx)
	defer s.unlock()
	s.inWrite(func() error {
		p = s.parent(session) // it may have been evicted or deleted meanwhile
		if was, ok := frozenText(p, messageID); ok {
			text = was
			return nil
		}
		if frozenFull(p) {
			text = "" // filled up meanwhile
			return nil
		}
		s.parents.freeze(p, messageID, text, s.db != nil && !s.db.loading)
		s.changes++
		s.enforceBudget()
		return nil
	}, false)
	return text
}

func frozenText(p *parentState, messageID string) (string, bool) {
	if p.frozen == nil {
		return "", false
	}
	fb, ok := p.frozen.Get(messageID)
	if !ok {
		return "", false
	}
	return fb.text, true
}

func frozenFull(p *parentState) bool {
	return p.frozen != nil && p.frozen.Len() >= MaxFrozenBlocksPerSession
}

// Retain makes room in a session that holds MaxFrozenBlocksPerSession
// blocks: it forgets those whose message inHistory says is gone (OpenCode
// dropped it from the history, e.g. by compaction), as no request will
// carry that message again. Below the bound it does nothing, so a request
// that carries only part of a history (a title request) costs nothing.
func (f Frozen) Retain(ctx context.Context, session string, inHistory func(messageID string) bool) {
	s := f.s
	s.lock(ctx)
	defer s.unlock()
	s.db.refresh()
	p := s.cached(session)
	if p == nil || !frozenFull(p) {
		return
	}
	s.inWrite(func() error {
		if p = s.cached(session); p == nil {
			return nil
		}
		for id, fb := range p.frozen.All() {
			if !inHistory(id) {
				p.frozen.Remove(id)
				if s.db != nil {
					p.goneFrozen = append(p.goneFrozen, id)
				}
				s.parents.frozen--
				s.parents.addBytes(p, -frozenCost(fb))
				s.changes++
			}
		}
		return nil
	}, false)
}
