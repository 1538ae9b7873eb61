package handlers

import (
	"bytes"
	"errors"
	"io"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/hookwire/hookwire/contract"
	"github.com/hookwire/hookwire/incremental"
)

// RedactMask is the byte a redacted string is filled with.
const RedactMask = '*'

// paramReads names, for each method whose params hold what the sidecar
// never reads, which members it may read: the definition the transform's
// pruning uses (incremental.Reads), so that redaction and pruning cannot
// disagree. The other methods' params are read whole (tool.execute.after
// parses every tool output for a task id), so nothing of them is redacted.
var paramReads = map[string]func(name string) bool{
	contract.MethodChatMessagesTransform: incremental.Reads,
}

// RedactParams returns a copy of a request's params in which every string
// the sidecar never reads is replaced by RedactMask bytes, as many as the
// string's encoded form held: the params keep their length, and the
// sidecar answers the copy exactly as it answers the original (errors
// included, as they name members and kinds, never other strings). A
// string is read when the member it is the value of (or, in an array, the
// member holding the array) is one the handler reads; names themselves are
// kept. Methods with nothing to redact get params back as they are.
//
// params must be one JSON value; escaped lone surrogates and repeated
// names are taken as the transport takes them. The error says why params
// could not be read; nothing is redacted then.
func RedactParams(method string, params []byte) ([]byte, error) {
	reads := paramReads[method]
	if reads == nil || len(params) == 0 {
		return params, nil
	}
	return redactStrings(params, reads)
}

func redactStrings(raw []byte, reads func(name string) bool) ([]byte, error) {
	dec := jsontext.NewDecoder(bytes.NewReader(raw),
		jsontext.AllowInvalidUTF8(true), jsontext.AllowDuplicateNames(true))
	out := bytes.Clone(raw)
	// governing[d] is the member name that values at depth d belong to:
	// in an object, the name just read; in an array, the name the array
	// itself belongs to; "" at the top.
	governing := []string{""}
	for {
		depth := dec.StackDepth()
		kind, n := dec.StackIndex(depth)
		if depth == 0 && n > 0 {
			// One value read: params must end here.
			if _, err := dec.ReadToken(); !errors.Is(err, io.EOF) {
				return nil, errors.New("params hold more than one JSON value")
			}
			return out, nil
		}
		switch next := dec.PeekKind(); {
		case kind == '{' && n%2 == 0 && next == '"':
			name, err := dec.ReadToken()
			if err != nil {
				return nil, err
			}
			governing[depth] = name.String()
		case next == '"':
			val, err := dec.ReadValue()
			if err != nil {
				return nil, err
			}
			if !reads(governing[depth]) {
				end := int(dec.InputOffset())
				start := end - len(val)
				for i := start + 1; i < end-1; i++ {
					out[i] = RedactMask
				}
			}
		default:
			tok, err := dec.ReadToken()
			if err != nil {
				return nil, err
			}
			switch tok.Kind() {
			case '{':
				governing = append(governing[:depth+1], "")
			case '[':
				governing = append(governing[:depth+1], governing[depth])
			}
		}
	}
}
