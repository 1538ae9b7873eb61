package rpc

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A message with a lone surrogate is read with it as U+FFFD; every other
// escaped character of the user's text reads as itself, those just past
// the surrogates (U+E000 to U+FFFF: private use, the BOM, U+FFFD itself)
// and just before them included.
func TestServeLoneSurrogateLeavesOtherEscapes(t *testing.T) {
	tests := []struct {
		name, params, want string
	}{
		{"past the surrogates", `"\ud83d \ue000 \uE001 \uf8ff \ufeff \ufffd \uFFFF"`, `"\ufffd \ue000 \uE001 \uf8ff \ufeff \ufffd \uFFFF"`},
		{"before them", `"\ud7ff \udc00 \u0041 \ud7FF"`, `"\ud7ff \ufffd \u0041 \ud7FF"`},
		{"a pair beside", `["\ud83d\ude00", "\udfff", "\ue000"]`, `["\ud83d\ude00", "\ufffd", "\ue000"]`},
		{"in a member name", `{"\ue000": "\udbff", "\uffff": 1}`, `{"\ue000": "\ufffd", "\uffff": 1}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := startServer(t, Options{}, false)
			s.send(`{"jsonrpc":"2.0","id":1,"method":"echo","params":` + tt.params + `}`)
			r := s.next()
			require.Nil(t, r.Error, "%+v", r.Error)
			var got struct{ Raw string }
			require.NoError(t, json.Unmarshal(r.Result, &got))
			assert.Equal(t, tt.want, got.Raw)
			s.expectAlive()
		})
	}
}
