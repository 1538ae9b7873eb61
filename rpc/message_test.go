package rpc

import (
	"encoding/json"
	"strings"
	"testing"

	jsonv2 "github.com/go-json-experiment/json"

	"github.com/stretchr/testify/assert"
)

func TestDecode(t *testing.T) {
	tests := []struct {
		name   string
		msg    string
		kind   messageKind
		method string
		id     string // "" for absent
		params string // "" for absent
		code   int64
	}{
		{name: "request", msg: `{"jsonrpc":"2.0","id":1,"method":"m","params":{"a":1}}`, kind: kindRequest, method: "m", id: "1", params: `{"a":1}`},
		{name: "notification", msg: `{"jsonrpc":"2.0","method":"m"}`, kind: kindRequest, method: "m"},
		{name: "escaped method", msg: `{"jsonrpc":"2.0","method":"a\/b\u00e9"}`, kind: kindRequest, method: "a/bé"},
		{name: "null id", msg: `{"jsonrpc":"2.0","id":null,"method":"m"}`, kind: kindRequest, method: "m", id: "null"},
		{name: "whitespace kept inside params", msg: ` { "params" : [ 1 ,2 ] , "jsonrpc":"2.0","method":"m" } `, kind: kindRequest, method: "m", params: "[ 1 ,2 ]"},
		{name: "response", msg: `{"jsonrpc":"2.0","id":3,"result":null}`, kind: kindResponse, id: "3"},
		{name: "error response", msg: `{"jsonrpc":"2.0","id":3,"error":{"code":1,"message":"x"}}`, kind: kindResponse, id: "3"},
		{name: "method wins over result", msg: `{"jsonrpc":"2.0","id":3,"method":"m","result":1}`, kind: kindRequest, method: "m", id: "3"},
		{name: "duplicate params", msg: `{"jsonrpc":"2.0","id":3,"method":"m","params":1,"params":2}`, kind: kindInvalid, code: CodeInvalidRequest, id: "3"},
		{name: "duplicate other member allowed", msg: `{"jsonrpc":"2.0","id":3,"method":"m","x":1,"x":2}`, kind: kindRequest, method: "m", id: "3"},
		{name: "empty", msg: ``, kind: kindInvalid, code: CodeParseError},
		{name: "whitespace", msg: ` `, kind: kindInvalid, code: CodeParseError},
		{name: "true", msg: `true`, kind: kindInvalid, code: CodeInvalidRequest},
		{name: "bad batch", msg: `[1,`, kind: kindInvalid, code: CodeParseError},
		{name: "object then garbage", msg: `{"jsonrpc":"2.0","method":"m"}x`, kind: kindInvalid, code: CodeParseError},
		{name: "lone high surrogate in params", msg: `{"jsonrpc":"2.0","id":1,"method":"m","params":"cut \ud83d"}`, kind: kindRequest, method: "m", id: "1", params: `"cut \ufffd"`},
		{name: "lone surrogate in the id is echoed as sent", msg: `{"jsonrpc":"2.0","id":"\ud83d","method":"m","params":"\udc00"}`, kind: kindRequest, method: "m", id: `"\ud83d"`, params: `"\ufffd"`},
		{name: "lone surrogate in the id of an invalid request", msg: `{"jsonrpc":"1.0","id":"x\uDBFF","method":"m"}`, kind: kindInvalid, code: CodeInvalidRequest, id: `"x\uDBFF"`},
		{name: "invalid UTF-8: the id is read", msg: "{\"jsonrpc\":\"2.0\",\"id\":\"r7\",\"method\":\"m\",\"params\":\"\xff\"}", kind: kindInvalid, code: CodeParseError, id: `"r7"`},
		{name: "invalid UTF-8 before the id", msg: "{\"params\":\"\xc3\x28\",\"jsonrpc\":\"2.0\",\"method\":\"m\",\"id\":-2}", kind: kindInvalid, code: CodeParseError, id: "-2"},
		{name: "invalid UTF-8 and a surrogate in the id", msg: "{\"id\":\"\\ud800\",\"jsonrpc\":\"2.0\",\"method\":\"m\",\"params\":\"\xff\"}", kind: kindInvalid, code: CodeParseError, id: `"\ud800"`},
		{name: "invalid UTF-8 in the id", msg: "{\"jsonrpc\":\"2.0\",\"id\":\"\xff\",\"method\":\"m\"}", kind: kindInvalid, code: CodeParseError},
		{name: "invalid UTF-8 and a syntax error", msg: "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"m\",\"params\":\"\xff\",}", kind: kindInvalid, code: CodeParseError},
		{name: "a lone surrogate and a syntax error after it", msg: `{"jsonrpc":"2.0","id":1,"method":"m","params":"\ud800",}`, kind: kindInvalid, code: CodeParseError},
		{name: "a lone surrogate after a syntax error", msg: `{"jsonrpc":"2.0","id":1,,"params":"\ud800"}`, kind: kindInvalid, code: CodeParseError},
		{name: "escaped backslashes before ud are text", msg: `{"jsonrpc":"2.0","id":1,"method":"m","params":"C:\\udir\\\\ud800"}`, kind: kindRequest, method: "m", id: "1", params: `"C:\\udir\\\\ud800"`},
		{name: "10000 deep is fine", msg: `{"jsonrpc":"2.0","method":"m","params":` + deep(9999, "[", "]") + `}`, kind: kindRequest, method: "m", params: deep(9999, "[", "]")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var d decoder
			m := d.decode([]byte(tt.msg))
			assert.Equal(t, tt.kind, m.kind)
			if tt.kind == kindInvalid {
				if assert.NotNil(t, m.reply) {
					assert.Equal(t, tt.code, m.reply.code, m.reply.message)
					assert.Equal(t, tt.id, string(m.reply.id), "the reply's id")
				}
				return
			}
			assert.Equal(t, tt.method, m.method)
			assert.Equal(t, tt.id, string(m.id))
			assert.Equal(t, tt.id == "", m.id == nil)
			assert.Equal(t, tt.params, string(m.params))
			assert.Equal(t, tt.params == "", m.params == nil)
		})
	}
}

