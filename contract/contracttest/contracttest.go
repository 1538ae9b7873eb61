// Package contracttest checks code against the contract's transform
// reads (contract.InfoReads, contract.PartReads): a Go type that decodes
// chat.messages.transform's messages, a hash over what the handler reads,
// a predicate naming the members whose strings are read. Tests only.
package contracttest

import (
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/hookwire/hookwire/contract"
)

// MessageFields returns the paths a message type decodes, by its json
// tags: "info.<path>" for the members of its info, "parts.<path>" for
// its parts' (a dot descends into a nested struct), with the JSON type
// each holds ("string" for string, *string and any; "boolean" for bool).
func MessageFields(t testing.TB, message any) map[string]string {
	t.Helper()
	out := map[string]string{}
	var walk func(prefix string, typ reflect.Type)
	walk = func(prefix string, typ reflect.Type) {
		for typ.Kind() == reflect.Pointer || typ.Kind() == reflect.Slice {
			typ = typ.Elem()
		}
		for i := range typ.NumField() {
			f := typ.Field(i)
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if name == "" || name == "-" {
				t.Fatalf("%s.%s has no json name", typ, f.Name)
			}
			path := prefix + name
			ft := f.Type
			if ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			switch ft.Kind() {
			case reflect.Struct, reflect.Slice:
				walk(path+".", ft)
			case reflect.String, reflect.Interface:
				out[path] = "string"
			case reflect.Bool:
				out[path] = "boolean"
			default:
				out[path] = ft.Kind().String()
			}
		}
	}
	walk("", reflect.TypeOf(message))
	return out
}

// ContractFields is what MessageFields returns for a type that decodes
// exactly the contract's reads.
func ContractFields() map[string]string {
	out := map[string]string{}
	for _, f := range contract.InfoReads {
		out["info."+f.Path] = f.Type
	}
	for _, f := range contract.PartReads {
		out["parts."+f.Path] = f.Type
	}
	return out
}

// AssertMessageType checks that message decodes exactly the contract's
// reads, each as its type.
func AssertMessageType(t testing.TB, message any) bool {
	t.Helper()
	return assert.Equal(t, ContractFields(), MessageFields(t, message),
		"%T decodes the fields of contract.InfoReads and contract.PartReads", message)
}

// AssertReadsNames checks a predicate that says whether a member's string
// may be read (by its name alone, as pruning and redaction ask): true for
// the last name of every string field of the contract's reads and of
// contract.SyncReads, false for each of others.
func AssertReadsNames(t testing.TB, reads func(name string) bool, others []string) bool {
	t.Helper()
	want := map[string]bool{}
	for _, group := range [][]contract.Field{contract.InfoReads, contract.PartReads, contract.SyncReads} {
		for _, f := range group {
			if f.Type == "string" {
				want[f.Path[strings.LastIndex(f.Path, ".")+1:]] = true
			}
		}
	}
	ok := true
	for _, name := range slices.Sorted(maps.Keys(want)) {
		ok = assert.True(t, reads(name), "%q is a read string of the contract", name) && ok
	}
	for _, name := range others {
		if !want[name] {
			ok = assert.False(t, reads(name), "%q is no read string of the contract", name) && ok
		}
	}
	return ok
}

// Message is a chat.messages.transform message with every field of the
// contract's reads set (strings to "<path>", booleans to true), and also
// members the sidecar does not read, as OpenCode sends them.
func Message() map[string]any {
	m := map[string]any{
		"info": map[string]any{"time": map[string]any{"created": 1}, "model": map[string]any{"providerID": "p"}},
		"parts": []any{map[string]any{
			"id": "prt_1", "time": map[string]any{"start": 1},
			"state": map[string]any{"output": "a tool's output", "input": map[string]any{"x": "y"}},
		}},
	}
	for _, f := range contract.InfoReads {
		set(m["info"].(map[string]any), f.Path, value(f, "info."+f.Path))
	}
	for _, f := range contract.PartReads {
		set(m["parts"].([]any)[0].(map[string]any), f.Path, value(f, "parts."+f.Path))
	}
	return m
}

func value(f contract.Field, path string) any {
	if f.Type == "boolean" {
		return true
	}
	return path
}

func set(obj map[string]any, path string, v any) {
	head, rest, nested := strings.Cut(path, ".")
	if !nested {
		obj[head] = v
		return
	}
	sub, _ := obj[head].(map[string]any)
	if sub == nil {
		sub = map[string]any{}
		obj[head] = sub
	}
	set(sub, rest, v)
}

// Change is Message with one member changed.
type Change struct {
	Path    string // "info.id", "parts.state.output"
	Read    bool   // whether the contract reads it
	Message map[string]any
}

// Changes returns Message changed in one member each: every read field
// (a string gets another value, a boolean false) and some members no one
// reads.
func Changes() []Change {
	var out []Change
	for _, f := range contract.InfoReads {
		m := Message()
		set(m["info"].(map[string]any), f.Path, changed(f))
		out = append(out, Change{"info." + f.Path, true, m})
	}
	for _, f := range contract.PartReads {
		m := Message()
		set(m["parts"].([]any)[0].(map[string]any), f.Path, changed(f))
		out = append(out, Change{"parts." + f.Path, true, m})
	}
	unread := []string{"info.time.created", "info.model.providerID", "parts.id", "parts.state.output", "parts.state.input.x"}
	for _, path := range unread {
		m := Message()
		if head, rest, _ := strings.Cut(path, "."); head == "info" {
			set(m["info"].(map[string]any), rest, "changed")
		} else {
			set(m["parts"].([]any)[0].(map[string]any), rest, "changed")
		}
		out = append(out, Change{path, false, m})
	}
	return out
}

func changed(f contract.Field) any {
	if f.Type == "boolean" {
		return false
	}
	return fmt.Sprintf("other %s", f.Path)
}
