package handlers

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// shapeMember is a member as contract.json describes it.
type shapeMember struct {
	Name      string        `json:"name"`
	Type      string        `json:"type"`
	OmitEmpty bool          `json:"omitEmpty"`
	Fields    []shapeMember `json:"fields"`
}

// goMembers is the JSON members encoding/json writes for t (a struct,
// through pointers): name -> (field type, omitempty). Embedded structs
// without a name are inlined.
func goMembers(t reflect.Type) map[string]reflect.StructField {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	out := map[string]reflect.StructField{}
	for i := range t.NumField() {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		name, _, _ := strings.Cut(tag, ",")
		if f.Anonymous && name == "" {
			for n, sub := range goMembers(f.Type) {
				out[n] = sub
			}
			continue
		}
		if !f.IsExported() || name == "-" {
			continue
		}
		if name == "" {
			name = f.Name
		}
		out[name] = f
	}
	return out
}

var marshaler = reflect.TypeFor[json.Marshaler]()

// The types Go defines by hand have the members the contract gives them,
// by name and omitempty (the shim's reply types and PROTOCOL.md's tables
// come from the contract): a member added to one and not the other fails
// here. A type with its own MarshalJSON is held by its behaviour's tests.
func TestContractShapesAreTheGoTypes(t *testing.T) {
	require.NotEmpty(t, contractShapes)
	var check func(at string, typ reflect.Type, members []shapeMember)
	check = func(at string, typ reflect.Type, members []shapeMember) {
		if typ.Implements(marshaler) {
			return
		}
		got := goMembers(typ)
		want := map[string]bool{}
		for _, m := range members {
			want[m.Name] = true
			f, ok := got[m.Name]
			if !assert.True(t, ok, "%s.%s: in the contract, not in %s", at, m.Name, typ) {
				continue
			}
			assert.Equal(t, m.OmitEmpty, strings.Contains(f.Tag.Get("json"), ",omitempty"), "%s.%s: omitEmpty", at, m.Name)
			if m.Fields != nil {
				check(at+"."+m.Name, f.Type, m.Fields)
			}
		}
		for name := range got {
			assert.True(t, want[name], "%s.%s: in %s, not in the contract", at, name, typ)
		}
	}
	for _, s := range contractShapes {
		var members []shapeMember
		require.NoError(t, json.Unmarshal([]byte(s.members), &members), s.name)
		check(s.name, s.typ, members)
	}
}
