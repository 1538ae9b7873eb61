package handlers

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/hookwire/hookwire/internal/jsonkind"
	"github.com/hookwire/hookwire/rpc"
)

// decodeParams decodes a request's params object into v in one pass with
// the JSON v2 API. Member names match exactly, as OpenCode spells them:
// encoding/json would also take "Args" for "args", and a patch on /args
// would then miss the object the client holds. Errors are -32602 and
// name the field, so a client can tell what it sent wrong.
func decodeParams(raw json.RawMessage, v any, opts ...jsonv2.Options) error {
	trimmed := bytes.TrimSpace(raw)
	if len(trimmed) == 0 || trimmed[0] != '{' {
		return invalidParams("params must be an object")
	}
	if err := jsonv2.Unmarshal(trimmed, v, opts...); err != nil {
		return invalidParams("%s", jsonkind.Describe(err, ""))
	}
	return nil
}

// missing is the error for a required field that is absent or null.
func missing(field string) error {
	return invalidParams("missing field %q", field)
}

// rawString returns the JSON string in raw, or "" when raw is anything else.
func rawString(raw jsontext.Value) string {
	s, _ := stringValue(raw)
	return s
}

// rawNumber returns the JSON number in raw (a numeric string counts too:
// retry-after headers and status codes arrive both ways), and whether
// raw is one.
func rawNumber(raw jsontext.Value) (float64, bool) {
	text := string(raw)
	if raw.Kind() == '"' {
		text = rawString(raw)
	} else if raw.Kind() != '0' {
		return 0, false
	}
	n, err := strconv.ParseFloat(strings.TrimSpace(text), 64)
	if err != nil || n != n {
		return 0, false
	}
	return n, true
}

// stringValue returns the JSON string in raw, and whether raw is one.
func stringValue(raw jsontext.Value) (string, bool) {
	if raw.Kind() != '"' {
		return "", false
	}
	s, err := jsontext.AppendUnquote(nil, raw)
	if err != nil {
		return "", false
	}
	return string(s), true
}

// stringArg returns args[name] when it is a JSON string.
func stringArg(args map[string]jsontext.Value, name string) (string, bool) {
	return stringValue(args[name])
}

// noChange is the hook result that leaves OpenCode's output as it is.
func noChange() PatchResult { return PatchResult{Patch: []Op{}} }

func patch(ops ...Op) PatchResult {
	if len(ops) == 0 {
		return noChange()
	}
	return PatchResult{Patch: ops}
}

func invalidParams(format string, args ...any) error {
	return rpc.Errorf(rpc.CodeInvalidParams, "invalid params: "+format, args...)
}

// pruneMinLen is the shortest string value pruneStrings blanks: shorter
// ones cost the decoder less than cutting them out costs.
const pruneMinLen = 64

// pruneStrings returns raw, which must be valid JSON (rpc.Request.Validated),
// with every long string that is the value of a member whose name keep
// rejects replaced by "". A handler decodes the result instead of raw
// when the fields it reads all have names keep accepts and it only
// checks other strings' kind: the decoded values are then the same, and
// the decoder does not scan the bulk of a large request (tool outputs,
// file contents), which it would only skip. Names with escapes are kept.
//
// It finds string ends with bytes.IndexByte rather than checking every
// byte: that is only sound because raw is valid. It returns raw itself
// when there is nothing to blank.
func pruneStrings(raw []byte, keep func(name string) bool) []byte {
	var (
		out  []byte // nil until something is blanked
		last int    // raw[last:] is not yet in out
		name []byte // the member name seen last
	)
	for i := 0; ; {
		q := bytes.IndexByte(raw[i:], '"')
		if q < 0 {
			break
		}
		start := i + q
		end := stringEnd(raw, start)
		next := skipBlanks(raw, end)
		if next < len(raw) && raw[next] == ':' {
			name = raw[start+1 : end-1]
			i = next + 1
			continue
		}
		i = end
		if end-start-2 < pruneMinLen || !memberValue(raw, start) ||
			bytes.IndexByte(name, '\\') >= 0 || keep(string(name)) {
			continue
		}
		if out == nil {
			// Room for what is usually kept (a tenth in OpenCode
			// histories), so that append does not copy it over and over
			// as it grows by a quarter at a time.
			out = make([]byte, 0, len(raw)/8)
		}
		out = append(append(out, raw[last:start]...), `""`...)
		last = end
	}
	if out == nil {
		return raw
	}
	return append(out, raw[last:]...)
}

// stringEnd returns the index after the closing quote of the valid JSON
// string whose opening quote is at raw[start]: the first quote after an
// even run of backslashes.
func stringEnd(raw []byte, start int) int {
	j := start + 1
	for {
		j += bytes.IndexByte(raw[j:], '"')
		n := 0
		for raw[j-1-n] == '\\' {
			n++
		}
		if n%2 == 0 {
			return j + 1
		}
		j++
	}
}

func skipBlanks(raw []byte, i int) int {
	for i < len(raw) && (raw[i] == ' ' || raw[i] == '\t' || raw[i] == '\r' || raw[i] == '\n') {
		i++
	}
	return i
}

// memberValue reports whether the value starting at raw[i] follows a ':'
// (rather than '[' or ',' in an array).
func memberValue(raw []byte, i int) bool {
	for i--; i >= 0; i-- {
		switch raw[i] {
		case ' ', '\t', '\r', '\n':
			continue
		case ':':
			return true
		}
		return false
	}
	return false
}
