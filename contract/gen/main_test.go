package main

import (
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The generated files are what the contract generates: a change to
// contract.json without `go generate ./contract`, or a hand edit of a
// generated file, fails here.
func TestGeneratedFilesAreCurrent(t *testing.T) {
	root := filepath.Join("..", "..")
	files, err := generateFrom(root)
	require.NoError(t, err)
	assert.Len(t, slices.Collect(maps.Keys(files)), 5)
	for path, want := range files {
		got, err := os.ReadFile(filepath.Join(root, path))
		require.NoError(t, err)
		assert.True(t, string(got) == string(want), "%s is stale: run go generate ./contract", path)
		assert.True(t, strings.HasPrefix(string(got), "// Code generated ") &&
			strings.Contains(strings.SplitN(string(got), "\n", 2)[0], "DO NOT EDIT."), "%s: first line marks it generated", path)
	}
}

// run writes the files the test above compares: into a copy of the
// tree's contract, the generated files appear byte for byte.
func TestRunWritesTheFiles(t *testing.T) {
	root := t.TempDir()
	spec, err := os.ReadFile(filepath.Join("..", "contract.json"))
	require.NoError(t, err)
	for _, dir := range []string{"contract", "shim/src", "handlers"} {
		require.NoError(t, os.MkdirAll(filepath.Join(root, dir), 0o755))
	}
	require.NoError(t, os.WriteFile(filepath.Join(root, specPath), spec, 0o644))
	require.NoError(t, run(root))
	want, err := generateFrom(root)
	require.NoError(t, err)
	for path, data := range want {
		got, err := os.ReadFile(filepath.Join(root, path))
		require.NoError(t, err)
		assert.Equal(t, string(data), string(got), path)
	}
}

// A contract with a mistake is refused with an error that names it;
// nothing is generated from it.
func TestContractMistakes(t *testing.T) {
	base := func(methods, extra string) string {
		return `{"protocolVersion": 1, "methods": [` + methods + `], "events": ["session.deleted"],
		  "observer": {"methods": ["status"], "notifications": ["sessions.changed"]},
		  "errors": [{"code": -32700, "name": "ParseError", "message": "parse error"}],
		  "transformReads": {"info": [{"path": "id", "type": "string"}], "part": [], "sync": []},
		  "packages": {"plugin": "p", "platforms": [{"os": "linux", "cpu": "x64", "goos": "linux", "goarch": "amd64", "what": "L"}]}` + extra + `}`
	}
	status := `{"name": "status", "kind": "request", "role": "method"}`
	hook := `{"name": "chat.message", "kind": "request", "role": "hook", "opencodeHook": "chat.message"}`
	tests := []struct {
		name, spec, err string
	}{
		{"valid", base(status+","+hook, ""), ""},
		{"unknown member", base(status, `, "hookz": []`), `unknown field "hookz"`},
		{"method twice", base(status+","+status, ""), `method "status" is listed twice`},
		{"bad kind", base(`{"name": "status", "kind": "call", "role": "method"}`, ""), `kind must be request or notification`},
		{"bad role", base(`{"name": "status", "kind": "request", "role": "hooks"}`, ""), `role must be lifecycle, hook or method`},
		{"hook without OpenCode hook", base(status+`,{"name": "chat.message", "kind": "request", "role": "hook"}`, ""), `hook "chat.message": opencodeHook is missing`},
		{"OpenCode hook mapped twice", base(status+","+hook+`,{"name": "chat.x", "kind": "request", "role": "hook", "opencodeHook": "chat.message"}`, ""), `mapped twice`},
		{"method with a hook's member", base(`{"name": "status", "kind": "request", "role": "method", "transform": true}`, ""), `belong to hooks`},
		{"observer method not in methods", base(hook, ""), `observer method "status" is not a method`},
		{"name with a space", base(status+`,{"name": "chat message", "kind": "request", "role": "hook", "opencodeHook": "x"}`, ""), `"chat message": a name is`},
		{"unknown member type", base(`{"name": "status", "kind": "request", "role": "method", "params": {"fields": [{"name": "x", "type": "Nope[]"}]}}`, ""), `status params.x: unknown type "Nope"`},
		{"member without type or fields", base(`{"name": "status", "kind": "request", "role": "method", "params": {"fields": [{"name": "x"}]}}`, ""), `status params.x: either type or fields`},
		{"required and optional", base(`{"name": "status", "kind": "request", "role": "method", "params": {"fields": [{"name": "x", "type": "any", "required": true, "optional": true}]}}`, ""), `exclude each other`},
		{"notification with a result", base(status+`,{"name": "chat.x", "kind": "notification", "role": "hook", "opencodeHook": "x", "result": "string"}`, ""), `"chat.x": a notification has no result`},
		{"type defined twice", base(status, `, "types": [{"name": "T", "go": "int"}, {"name": "T", "go": "int"}]`), `type "T": a name starts upper-case and is defined once`},
		{"identifiers collide", base(status+`,{"name": "sessions.Changed", "kind": "request", "role": "method"}`, ""), `both become the identifier MethodSessionsChanged`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := parse([]byte(tt.spec))
			if tt.err == "" {
				require.NoError(t, err)
				_, err = goSource(s)
				require.NoError(t, err)
				return
			}
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.err)
		})
	}
}
