// Package jsonkind names JSON kinds and decoding errors for error messages
// and warnings, the same way wherever a decoder says what it got
// ("config.maxParents must be an integer, got a string"): the params'
// -32602 messages (handlers), config's warnings (config) and a
// transcript's errors (transcript).
package jsonkind

import "github.com/go-json-experiment/json/jsontext"

// Name names a JSON value of kind k: "a string", "an object", "null".
func Name(k jsontext.Kind) string {
	switch k {
	case '"':
		return "a string"
	case '0':
		return "a number"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	case '{':
		return "an object"
	case '[':
		return "an array"
	}
	return "a value of kind " + k.String()
}
