package handlers

import (
	"encoding/json"
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
