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
	assert.Len(t, slices.Collect(maps.Keys(files)), 8)
	for path, want := range files {
		got, err := os.ReadFile(filepath.Join(root, path))
		require.NoError(t, err)
		assert.True(t, string(got) == string(want), "%s is stale: run go generate ./contract", path)
		if path == docPath || path == optionsPath {
			continue // its generated section is between markers
		}
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
	for _, dir := range []string{"contract", "shim/src", "handlers", "docs", "config"} {
		require.NoError(t, os.MkdirAll(filepath.Join(root, dir), 0o755))
	}
	require.NoError(t, os.WriteFile(filepath.Join(root, specPath), spec, 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(root, docPath), []byte("# doc\n\n"+docBegin+"stale\n"+docEnd+"after\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(root, optionsPath), []byte("# options\n\n"+optionsBegin+"stale\n"+optionsEnd+"after\n"), 0o644))
	require.NoError(t, run(root))
	want, err := generateFrom(root)
	require.NoError(t, err)
	for path, data := range want {
		got, err := os.ReadFile(filepath.Join(root, path))
		require.NoError(t, err)
		assert.Equal(t, string(data), string(got), path)
	}
}

// The doc's generated section is rewritten from the contract and nothing
// else of the doc changes; a doc without its markers is an error.
func TestProtocolDocSection(t *testing.T) {
	root := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(root, "docs"), 0o755))
	s, err := parse([]byte(`{"protocolVersion": 1, "methods": [
	  {"name": "status", "kind": "request", "role": "method", "result": "R"},
	  {"name": "x.y", "kind": "request", "role": "method", "params": {"fields": [
	    {"name": "a", "type": "string", "nonEmpty": true},
	    {"name": "b", "required": true, "fields": [{"name": "c", "type": "R[]", "nullable": true}]}]}}],
	  "types": [{"name": "R", "go": "r", "fields": [{"name": "n", "type": "integer", "omitEmpty": true}]}],
	  "notifications": [{"name": "r.told", "params": "R", "doc": "d"}],
	  "events": [], "observer": {"methods": [], "notifications": []}, "errors": [],
	  "transformReads": {"info": [], "part": [], "sync": []}, "packages": {"plugin": "p", "platforms": []}}`))
	require.NoError(t, err)
	path := filepath.Join(root, docPath)
	require.NoError(t, os.WriteFile(path, []byte("before\n"+docBegin+"old rows\n"+docEnd+"after\n"), 0o644))
	got, err := protocolDoc(root, s)
	require.NoError(t, err)
	doc := string(got)
	assert.True(t, strings.HasPrefix(doc, "before\n"+docBegin) && strings.HasSuffix(doc, docEnd+"after\n"), doc)
	assert.NotContains(t, doc, "old rows")
	for _, row := range []string{
		"| `status` | (none) | | |",
		"| `x.y` | `a` | string | required, non-empty |",
		"| `x.y` | `b` | object | required |",
		"| `x.y` | `b.c` | list of `R` | may be `null` |",
		"| `status` | request | `R` |",
		"| `x.y` | request | `null` |",
		"| `r.told` | notification, sent by the sidecar | params `R` |",
		"| `R` | `n` | integer | absent when empty |",
	} {
		assert.Contains(t, doc, row+"\n")
	}
	require.NoError(t, os.WriteFile(path, []byte("no markers\n"), 0o644))
	_, err = protocolDoc(root, s)
	assert.ErrorContains(t, err, "no generated section")
}

// The members marked varies are found through named types and lists, as
// paths from the reply's result.
func TestVaryingMembers(t *testing.T) {
	s, err := parse([]byte(`{"protocolVersion": 1, "methods": [
	  {"name": "status", "kind": "request", "role": "method", "result": "R"},
	  {"name": "x.list", "kind": "request", "role": "method", "result": "E[]"},
	  {"name": "x.none", "kind": "request", "role": "method"}],
	  "types": [{"name": "R", "fields": [{"name": "v", "type": "string", "varies": true}, {"name": "in", "type": "I"},
	      {"name": "o", "fields": [{"name": "t", "type": "time", "varies": true}]}]},
	    {"name": "I", "fields": [{"name": "n", "type": "integer"}, {"name": "w", "type": "string", "varies": true}]},
	    {"name": "E", "fields": [{"name": "at", "type": "time", "varies": true}]}],
	  "events": [], "observer": {"methods": [], "notifications": []}, "errors": [],
	  "transformReads": {"info": [], "part": [], "sync": []}, "packages": {"plugin": "p", "platforms": []}}`))
	require.NoError(t, err)
	assert.Equal(t, [][]string{{"result", "v"}, {"result", "in", "w"}, {"result", "o", "t"}}, s.varying(s.Methods[0]))
	assert.Equal(t, [][]string{{"result", "*", "at"}}, s.varying(s.Methods[1]))
	assert.Empty(t, s.varying(s.Methods[2]))
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
	hook := `{"name": "chat.message", "kind": "request", "role": "hook", "opencodeHook": "chat.message", "opencode2": {"hook": "session.prompt"}}`
	tests := []struct {
		name, spec, err string
	}{
		{"valid", base(status+","+hook, ""), ""},
		{"unknown member", base(status, `, "hookz": []`), `unknown field "hookz"`},
		{"method twice", base(status+","+status, ""), `method "status" is listed twice`},
		{"bad kind", base(`{"name": "status", "kind": "call", "role": "method"}`, ""), `kind must be request or notification`},
		{"bad role", base(`{"name": "status", "kind": "request", "role": "hooks"}`, ""), `role must be lifecycle, hook or method`},
		{"hook without an OpenCode 2 counterpart or a reason", base(status+`,{"name": "chat.y", "kind": "request", "role": "hook", "opencodeHook": "chat.y"}`, ""), `hook "chat.y": opencode2 must name`},
		{"hook with both an OpenCode 2 hook and a reason", base(status+`,{"name": "chat.y", "kind": "request", "role": "hook", "opencodeHook": "chat.y", "opencode2": {"hook": "a", "none": "b"}}`, ""), `hook "chat.y": opencode2 must name`},
		{"hook without OpenCode hook", base(status+`,{"name": "chat.message", "kind": "request", "role": "hook"}`, ""), `hook "chat.message": opencodeHook is missing`},
		{"OpenCode hook mapped twice", base(status+","+hook+`,{"name": "chat.x", "kind": "request", "role": "hook", "opencodeHook": "chat.message", "opencode2": {"hook": "session.prompt"}}`, ""), `mapped twice`},
		{"method with a hook's member", base(`{"name": "status", "kind": "request", "role": "method", "transform": true}`, ""), `belong to hooks`},
		{"observer method not in methods", base(hook, ""), `observer method "status" is not a method`},
		{"name with a space", base(status+`,{"name": "chat message", "kind": "request", "role": "hook", "opencodeHook": "x", "opencode2": {"none": "x"}}`, ""), `"chat message": a name is`},
		{"unknown member type", base(`{"name": "status", "kind": "request", "role": "method", "params": {"fields": [{"name": "x", "type": "Nope[]"}]}}`, ""), `status params.x: unknown type "Nope"`},
		{"member without type or fields", base(`{"name": "status", "kind": "request", "role": "method", "params": {"fields": [{"name": "x"}]}}`, ""), `status params.x: either type or fields`},
		{"required and optional", base(`{"name": "status", "kind": "request", "role": "method", "params": {"fields": [{"name": "x", "type": "any", "required": true, "optional": true}]}}`, ""), `exclude each other`},
		{"notification with a result", base(status+`,{"name": "chat.x", "kind": "notification", "role": "hook", "opencodeHook": "x", "opencode2": {"none": "x"}, "result": "string"}`, ""), `"chat.x": a notification has no result`},
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

// The contract's config members are checked like its methods.
func TestConfigMembersChecked(t *testing.T) {
	base := `{"protocolVersion": 1, "methods": [{"name": "status", "kind": "request", "role": "method"}], "types": [],
	  "events": [], "observer": {"methods": [], "notifications": []}, "errors": [], "shimOptions": {"names": ["binary"]},
	  "transformReads": {"info": [], "part": [], "sync": []}, "packages": {"plugin": "p", "platforms": []}, "config": {"members": [%s]}}`
	for _, tt := range []struct{ name, members, want string }{
		{"who sets it", `{"name": "a", "type": "boolean", "default": "true", "setBy": "nobody", "meaning": "m"}`, "setBy must be user or client"},
		{"its meaning", `{"name": "a", "type": "boolean", "default": "true", "setBy": "user"}`, "type, default and meaning are required"},
		{"listed twice", `{"name": "a", "type": "t", "default": "d", "setBy": "user", "meaning": "m"}, {"name": "a", "type": "t", "default": "d", "setBy": "user", "meaning": "m"}`, "listed once"},
		{"a shim option's name", `{"name": "binary", "type": "t", "default": "d", "setBy": "user", "meaning": "m"}`, "a shim option has that name"},
	} {
		_, err := parse([]byte(strings.Replace(base, "%s", tt.members, 1)))
		require.Error(t, err, tt.name)
		assert.Contains(t, err.Error(), tt.want, tt.name)
	}
}
