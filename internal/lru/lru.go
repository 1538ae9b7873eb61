// Package lru is a map that keeps its keys in order of recent use: the
// one bounded-memory structure behind the session store's parents, tracked
// sessions, pending calls, entries per agent, frozen blocks and
// prompt-cache figures, and the incremental sync's bases. It decides
// nothing about bounds: a caller evicts what it wants with Back and Remove.
// It is not safe for concurrent use; its owner holds the lock.
package lru

import "iter"

// List maps keys to values, ordered from the front (most recently used or
// added) to the back (least). The zero List is not usable; call New.
type List[K comparable, V any] struct {
	m    map[K]*node[K, V]
	root node[K, V] // sentinel: root.next is the front, root.prev the back
}

type node[K comparable, V any] struct {
	key        K
	val        V
	prev, next *node[K, V]
}

// New returns an empty list.
func New[K comparable, V any]() *List[K, V] {
	l := &List[K, V]{m: make(map[K]*node[K, V])}
	l.root.next, l.root.prev = &l.root, &l.root
	return l
}

// Len is the number of keys.
func (l *List[K, V]) Len() int { return len(l.m) }

// Get returns k's value without changing the order.
func (l *List[K, V]) Get(k K) (V, bool) {
	if n := l.m[k]; n != nil {
		return n.val, true
	}
	var zero V
	return zero, false
}

// Has reports whether k is in the list.
func (l *List[K, V]) Has(k K) bool { return l.m[k] != nil }

// Touch moves k to the front; it reports whether k was there.
func (l *List[K, V]) Touch(k K) bool {
	n := l.m[k]
	if n == nil {
		return false
	}
	l.unlink(n)
	l.insertAfter(n, &l.root)
	return true
}

// PushFront sets k's value and moves k to the front.
func (l *List[K, V]) PushFront(k K, v V) { l.put(k, v, &l.root) }

// PushBack sets k's value and moves k to the back: for filling a list
// from data ordered most recent first.
func (l *List[K, V]) PushBack(k K, v V) { l.put(k, v, l.root.prev) }

func (l *List[K, V]) put(k K, v V, at *node[K, V]) {
	n := l.m[k]
	if n != nil {
		if n == at {
			at = n.prev
		}
		l.unlink(n)
	} else {
		n = &node[K, V]{key: k}
		l.m[k] = n
	}
	n.val = v
	l.insertAfter(n, at)
}

// Set changes k's value where it is in the order; it reports whether k
// was there (a missing k is not added).
func (l *List[K, V]) Set(k K, v V) bool {
	n := l.m[k]
	if n == nil {
		return false
	}
	n.val = v
	return true
}

// Remove deletes k and returns its value.
func (l *List[K, V]) Remove(k K) (V, bool) {
	n := l.m[k]
	if n == nil {
		var zero V
		return zero, false
	}
	l.unlink(n)
	delete(l.m, k)
	return n.val, true
}

// Front returns the most recently used key and value.
func (l *List[K, V]) Front() (K, V, bool) { return l.at(l.root.next) }

// Back returns the least recently used key and value.
func (l *List[K, V]) Back() (K, V, bool) { return l.at(l.root.prev) }

func (l *List[K, V]) at(n *node[K, V]) (K, V, bool) {
	if n == &l.root {
		var k K
		var v V
		return k, v, false
	}
	return n.key, n.val, true
}

// All yields the keys and values from the front to the back. The loop's
// body may Remove the key it is given (and no other).
func (l *List[K, V]) All() iter.Seq2[K, V] {
	return func(yield func(K, V) bool) {
		for n := l.root.next; n != &l.root; {
			next := n.next
			if !yield(n.key, n.val) {
				return
			}
			n = next
		}
	}
}

// Backward yields the keys and values from the back to the front, with
// All's rule on removal.
func (l *List[K, V]) Backward() iter.Seq2[K, V] {
	return func(yield func(K, V) bool) {
		for n := l.root.prev; n != &l.root; {
			prev := n.prev
			if !yield(n.key, n.val) {
				return
			}
			n = prev
		}
	}
}

func (l *List[K, V]) unlink(n *node[K, V]) {
	n.prev.next = n.next
	n.next.prev = n.prev
	n.prev, n.next = nil, nil
}

func (l *List[K, V]) insertAfter(n, at *node[K, V]) {
	n.prev = at
	n.next = at.next
	at.next.prev = n
	at.next = n
}
