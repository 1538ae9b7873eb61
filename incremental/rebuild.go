package incremental

import (
	"errors"
	"fmt"
)

// ErrOverBudget: the history an incremental request stands for would be
// over the histories' budget (PROTOCOL.md 7). A base message may be kept
// any number of times, so a short request could otherwise stand for a
// history of any size: it is refused before it is built. The client sends
// the full form.
var ErrOverBudget = errors.New("the history would be over the budget of histories held")

// rebuild builds the history items describe against b. When the first
// item keeps base messages from 0 (a history grown or reverted: most
// requests), they stay where they are, in b's array, which the history
// borrows (History.Discard gives it back; a history committed replaces b).
// Nothing is changed until every item has been checked, and the history
// is checked against the store's budget as it grows, before each item is
// added: its counted bytes (Store.keep), with the ops each message kept
// got in the base, never pass the budget.
func (b *base[L, D]) rebuild(s *Store[L, D], items []Item) (*History[L, D], error) {
	stale := b.gen != s.gen
	n := len(b.msgs)
	head, skip := 0, 0
	if len(items) > 0 && items[0].isKeep() && *items[0].Keep == 0 {
		if _, count, err := keepRange(items[0].Keep, items[0].Count, n); err == nil {
			head, skip = count, 1
		}
	}
	var used int64 // the history's counted bytes so far
	if head > 0 {
		used = int64(b.msgs[head-1].idBytes)
	}
	var rest []Entry[L, D]
	if head == 0 {
		rest = make([]Entry[L, D], 0, min(n+1, int(s.maxBytes/MessageOverhead)+1))
	}
	for i, it := range items[skip:] {
		at := func(format string, args ...any) error {
			return fmt.Errorf("sync.messages[%d]: "+format, append([]any{i + skip}, args...)...)
		}
		tooBig := func() error {
			return fmt.Errorf("sync.messages[%d]: %w (%d bytes); send the full form", i+skip, ErrOverBudget, s.maxBytes)
		}
		over := func(add int64) error {
			if used+add <= s.maxBytes {
				used += add
				return nil
			}
			return tooBig()
		}
		switch {
		case it.isKeep():
			from, count, err := keepRange(it.Keep, it.Count, n)
			if err != nil {
				return nil, at("%s", err.Error())
			}
			if err := over(b.rangeBytes(from, count)); err != nil {
				return nil, err
			}
			at := len(rest)
			rest = append(rest, b.msgs[from:from+count]...)
			keptFrom(rest[at:], from, stale)
		case it.Message != nil && it.Keep == nil && it.Count == nil && it.Edit == nil && it.Info == nil && it.Parts == nil:
			c := &Content[D]{Wire: *it.Message}
			c.hash, c.bytes = hashMessage(&c.Wire)
			if err := over(c.bytes); err != nil {
				return nil, err
			}
			rest = append(rest, Entry[L, D]{Content: c})
		case it.Edit != nil && it.Keep == nil && it.Count == nil && it.Message == nil:
			j := *it.Edit
			if j < 0 || j >= n {
				return nil, at("edit %d is not a message of the base (it has %d)", j, n)
			}
			m := b.msgs[j].Wire
			if it.Info != nil {
				m.Info = *it.Info
			}
			if it.Parts != nil {
				parts, err := applyParts(m.Parts, *it.Parts, s.maxBytes-used)
				if errors.Is(err, ErrOverBudget) {
					return nil, tooBig()
				}
				if err != nil {
					return nil, at("%s", err.Error())
				}
				m.Parts = parts
			}
			c := &Content[D]{Wire: m}
			c.hash, c.bytes = hashMessage(&c.Wire)
			if err := over(c.bytes + int64(len(b.msgs[j].ops))*OpOverhead); err != nil {
				return nil, err
			}
			rest = append(rest, Entry[L, D]{Content: c, place: uint32(j + 1), ops: b.msgs[j].ops, opsHash: b.msgs[j].opsHash})
		default:
			return nil, at("an item is exactly one of {keep, count}, {message} or {edit, info?, parts?}")
		}
	}
	h := &History[L, D]{store: s}
	if head == 0 {
		h.Entries = rest
		return h, nil
	}
	// The history borrows b's array: what it writes over of b's messages
	// is saved for Discard.
	h.from, h.undoAt = b, head
	if over := min(head+len(rest), n); over > head && head+len(rest) <= cap(b.msgs) {
		h.undo = append([]Entry[L, D](nil), b.msgs[head:over]...)
	}
	h.Entries = append(b.msgs[:head], rest...)
	keptFrom(h.Entries[:head], 0, stale)
	return h, nil
}

func (it *Item) isKeep() bool {
	return it.Keep != nil && it.Message == nil && it.Edit == nil && it.Info == nil && it.Parts == nil
}

// keptFrom marks msgs as base messages from, from+1, ... kept as they were.
func keptFrom[L, D any](msgs []Entry[L, D], from int, stale bool) {
	for k := range msgs {
		m := &msgs[k]
		m.setOrigin(from + k + 1)
		m.place |= kept
		if stale {
			m.place &^= derived
		}
	}
}

// rangeBytes is the counted bytes of base messages from to from+count-1,
// with the ops they got.
func (b *base[L, D]) rangeBytes(from, count int) int64 {
	bytes := int64(b.msgs[from+count-1].idBytes)
	if from > 0 {
		bytes -= int64(b.msgs[from-1].idBytes)
	}
	return bytes
}

// applyParts rebuilds a message's parts from base's. room is what the
// budget has left: ErrOverBudget before the parts' counted bytes would
// pass it (a part may be kept any number of times).
func applyParts(base []Part, items []PartItem, room int64) ([]Part, error) {
	parts := make([]Part, 0, min(len(items), int(max(room, 0)/PartOverhead)+1))
	var used int64
	for k, it := range items {
		switch {
		case it.Keep != nil && it.Part == nil:
			from, count, err := keepRange(it.Keep, it.Count, len(base))
			if err != nil {
				return nil, fmt.Errorf("parts[%d]: %s", k, err.Error())
			}
			for i := from; i < from+count; i++ {
				used += partBytes(&base[i])
			}
			if used > room {
				return nil, ErrOverBudget
			}
			parts = append(parts, base[from:from+count]...)
		case it.Part != nil && it.Keep == nil && it.Count == nil:
			if used += partBytes(it.Part); used > room {
				return nil, ErrOverBudget
			}
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
