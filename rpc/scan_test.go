package rpc

import (
	"bytes"
	"strings"
	"testing"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// validJSON is jsontext's verdict, as the decoder's scan reads a message.
func validJSON(data []byte) bool {
	return jsontext.Value(data).IsValid(decoderOptions...)
}

func TestScanObject(t *testing.T) {
	tests := []struct {
		name    string
		msg     string
		ok      bool
		members []string // name=value of the top-level members, when ok
	}{
		{name: "request", msg: `{"jsonrpc":"2.0","id":1,"method":"m","params":{"a":[1,true,null]}}`, ok: true,
			members: []string{`jsonrpc="2.0"`, `id=1`, `method="m"`, `params={"a":[1,true,null]}`}},
		{name: "blanks", msg: " \t{ \"a\" :\r\n [ ] , \"b\":{ } }\n ", ok: true, members: []string{`a=[ ]`, `b={ }`}},
		{name: "empty object", msg: `{}`, ok: true, members: []string{}},
		{name: "numbers", msg: `{"a":[0,-0,1.5,-12e3,1E+2,3e-0,0.0]}`, ok: true, members: []string{`a=[0,-0,1.5,-12e3,1E+2,3e-0,0.0]`}},
		{name: "escapes", msg: `{"a":"\" \\ \/ \b \f \n \r \t \u00e9 \uD83D\uDE00 \ud7ff \ue000"}`, ok: true,
			members: []string{`a="\" \\ \/ \b \f \n \r \t \u00e9 \uD83D\uDE00 \ud7ff \ue000"`}},
		{name: "UTF-8", msg: "{\"a\":\"caf\u00e9 \u2192 \U0001F600 \uFFFD\"}", ok: true, members: []string{"a=\"caf\u00e9 \u2192 \U0001F600 \uFFFD\""}},
		{name: "long strings", msg: `{"a":"` + strings.Repeat(`abcdefg\"\\`, 100) + `","b":"` + strings.Repeat("x", 1001) + `"}`, ok: true,
			members: []string{`a="` + strings.Repeat(`abcdefg\"\\`, 100) + `"`, `b="` + strings.Repeat("x", 1001) + `"`}},
		{name: "duplicate names", msg: `{"a":1,"a":2}`, ok: true, members: []string{`a=1`, `a=2`}},
		{name: "escape in a nested name", msg: `{"a":{"\u0062":1}}`, ok: true, members: []string{`a={"\u0062":1}`}},

		// Valid, but left to the decoder's scan.
		{name: "escape in a top-level name", msg: `{"\u0069d":1}`},
		{name: "not an object", msg: `[1]`},
		{name: "a string", msg: `"x"`},
		{name: "too deep", msg: `{"a":` + deep(fastMaxDepth, "[", "]") + `}`},
		{name: "many members", msg: `{` + strings.Repeat(`"a":1,`, fastMaxMembers) + `"b":2}`},

		// Invalid.
		{name: "empty", msg: ``},
		{name: "unterminated", msg: `{"a":"x`},
		{name: "unclosed", msg: `{"a":1`},
		{name: "trailing comma", msg: `{"a":1,}`},
		{name: "trailing comma in array", msg: `{"a":[1,]}`},
		{name: "mismatched", msg: `{"a":[1}}`},
		{name: "extra close", msg: `{"a":1}}`},
		{name: "garbage after", msg: `{"a":1}x`},
		{name: "two values", msg: `{} {}`},
		{name: "missing colon", msg: `{"a" 1}`},
		{name: "bare name", msg: `{a:1}`},
		{name: "leading zero", msg: `{"a":01}`},
		{name: "bare minus", msg: `{"a":-}`},
		{name: "no fraction digits", msg: `{"a":1.}`},
		{name: "no exponent digits", msg: `{"a":1e+}`},
		{name: "plus sign", msg: `{"a":+1}`},
		{name: "bad literal", msg: `{"a":tru}`},
		{name: "literal run on", msg: `{"a":truex}`},
		{name: "control character", msg: "{\"a\":\"x\ty\"}"},
		{name: "raw newline in a string", msg: "{\"a\":\"x\ny\"}"},
		{name: "bad escape", msg: `{"a":"\x"}`},
		{name: "short unicode escape", msg: `{"a":"\u12"}`},
		{name: "bad hex", msg: `{"a":"\u12g4"}`},
		{name: "lone high surrogate", msg: `{"a":"\ud800"}`},
		{name: "lone high surrogate then text", msg: `{"a":"\ud800abcdef"}`},
		{name: "lone low surrogate", msg: `{"a":"\udc00"}`},
		{name: "high then high", msg: `{"a":"\ud800\ud800"}`},
		{name: "high then a non-surrogate", msg: `{"a":"\ud800\u0041"}`},
		{name: "invalid UTF-8", msg: "{\"a\":\"\xff\"}"},
		{name: "truncated UTF-8", msg: "{\"a\":\"\xe2\x82\"}"},
		{name: "UTF-8 surrogate", msg: "{\"a\":\"\xed\xa0\x80\"}"},
		{name: "overlong UTF-8", msg: "{\"a\":\"\xc0\xaf\"}"},
		{name: "BOM", msg: "\xef\xbb\xbf{}"},
		{name: "invalid UTF-8 in a name", msg: "{\"\xff\":1}"},
		{name: "NUL outside strings", msg: "{\"a\":1\x00}"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			members, ok := scanObject([]byte(tt.msg), nil)
			require.Equal(t, tt.ok, ok)
			if ok {
				assert.True(t, validJSON([]byte(tt.msg)), "jsontext accepts what the fast scan does")
				got := []string{}
				for _, m := range members {
					got = append(got, string(m.name)+"="+string(m.value))
					assert.Equal(t, string(m.value), tt.msg[m.off:m.off+len(m.value)], "off")
				}
				assert.Equal(t, tt.members, got)
			}
		})
	}
}