func TestScanPrefixID(t *testing.T) {
	pad := strings.Repeat("x", 100)
	tests := []struct {
		name, prefix, want string // want "" for no id
	}{
		{"number", `{"id":5,"method":"m","params":"` + pad, "5"},
		{"string", `{"id":"a\"b","params":"` + pad, `"a\"b"`},
		{"null", `{"id":null,"params":"` + pad, "null"},
		{"after other members", `{"jsonrpc":"2.0","method":"m","meta":{"id":1,"x":[1,{"y":2}]},"id":"r1","params":"` + pad, `"r1"`},
		{"whitespace", " {\n \"id\" : -7e2 , \"params\":\"" + pad, "-7e2"},
		{"escaped name", `{"\u0069d":9,"params":"` + pad, "9"},
		{"number as the last member", `{"params":1,"id":12}`, "12"},
		{"number followed by a space", `{"id":12 `, "12"},
		{"number followed by a comma", `{"id":12,`, "12"},
		{"number cut by the prefix end", `{"id":12`, ""},
		{"string cut by the prefix end", `{"id":"abc`, ""},
		{"null cut", `{"id":nu`, ""},
		{"name cut", `{"i`, ""},
		{"only nested", `{"params":{"id":3,"t":"` + pad, ""},
		{"inside a cut member before it", `{"params":"` + pad + `","id":4`, ""},
		{"after a cut value", `{"params":"` + pad, ""},
		{"object id", `{"id":{"a":1},"x":1}`, ""},
		{"bool id", `{"id":true,`, ""},
		{"array", `[{"id":1}]`, ""},
		{"not JSON", `id:1`, ""},
		{"empty", ``, ""},
		{"invalid UTF-8 after the id", "{\"id\":1,\"p\":\"\xff", "1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := scanPrefixID([]byte(tt.prefix))
			assert.Equal(t, tt.want, string(got))
			assert.Equal(t, tt.want == "", got == nil)
		})
	}
	t.Run("number straddling 4 KiB", func(t *testing.T) {
		msg := `{"params":"` + strings.Repeat("p", idPrefixBytes-len(`{"params":"","id":12`)) + `","id":123456}`
		assert.Nil(t, scanPrefixID([]byte(msg[:idPrefixBytes])))
		assert.Equal(t, "123456", string(scanPrefixID([]byte(msg))))
	})
}

