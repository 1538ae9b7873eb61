package lru

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func keys(l *List[string, int]) []string {
	var out []string
	for k := range l.All() {
		out = append(out, k)
	}
	return out
}

func backward(l *List[string, int]) []string {
	var out []string
	for k := range l.Backward() {
		out = append(out, k)
	}
	return out
}

func TestListOrder(t *testing.T) {
	tests := []struct {
		name string
		ops  func(l *List[string, int])
		want []string
	}{
		{"push front", func(l *List[string, int]) { l.PushFront("a", 1); l.PushFront("b", 2); l.PushFront("c", 3) }, []string{"c", "b", "a"}},
		{"push back", func(l *List[string, int]) { l.PushBack("a", 1); l.PushBack("b", 2); l.PushBack("c", 3) }, []string{"a", "b", "c"}},
		{"touch moves to front", func(l *List[string, int]) {
			l.PushFront("a", 1)
			l.PushFront("b", 2)
			l.PushFront("c", 3)
			assert.True(t, l.Touch("a"))
			assert.False(t, l.Touch("zz"))
		}, []string{"a", "c", "b"}},
		{"push front of a present key moves it", func(l *List[string, int]) {
			l.PushBack("a", 1)
			l.PushBack("b", 2)
			l.PushFront("b", 20)
		}, []string{"b", "a"}},
		{"push back of the back key keeps it", func(l *List[string, int]) {
			l.PushBack("a", 1)
			l.PushBack("b", 2)
			l.PushBack("b", 3)
		}, []string{"a", "b"}},
		{"push back of the front key moves it", func(l *List[string, int]) {
			l.PushBack("a", 1)
			l.PushBack("b", 2)
			l.PushBack("a", 3)
		}, []string{"b", "a"}},
		{"remove", func(l *List[string, int]) {
			l.PushFront("a", 1)
			l.PushFront("b", 2)
			l.PushFront("c", 3)
			v, ok := l.Remove("b")
			assert.True(t, ok)
			assert.Equal(t, 2, v)
			_, ok = l.Remove("b")
			assert.False(t, ok)
		}, []string{"c", "a"}},
		{"remove while iterating", func(l *List[string, int]) {
			for _, k := range []string{"a", "b", "c", "d"} {
				l.PushBack(k, len(k))
			}
			for k := range l.All() {
				if k == "b" || k == "d" {
					l.Remove(k)
				}
			}
		}, []string{"a", "c"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := New[string, int]()
			tt.ops(l)
			got := keys(l)
			if got == nil {
				got = []string{}
			}
			assert.Equal(t, tt.want, got)
			require.Equal(t, len(tt.want), l.Len())
			rev := make([]string, len(tt.want))
			for i, k := range tt.want {
				rev[len(rev)-1-i] = k
			}
			if len(rev) > 0 {
				assert.Equal(t, rev, backward(l))
			}
		})
	}
}

func TestListValues(t *testing.T) {
	l := New[string, int]()
	_, _, ok := l.Front()
	assert.False(t, ok)
	_, _, ok = l.Back()
	assert.False(t, ok)
	l.PushFront("a", 1)
	l.PushFront("b", 2)
	k, v, ok := l.Front()
	assert.Equal(t, []any{"b", 2, true}, []any{k, v, ok})
	k, v, ok = l.Back()
	assert.Equal(t, []any{"a", 1, true}, []any{k, v, ok})
	assert.True(t, l.Set("a", 10))
	assert.False(t, l.Set("x", 1))
	got, ok := l.Get("a")
	assert.True(t, ok)
	assert.Equal(t, 10, got)
	assert.Equal(t, []string{"b", "a"}, keys(l), "Set and Get keep the order")
	assert.True(t, l.Has("b"))
	assert.False(t, l.Has("x"))
	// Eviction as the store does it: drop from the back to a bound.
	for i := range 10 {
		l.PushFront(string(rune('c'+i)), i)
	}
	for l.Len() > 3 {
		k, _, _ := l.Back()
		l.Remove(k)
	}
	assert.Equal(t, []string{"l", "k", "j"}, keys(l))
}

func TestListBreakStopsIteration(t *testing.T) {
	l := New[string, int]()
	l.PushBack("a", 1)
	l.PushBack("b", 2)
	n := 0
	for range l.All() {
		n++
		break
	}
	for range l.Backward() {
		n++
		break
	}
	assert.Equal(t, 2, n)
}
