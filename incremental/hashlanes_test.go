package incremental

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// randomMessage is a message whose fields are drawn from rnd: strings of
// every length around minRun, absent and non-string fields, reasoning
// parts, parts nil or empty.
func randomMessage(rnd *rand.Rand) Message {
	str := func() string {
		switch rnd.IntN(4) {
		case 0:
			return ""
		case 1:
			return strings.Repeat("é", rnd.IntN(2*minRun))
		case 2:
			return strings.Repeat("x", minRun-2+rnd.IntN(4))
		}
		return strings.Repeat("ab\n", rnd.IntN(2000))
	}
	m := Message{Info: Info{ID: str(), Role: str(), SessionID: str()}}
	switch rnd.IntN(3) {
	case 0:
		m.Info.Agent = str()
	case 1:
		m.Info.Agent = 7.0
	}
	if rnd.IntN(8) == 0 {
		return m // parts nil
	}
	m.Parts = []Part{}
	for range rnd.IntN(6) {
		p := Part{Type: []string{"text", "reasoning", "tool", ""}[rnd.IntN(4)], Synthetic: rnd.IntN(3) == 0, Tool: str(), CallID: str()}
		if rnd.IntN(4) > 0 {
			t := str()
			p.Text = &t
		}
		if rnd.IntN(2) == 0 {
			p.State = &State{Status: str()}
			switch rnd.IntN(3) {
			case 0:
				p.State.Error = str()
			case 1:
				p.State.Error = map[string]any{"x": 1.0}
			}
		}
		m.Parts = append(m.Parts, p)
	}
	return m
}

// The hashes worked out side by side are hashMessage's, for every count
// of messages (fewer than the lanes, a lane ending early, runs of every
// length), and a message already hashed keeps its hash.
func TestHashContentsMatchesHashMessage(t *testing.T) {
	rnd := rand.New(rand.NewPCG(1, 2))
	for n := range 40 {
		msgs := make([]Message, n)
		for i := range msgs {
			msgs[i] = randomMessage(rnd)
		}
		es := make([]Entry[struct{}, struct{}], n)
		for i := range msgs {
			es[i].Content = &Content[struct{}]{Wire: msgs[i]}
		}
		if n > 2 {
			es[1].hash, es[1].bytes = 42, 1 // hashed already: kept
		}
		hashContents(es)
		for i := range msgs {
			if n > 2 && i == 1 {
				assert.Equal(t, uint64(42), es[i].hash)
				continue
			}
			h, bytes := hashMessage(&msgs[i])
			require.Equal(t, h, es[i].hash, "message %d of %d", i, n)
			require.Equal(t, bytes, es[i].bytes, "message %d of %d", i, n)
		}
	}
}

// The store's ops hash, its long steps remembered, is hashOps's: for the
// same ops again, for a remembered text after other ops (another hash
// before it), and once the memory of steps starts over.
func TestStoreHashOpsMatchesHashOps(t *testing.T) {
	s := NewStore[struct{}, struct{}](DefaultMaxBytes)
	long := func(i int) string { return strings.Repeat("reminder ", 8) + strings.Repeat("x", i) }
	lists := [][]Op{
		nil,
		{{Part: -1, Text: long(0)}},
		{{Part: -1, Text: long(0)}},
		{{Part: 2, Text: long(0)}},
		{{Part: -1, Text: "short"}, {Part: -1, Text: long(0)}},
		{{Part: -1, Text: long(1)}, {Part: -1, Text: long(0)}},
		{{Part: -1, Text: long(0)}, {Part: -1, Text: long(1)}},
	}
	for i := range 2 * maxOpSteps {
		lists = append(lists, []Op{{Part: -1, Text: long(i % (maxOpSteps + 7))}, {Part: 3, Text: long(0)}})
	}
	for i, ops := range lists {
		want := uint64(0)
		if len(ops) > 0 {
			want = hashOps(ops)
		}
		require.Equal(t, want, s.HashOps(ops), "list %d", i)
	}
	assert.LessOrEqual(t, len(s.opSteps), maxOpSteps)
}