// TestDecodeFastIsSlow: every message of TestDecode's kinds read by the
// fast scan reads as jsontext's scan reads it.
func TestDecodeFastIsSlow(t *testing.T) {
	for _, msg := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"m","params":{"a":1}}`,
		`{"jsonrpc":"2.0","method":"m"}`,
		`{"jsonrpc":"2.0","method":"a\/b\u00e9"}`,
		`{"jsonrpc":"2.0","id":null,"method":"m"}`,
		`{"jsonrpc":"2.0","id":-1.5e3,"method":"m"}`,
		`{"jsonrpc":"2.0","id":"x\"y","method":"m"}`,
		` { "params" : [ 1 ,2 ] , "jsonrpc":"2.0","method":"m" } `,
		`{"jsonrpc":"2.0","id":3,"result":null}`,
		`{"jsonrpc":"2.0","id":3,"error":{"code":1,"message":"x"}}`,
		`{"jsonrpc":"2.0","id":3,"method":"m","result":1}`,
		`{"jsonrpc":"2.0","id":3,"method":"m","params":1,"params":2}`,
		`{"jsonrpc":"2.0","id":3,"method":"m","x":1,"x":2}`,
		`{"jsonrpc":"1.0","id":3,"method":"m"}`,
		`{"jsonrpc":2,"id":3,"method":"m"}`,
		`{"jsonrpc":"2.0","id":[3],"method":"m"}`,
		`{"jsonrpc":"2.0","id":true,"method":"m"}`,
		`{"jsonrpc":"2.0","id":{},"id":4,"method":"m"}`,
		`{"jsonrpc":"2.0","id":3,"method":7}`,
		`{"jsonrpc":"2.0","id":3}`,
		`{}`,
	} {
		t.Run(msg, func(t *testing.T) {
			var fast, slow decoder
			fm, ok := fast.decodeFast([]byte(msg))
			require.True(t, ok, "the fast scan reads it")
			sm := slow.decodeSlow([]byte(msg))
			assert.Equal(t, sm, fm)
			assert.Equal(t, slow.idOff, fast.idOff, "idOff")
			assert.Equal(t, slow.paramsOff, fast.paramsOff, "paramsOff")
		})
	}
}

// FuzzFastScan holds the fast scan to jsontext: a message it reads is
// valid JSON and reads as the decoder's scan reads it, and a valid object
// it leaves to that scan is one of the kinds it leaves (an escaped
// top-level name, deep nesting, many members).
func FuzzFastScan(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"m","params":{"a":[1,true,null,"x\"\\\u00e9\ud83d\ude00"]}}`,
		`{"jsonrpc":"2.0","id":"\ud800","method":"m"}`,
		"{\"jsonrpc\":\"2.0\",\"method\":\"m\",\"params\":\"caf\u00e9 \xff\"}",
		`{"a":-0.5e+7,"b":[],"c":{}}`,
		`{"a":"` + strings.Repeat(`0123456\"`, 20) + `"}`,
		`{"\u0069d":1}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var fast, slow decoder
		fm, ok := fast.decodeFast(bytes.Clone(data))
		valid := validJSON(data)
		if ok {
			if !valid {
				t.Fatalf("the fast scan read invalid JSON %q", data)
			}
			sm := slow.decodeSlow(bytes.Clone(data))
			assert.Equal(t, sm, fm)
			assert.Equal(t, slow.idOff, fast.idOff, "idOff")
			assert.Equal(t, slow.paramsOff, fast.paramsOff, "paramsOff")
			return
		}
		if valid && bytes.HasPrefix(bytes.TrimLeft(data, " \t\r\n"), []byte("{")) &&
			!bytes.Contains(data, []byte(`\`)) && bytes.Count(data, []byte("{"))+bytes.Count(data, []byte("[")) <= fastMaxDepth &&
			topMembers(data) <= fastMaxMembers {
			t.Fatalf("the fast scan left a valid object to the slow one: %q", data)
		}
	})
}

// topMembers counts the top-level members of a valid object.
func topMembers(data []byte) int {
	d := jsontext.NewDecoder(bytes.NewReader(data), decoderOptions...)
	if _, err := d.ReadToken(); err != nil {
		return -1
	}
	n := 0
	for d.PeekKind() == '"' {
		if _, err := d.ReadToken(); err != nil {
			return -1
		}
		if err := d.SkipValue(); err != nil {
			return -1
		}
		n++
	}
	return n
}
