package incremental

import (
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"testing"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hookwire/hookwire/contract/contracttest"
)

// The wire types decode exactly the fields the contract says a transform
// reads (contract.InfoReads, contract.PartReads).
func TestMessageIsTheContractsReads(t *testing.T) {
	contracttest.AssertMessageType(t, Message{})
}

// Reads keeps the strings of exactly the contract's read fields (and of
// sync's): checked against every member name of a real OpenCode history.
func TestReadsAreTheContracts(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("..", "shim", "test", "fixtures", "messages-transform.json"))
	require.NoError(t, err)
	var payload any
	require.NoError(t, json.Unmarshal(raw, &payload))
	names := map[string]bool{}
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			for k, e := range v {
				names[k] = true
				walk(e)
			}
		case []any:
			for _, e := range v {
				walk(e)
			}
		}
	}
	walk(payload)
	require.Greater(t, len(names), 20, "the payload has OpenCode's members")
	contracttest.AssertReadsNames(t, Reads, slices.Sorted(maps.Keys(names)))
}

// A base's hash covers every field the contract reads and nothing else:
// a change of a read field is another history, a change elsewhere is not.
func TestHashMessageCoversTheContractsReads(t *testing.T) {
	hash := func(m map[string]any) uint64 {
		raw, err := json.Marshal(m)
		require.NoError(t, err)
		var msg Message
		require.NoError(t, jsonv2.Unmarshal(raw, &msg))
		h, _ := hashMessage(&msg)
		return h
	}
	base := hash(contracttest.Message())
	for _, c := range contracttest.Changes() {
		t.Run(c.Path, func(t *testing.T) {
			if c.Read {
				assert.NotEqual(t, base, hash(c.Message), "a read field changed")
			} else {
				assert.Equal(t, base, hash(c.Message), "an unread member changed")
			}
		})
	}
}
