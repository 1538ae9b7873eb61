package rpc

import (
	"strings"
	"testing"

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
		{name: "duplicate params", msg: `{"jsonrpc":"2.0","id":3,"method":"m","params":1,"params":2}`, kind: kindInvalid, code: CodeInvalidRequest},
		{name: "duplicate other member allowed", msg: `{"jsonrpc":"2.0","id":3,"method":"m","x":1,"x":2}`, kind: kindRequest, method: "m", id: "3"},
		{name: "empty", msg: ``, kind: kindInvalid, code: CodeParseError},
		{name: "whitespace", msg: ` `, kind: kindInvalid, code: CodeParseError},
		{name: "true", msg: `true`, kind: kindInvalid, code: CodeInvalidRequest},
		{name: "bad batch", msg: `[1,`, kind: kindInvalid, code: CodeParseError},
		{name: "object then garbage", msg: `{"jsonrpc":"2.0","method":"m"}x`, kind: kindInvalid, code: CodeParseError},
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
