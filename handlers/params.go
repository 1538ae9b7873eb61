package handlers

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/hookwire/hookwire/rpc"
)

// decodeParams decodes a request's params object into v. Each name in
// required must be present and not null. Errors are -32602 and name the
// field, so a client can tell what it sent wrong.
func decodeParams(raw json.RawMessage, v any, required ...string) error {
	trimmed := bytes.TrimSpace(raw)
	if len(trimmed) == 0 || trimmed[0] != '{' {
		return rpc.Errorf(rpc.CodeInvalidParams, "invalid params: params must be an object")
	}
	if len(required) > 0 {
		var top map[string]json.RawMessage
		if err := json.Unmarshal(trimmed, &top); err != nil {
			return rpc.Errorf(rpc.CodeInvalidParams, "invalid params: %s", describeJSONError(err, "params"))
		}
		for _, name := range required {
			if f, ok := top[name]; !ok || string(f) == "null" {
				return rpc.Errorf(rpc.CodeInvalidParams, "invalid params: missing field %q", name)
			}
		}
	}
	if err := json.Unmarshal(trimmed, v); err != nil {
		return rpc.Errorf(rpc.CodeInvalidParams, "invalid params: %s", describeJSONError(err, ""))
	}
	return nil
}

// describeJSONError turns an encoding/json error into a sentence that names
// the offending field.
func describeJSONError(err error, root string) string {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		field := te.Field
		if root != "" {
			field = strings.TrimSuffix(root+"."+field, ".")
		}
		if field == "" {
			field = "value"
		}
		return fmt.Sprintf("%s must be %s, got %s", field, jsonKind(te.Type.Kind().String()), te.Value)
	}
	return err.Error()
}

func jsonKind(goKind string) string {
	switch goKind {
	case "string":
		return "a string"
	case "bool":
		return "a boolean"
	case "struct", "map":
		return "an object"
	case "slice", "array":
		return "an array"
	case "int", "int64", "int32", "uint64", "float64":
		return "a number"
	case "ptr":
		return "an object"
	}
	return "of another type"
}

// stringArg returns args[name] when it is a JSON string.
func stringArg(args map[string]json.RawMessage, name string) (string, bool) {
	raw, ok := args[name]
	if !ok {
		return "", false
	}
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return "", false
	}
	return s, true
}

// noChange is the hook result that leaves OpenCode's output as it is.
func noChange() rpc.PatchResult { return rpc.PatchResult{Patch: []rpc.Op{}} }

func patch(ops ...rpc.Op) rpc.PatchResult {
	if len(ops) == 0 {
		return noChange()
	}
	return rpc.PatchResult{Patch: ops}
}

func invalidParams(format string, args ...any) error {
	return rpc.Errorf(rpc.CodeInvalidParams, "invalid params: "+format, args...)
}
