package handlers

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestOpMarshal(t *testing.T) {
	tests := []struct {
		name    string
		op      Op
		want    string
		wantErr bool
	}{
		{"replace", Op{Op: "replace", Path: "/args/task_id", Value: "ses_8f2"}, `{"op":"replace","path":"/args/task_id","value":"ses_8f2"}`, false},
		{"add object", Op{Op: "add", Path: "/messages/4/parts/-", Value: map[string]any{"type": "text", "text": "x"}}, `{"op":"add","path":"/messages/4/parts/-","value":{"text":"x","type":"text"}}`, false},
		{"add null keeps value", Op{Op: "add", Path: "/a"}, `{"op":"add","path":"/a","value":null}`, false},
		{"replace null keeps value", Op{Op: "replace", Path: "/a", Value: nil}, `{"op":"replace","path":"/a","value":null}`, false},
		{"remove has no value", Op{Op: "remove", Path: "/args/task_id", Value: "ignored"}, `{"op":"remove","path":"/args/task_id"}`, false},
		{"HTML characters escaped as encoding/json does", Op{Op: "add", Path: "/system/-", Value: "<a>&"}, `{"op":"add","path":"/system/-","value":"\u003ca\u003e\u0026"}`, false},
		{"unsupported op", Op{Op: "move", Path: "/a"}, "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := json.Marshal(tt.op)
			if tt.wantErr {
				assert.Error(t, err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, string(got))
			var back Op
			require.NoError(t, json.Unmarshal(got, &back))
			assert.Equal(t, tt.op.Op, back.Op)
			assert.Equal(t, tt.op.Path, back.Path)
		})
	}
}

func TestPatchResultMarshal(t *testing.T) {
	tests := []struct {
		name string
		r    any
		want string
	}{
		{"nil patch", PatchResult{}, `{"patch":[]}`},
		{"nil patch by pointer", &PatchResult{}, `{"patch":[]}`},
		{"empty patch", PatchResult{Patch: []Op{}}, `{"patch":[]}`},
		{"ops in order", PatchResult{Patch: []Op{{Op: "remove", Path: "/b"}, {Op: "add", Path: "/a", Value: 1}}},
			`{"patch":[{"op":"remove","path":"/b"},{"op":"add","path":"/a","value":1}]}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := json.Marshal(tt.r)
			require.NoError(t, err)
			assert.Equal(t, tt.want, string(got))
		})
	}
}

// A transform reply is written by AppendResult (rpc.EncodedResult): the
// bytes json.Marshal writes for it, an empty patch as [].
func TestTransformResultAppend(t *testing.T) {
	block := "<resumable-sessions>\n\t\"a\" & b\u2028</resumable-sessions>"
	tests := []struct {
		name string
		r    transformResult
		want string
	}{
		{"no patch, no base", transformResult{}, `{"patch":[]}`},
		{"base only", transformResult{Patch: []Op{}, Base: "9f"}, `{"patch":[],"base":"9f"}`},
		{"parts added, guidance replaced, a remove", transformResult{Patch: []Op{
			addPart(3, block),
			addPart(12, "reminder"),
			{Op: "replace", Path: "/messages/1/parts/0/state/error", Value: "boom <retry>"},
			{Op: "remove", Path: "/messages/0/parts/1"},
			{Op: "add", Path: "/a", Value: nil},
		}, Base: "ab"}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.r.AppendResult([]byte("x"))
			require.NoError(t, err)
			want := tt.want
			if want == "" {
				b, err := json.Marshal(tt.r)
				require.NoError(t, err)
				want = string(b)
			}
			assert.Equal(t, "x"+want, string(got))
			assert.True(t, json.Valid(got[1:]))
		})
	}
	_, err := transformResult{Patch: []Op{{Op: "move", Path: "/a"}}}.AppendResult(nil)
	assert.Error(t, err, "an op PROTOCOL.md 3 does not allow is an error, as in MarshalJSON")
}

func TestPartEncodings(t *testing.T) {
	var e partEncodings
	for _, part := range []syntheticPart{
		{Type: "text", Text: "<block>\n\"x\" & \u2028", Synthetic: true},
		{Type: "text", Text: "reminder"},
	} {
		want, err := json.Marshal(part)
		require.NoError(t, err)
		assert.Equal(t, string(want), string(e.get(part)))
		assert.Equal(t, string(want), string(e.get(part)), "again, from the cache")
	}
	assert.Len(t, e.byPart, 2)
	for i := range maxEncodedParts + 1 {
		e.get(syntheticPart{Type: "text", Text: strconv.Itoa(i)})
	}
	assert.LessOrEqual(t, len(e.byPart), maxEncodedParts, "the count is bounded")
	e.get(syntheticPart{Type: "text", Text: strings.Repeat("b", maxEncodedPartBytes/4)})
	e.get(syntheticPart{Type: "text", Text: strings.Repeat("c", maxEncodedPartBytes/4)})
	assert.LessOrEqual(t, e.bytes, maxEncodedPartBytes, "the bytes are bounded")
	assert.Len(t, e.byPart, 1)
	huge := syntheticPart{Type: "text", Text: strings.Repeat("h", maxEncodedPartBytes/2)}
	want, err := json.Marshal(huge)
	require.NoError(t, err)
	assert.Equal(t, want, e.get(huge))
	assert.Len(t, e.byPart, 1, "a part over the bound on its own is encoded, not kept")
}
