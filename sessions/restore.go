package sessions

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// Restoring a store from its JSON form (snapshot.go), streamed: each
// parent and tracked session checked and loaded as it is read, within the
// store's bounds.

// Restore replaces the store's state with a document Snapshot wrote, and
// forgets the pending calls. Malformed data or a version other than
// snapshotVersion is an error and leaves the store as it was. The store's
// Config bounds and string caps apply to what is restored (the most recent
// part is kept), and bad alias counters are repaired.
func (s *Store) Restore(data []byte) error {
	return s.RestoreFrom(context.Background(), bytes.NewReader(data))
}

// RestoreFrom is Restore reading from r (sessiondb's JSON import); it stops with ctx's error when ctx is
// done, changing nothing. It takes time linear in the document's size.
func (s *Store) RestoreFrom(ctx context.Context, r io.Reader) error {
	// Build into a scratch store, then swap: a bad document changes nothing.
	s.mu.Lock()
	cfg := s.cfg
	s.mu.Unlock()
	n := New(cfg)
	if err := n.decode(ctx, r); err != nil {
		if ctx.Err() != nil && errors.Is(err, ctx.Err()) {
			return err
		}
		return fmt.Errorf("decoding session state: %w", err)
	}

	s.Adopt(n)
	return nil
}

// decode fills the empty store s, owned by the caller alone, from the
// document r holds. It reads the document one parent at a time, so memory
// holds one parent's decoded form beyond what the store keeps; parents
// beyond the bounds are read (to check the syntax) but not decoded.
func (s *Store) decode(ctx context.Context, r io.Reader) error {
	dec := json.NewDecoder(r)
	if err := expectDelim(dec, '{'); err != nil {
		return err
	}
	var version *int
	seen := make(map[string]bool, 4)
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return err
		}
		key, _ := tok.(string)
		if seen[key] {
			return fmt.Errorf("member %q listed twice", key)
		}
		seen[key] = true
		switch key {
		case "version":
			if err := dec.Decode(&version); err != nil {
				return err
			}
			if version == nil {
				return errors.New("no format version")
			}
			if *version != snapshotVersion {
				return fmt.Errorf("unknown format version %d (this build reads %d)", *version, snapshotVersion)
			}
		case "clock":
			var clock uint64
			if err := dec.Decode(&clock); err != nil {
				return err
			}
			s.clock = max(s.clock, clock)
		case "parents":
			top, err := s.parents.decode(ctx, dec, s.cfg)
			if err != nil {
				return err
			}
			s.clock = max(s.clock, top)
		case "sessionAgents":
			if err := s.tracked.decode(ctx, dec, s.cfg.MaxTrackedSessions); err != nil {
				return err
			}
		case "health":
			var list []Health
			if err := dec.Decode(&list); err != nil {
				return err
			}
			for _, h := range list {
				if h.Model != "" && len(h.Model) <= MaxModelBytes {
					h.Message = cutText(h.Message, MaxReasonBytes)
					s.health.put(h)
				}
			}
		case "cache":
			var list []CacheRecord
			if err := dec.Decode(&list); err != nil {
				return err
			}
			if err := s.cache.restore(list); err != nil {
				return err
			}
		default:
			var skip json.RawMessage
			if err := dec.Decode(&skip); err != nil {
				return err
			}
		}
	}
	if err := expectDelim(dec, '}'); err != nil {
		return err
	}
	if _, err := dec.Token(); err != io.EOF {
		return errors.New("data after the document")
	}
	if version == nil {
		return errors.New("no format version")
	}
	s.clock = s.parents.renumber(s.clock)
	s.enforceBudget()
	return nil
}

func expectDelim(dec *json.Decoder, want json.Delim) error {
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	if d, ok := tok.(json.Delim); !ok || d != want {
		return fmt.Errorf("expected %q, found %v", want, tok)
	}
	return nil
}

// decode reads a state file's parents array, most recently active first,
// into the empty set, keeping parents while they fit cfg's MaxParents and
// byte budget; it returns the highest tick of the entries kept.
func (b *parentSet) decode(ctx context.Context, dec *json.Decoder, cfg Config) (uint64, error) {
	if err := expectDelim(dec, '['); err != nil {
		return 0, err
	}
	var clock uint64
	full := false
	ids := make(map[string]bool)
	for dec.More() {
		if err := ctx.Err(); err != nil {
			return 0, err
		}
		if full {
			var skip struct{}
			if err := dec.Decode(&skip); err != nil {
				return 0, err
			}
			continue
		}
		var sp snapshotParent
		if err := dec.Decode(&sp); err != nil {
			return 0, err
		}
		if ids[sp.ID] {
			return 0, fmt.Errorf("parent %q listed twice", cutBytes(sp.ID, MaxIDBytes))
		}
		ids[sp.ID] = true
		if len(sp.ID) > MaxIDBytes {
			continue
		}
		p, top, err := b.load(&sp, cfg.MaxSessionsPerAgent, false)
		if err != nil {
			return 0, fmt.Errorf("parent %q: %w", sp.ID, err)
		}
		clock = max(clock, top)
		if b.bytes > cfg.MaxStateBytes && b.list.Len() > 1 {
			b.drop(p) // it and all older ones are beyond the budget
			full = true
		}
		if b.list.Len() >= cfg.MaxParents {
			full = true
		}
	}
	return clock, expectDelim(dec, ']')
}

// decode reads a state file's sessions' agents, most recently active
// first, into the empty set, keeping max of them.
func (b *trackedSet) decode(ctx context.Context, dec *json.Decoder, max int) error {
	if err := expectDelim(dec, '['); err != nil {
		return err
	}
	for i := 0; dec.More(); i++ {
		if i%4096 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		var sa snapshotAgent
		if err := dec.Decode(&sa); err != nil {
			return err
		}
		if b.list.Len() >= max || len(sa.Session) > MaxIDBytes || len(sa.Agent) > MaxAgentNameBytes {
			continue
		}
		if b.list.Has(sa.Session) {
			return fmt.Errorf("session %q's agent listed twice", sa.Session)
		}
		parent, running := sa.Parent, sa.Running
		if len(parent) > MaxIDBytes {
			parent = ""
		}
		if len(running) > MaxModelBytes {
			running = ""
		}
		b.track(&sessionAgent{session: sa.Session, agent: sa.Agent, model: restoredModel(sa.Model),
			parent: parent, running: running, switches: restoredSwitches(sa.Switches)}, true)
	}
	return expectDelim(dec, ']')
}
