package jsonkind

import (
	"errors"
	"reflect"
	"strconv"
	"strings"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// Describe turns a JSON v2 decoding error into a sentence that
// names the member (root.a.b[0].c) and what it must be:
// "config.maxParents must be an integer, got a string".
func Describe(err error, root string) string {
	var se *jsonv2.SemanticError
	if !errors.As(err, &se) || (se.JSONPointer == "" && root == "") {
		return err.Error()
	}
	field := memberPath(root, se.JSONPointer)
	want := "of another type"
	if se.GoType != nil {
		want = wantedKind(se.GoType)
	}
	if se.JSONKind == '0' && se.GoType != nil && isInteger(se.GoType) && len(se.JSONValue) > 0 {
		// A number that is not a whole number in range: say which.
		return field + " must be " + want + ", got " + string(se.JSONValue)
	}
	return field + " must be " + want + ", got " + Name(se.JSONKind)
}

// memberPath writes a JSON Pointer as root.member.member[index]: a token
// of digits is taken for an array index.
func memberPath(root string, ptr jsontext.Pointer) string {
	var b strings.Builder
	b.WriteString(root)
	for tok := range ptr.Tokens() {
		if _, err := strconv.ParseUint(tok, 10, 0); err == nil {
			b.WriteString("[" + tok + "]")
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('.')
		}
		b.WriteString(tok)
	}
	return b.String()
}

// wantedKind names the JSON a Go type decodes from.
func wantedKind(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch {
	case t.Kind() == reflect.String:
		return "a string"
	case t.Kind() == reflect.Bool:
		return "a boolean"
	case isInteger(t):
		return "an integer"
	case t.Kind() == reflect.Float32 || t.Kind() == reflect.Float64:
		return "a number"
	case t.Kind() == reflect.Struct || t.Kind() == reflect.Map:
		return "an object"
	case t.Kind() == reflect.Slice || t.Kind() == reflect.Array:
		return "an array"
	}
	return "of another type"
}

func isInteger(t reflect.Type) bool {
	switch t.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return true
	}
	return false
}