func TestParseErrorMessage(t *testing.T) {
	var d decoder
	assert.Equal(t, msgInvalidUTF8, d.decode([]byte("\"\xff\"")).reply.message)
	assert.Equal(t, "parse error: "+msgNestingTooDeep, d.decode([]byte(deep(10001, "[", "]"))).reply.message)
	assert.Equal(t, "parse error: unexpected end of JSON input", d.decode([]byte(`{"a":`)).reply.message)
}

// TestIDPastDepth: a message too deep to decode is answered with its id
// when the id can be read, before or after the deep member.
func TestIDPastDepth(t *testing.T) {
	deepParams := deep(10001, `{"id":7,"a":`, "}")
	tests := []struct {
		name, msg, want string // want "" means null
	}{
		{"id first", `{"jsonrpc":"2.0","id":1,"method":"m","params":` + deepParams + `}`, "1"},
		{"id last", `{"jsonrpc":"2.0","method":"m","params":` + deepParams + `,"id":"x\"y"}`, `"x\"y"`},
		{"id null", `{"id":null,"params":` + deepParams + `}`, ""},
		{"id after a string holding braces", `{"note":"}{[\"id\":5","params":` + deepParams + `,"id":-2.5e3}`, "-2.5e3"},
		{"only nested ids", `{"jsonrpc":"2.0","params":` + deepParams + `}`, ""},
		{"id an object", `{"id":{"n":1},"params":` + deepParams + `}`, ""},
		{"id cut off", `{"params":` + deepParams + `,"id":`, ""},
		{"deep array", deep(10001, "[", "]"), ""},
		{"surrogate in the id kept as sent", `{"params":` + deepParams + `,"id":"\ud83d"}`, `"\ud83d"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var d decoder
			m := d.decode([]byte(tt.msg))
			if !assert.Equal(t, kindInvalid, m.kind) {
				return
			}
			assert.Equal(t, "parse error: "+msgNestingTooDeep, m.reply.message)
			assert.Equal(t, CodeParseError, m.reply.code)
			if tt.want == "" {
				assert.True(t, m.reply.id == nil || string(m.reply.id) == "null", "id %q", m.reply.id)
			} else {
				assert.Equal(t, tt.want, string(m.reply.id))
			}
		})
	}
}

func TestReplaceLoneSurrogates(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"none", `"abc \n \u00e9"`, `"abc \n \u00e9"`},
		{"valid pair kept", `"\ud83d\ude00"`, `"\ud83d\ude00"`},
		{"upper-case pair kept", `"\uD83D\uDE00"`, `"\uD83D\uDE00"`},
		{"lone high at the end", `"cut \ud83d"`, `"cut \ufffd"`},
		{"lone high before text", `"\ud83dx"`, `"\ufffdx"`},
		{"lone low", `"a\udc00b"`, `"a\ufffdb"`},
		{"upper case", `"\uDBFF"`, `"\ufffd"`},
		{"high then a pair", `"\ud83d\ud83d\ude00"`, `"\ufffd\ud83d\ude00"`},
		{"two highs", `"\ud800\ud800"`, `"\ufffd\ufffd"`},
		{"low then high reversed", `"\ude00\ud83d"`, `"\ufffd\ufffd"`},
		{"escaped backslash is not an escape", `"\\ud83d"`, `"\\ud83d"`},
		{"escaped backslash then a lone one", `"\\\ud83d"`, `"\\\ufffd"`},
		{"bad hex left to the scan", `"\ud8zz"`, `"\ud8zz"`},
		{"cut at the end of the input", `"\ud83`, `"\ud83`},
		{"in a member name", `{"\ud83d":1}`, `{"\ufffd":1}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := []byte(tt.in)
			fixes := replaceLoneSurrogates(b)
			assert.Equal(t, tt.want, string(b))
			assert.Equal(t, tt.in != tt.want, len(fixes) > 0)
			if json.Valid(b) {
				var v any
				assert.NoError(t, jsonv2.Unmarshal(b, &v), "the handlers' decoder takes the result")
			}
		})
	}
}
