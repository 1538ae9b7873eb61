package handlers

import (
	"encoding/json"
	"fmt"
	"sync"
)

// Op is one JSON Patch (RFC 6902) operation of a hook's result: add,
// replace or remove. Value is always written for add and replace (even
// when nil) and never for remove.
type Op struct {
	Op    string
	Path  string
	Value any
}

// MarshalJSON writes {"op","path","value"}. Other operations are an error:
// PROTOCOL.md 3 allows only add, replace and remove.
func (o Op) MarshalJSON() ([]byte, error) {
	switch o.Op {
	case "add", "replace":
		return json.Marshal(struct {
			Op    string `json:"op"`
			Path  string `json:"path"`
			Value any    `json:"value"`
		}{o.Op, o.Path, o.Value})
	case "remove":
		return json.Marshal(struct {
			Op   string `json:"op"`
			Path string `json:"path"`
		}{o.Op, o.Path})
	}
	return nil, fmt.Errorf("unsupported patch op %q (want add, replace or remove)", o.Op)
}

// appendJSON appends what MarshalJSON returns. The value of an add or
// replace is encoded on its own, so that only a value that is itself a
// Marshaler is compacted again.
func (o Op) appendJSON(b []byte) ([]byte, error) {
	if o.Op != "add" && o.Op != "replace" {
		enc, err := o.MarshalJSON()
		if err != nil {
			return nil, err
		}
		return append(b, enc...), nil
	}
	var value []byte
	if part, ok := o.Value.(syntheticPart); ok {
		value = encodedParts.get(part)
	} else {
		var err error
		if value, err = json.Marshal(o.Value); err != nil {
			return nil, err
		}
	}
	b = append(b, `{"op":`...)
	b = appendJSONString(b, o.Op)
	b = append(b, `,"path":`...)
	b = appendJSONString(b, o.Path)
	b = append(b, `,"value":`...)
	b = append(b, value...)
	return append(b, '}'), nil
}

// appendJSONString appends s as json.Marshal writes a string.
func appendJSONString(b []byte, s string) []byte {
	enc, _ := json.Marshal(s) // a string always encodes
	return append(b, enc...)
}

// UnmarshalJSON reads {"op","path","value"}; it lets clients and tests
// decode a PatchResult back.
func (o *Op) UnmarshalJSON(b []byte) error {
	var v struct {
		Op    string `json:"op"`
		Path  string `json:"path"`
		Value any    `json:"value"`
	}
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	*o = Op{Op: v.Op, Path: v.Path, Value: v.Value}
	return nil
}

// PatchResult is every hook's result: {"patch":[...]}; an empty patch
// marshals as [] (never null).
type PatchResult struct {
	Patch []Op `json:"patch"`
}

// MarshalJSON writes {"patch":[...]}, with [] for a nil patch.
func (r PatchResult) MarshalJSON() ([]byte, error) {
	patch := r.Patch
	if patch == nil {
		patch = []Op{}
	}
	return json.Marshal(struct {
		Patch []Op `json:"patch"`
	}{patch})
}

// The parts the sidecar adds repeat from request to request: in
// cache-stable mode each managed user message of a history gets its frozen
// block and the reminder again (PROTOCOL.md 4.4), so a long history's
// reply is mostly the same few texts. Their encoding is kept, within a
// bound on count and bytes (all is dropped when it is reached).
const (
	maxEncodedParts     = 1024
	maxEncodedPartBytes = 4 << 20
)

var encodedParts partEncodings

type partEncodings struct {
	mu     sync.Mutex
	bytes  int
	byPart map[syntheticPart][]byte
}

// get returns part as json.Marshal writes it. The bytes are shared: the
// caller copies them and never changes them.
func (e *partEncodings) get(part syntheticPart) []byte {
	e.mu.Lock()
	defer e.mu.Unlock()
	if b, ok := e.byPart[part]; ok {
		return b
	}
	b, _ := json.Marshal(part) // two strings and a bool always encode
	if len(b)+len(part.Text) > maxEncodedPartBytes {
		return b
	}
	if e.byPart == nil || len(e.byPart) >= maxEncodedParts || e.bytes+len(b)+len(part.Text) > maxEncodedPartBytes {
		e.byPart = map[syntheticPart][]byte{}
		e.bytes = 0
	}
	e.byPart[part] = b
	e.bytes += len(b) + len(part.Text)
	return b
}
