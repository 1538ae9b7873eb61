package handlers

import (
	"strings"
	"testing"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The projected full form, as the shim sends it (PROTOCOL.md 4.5), with
// texts that have every kind of escape.
const projectedFullForm = `{"input":{"sessionID":"ses_a","model":{"id":"m"}},"output":{"messages":[` +
	`{"info":{"id":"msg_1","role":"user","agent":"orchestrator","sessionID":"ses_a"},"parts":[{"type":"text","text":"line\none \"quoted\" \\ \/ \b\f\r\t caf\u00e9 \u2192 \ud83d\ude00 é → ✓"}]},` +
	`{"info":{"id":"msg_2","role":"assistant","agent":"orchestrator","sessionID":"ses_a"},"parts":[{"type":"step-start"},{"type":"text","text":"plain"},` +
	`{"type":"tool","tool":"task","callID":"call_1","state":{"status":"error","error":"Error: Unknown agent type: explorer is not a valid agent type"}},` +
	`{"type":"tool","tool":"read","callID":"call_2","state":{"status":"completed"}},{"type":"text","text":"","synthetic":true},{"type":"reasoning"}]},` +
	`{"info":{"id":"msg_3","role":"user","agent":7,"sessionID":"ses_a"},"parts":[]},` +
	`{"info":{"role":"assistant"},"parts":[{"type":"tool","state":{"status":"error","error":{"message":"an object","n":[1,2.5e3,true,null]}}}]}` +
	`]},"sync":{"session":"ses_a","reapply":true}}`

// TestDecodeFullForm: the fast decoding takes the full form, and gives
// what the JSON v2 decoder gives; what it declines the v2 decoder decides,
// errors included.
func TestDecodeFullForm(t *testing.T) {
	long := strings.Repeat(`x\"\\y\n `, 20)
	tests := []struct {
		name  string
		raw   string
		takes bool
	}{
		{"projected full form", projectedFullForm, true},
		{"the whole history, members the handler skips", `{"input":{},"output":{"messages":[{"info":{"id":"m","time":{"created":1},"tokens":{"input":10,"cache":{"read":0}},"path":{"cwd":"/p"}},` +
			`"parts":[{"type":"tool","tool":"bash","state":{"status":"completed","input":{"command":"` + long + `"},"output":"` + long + `","metadata":{"truncated":false},"time":{"start":1}}}]}]},"extra":[1,{"a":null}]}`, true},
		{"blanks everywhere", " {\n\t\"input\" : { } ,\r\n \"output\" : { \"messages\" : [ { \"info\" : { \"id\" : \"m\" } , \"parts\" : [ { \"text\" : \"" + long + "\" } ] } ] } } ", true},
		{"no messages member", `{"input":{},"output":{}}`, true},
		{"duplicate member in a skipped object", `{"input":{},"output":{"messages":[{"info":{"time":{"a":1,"a":2}},"parts":[]}]}}`, false},
		{"duplicate member in input", `{"input":{"x":1,"x":1},"output":{"messages":[]}}`, false},
		{"duplicate part member", `{"input":{},"output":{"messages":[{"parts":[{"text":"a","text":"b"}]}]}}`, false},
		{"duplicate top-level member", `{"input":{},"input":{},"output":{"messages":[]}}`, false},
		{"escaped member name", `{"input":{},"output":{"messages":[{"parts":[{"te\u0078t":"a"}]}]}}`, false},
		{"incremental form", `{"input":{},"sync":{"session":"s","base":"b","messages":[{"keep":0,"count":1}]}}`, false},
		{"null output", `{"input":{},"output":null}`, false},
		{"null input", `{"input":null,"output":{"messages":[]}}`, false},
		{"no input", `{"output":{"messages":[]}}`, false},
		{"null text", `{"input":{},"output":{"messages":[{"parts":[{"text":null}]}]}}`, false},
		{"number for a string", `{"input":{},"output":{"messages":[{"info":{"id":1}}]}}`, false},
		{"string for a bool", `{"input":{},"output":{"messages":[{"parts":[{"synthetic":"true"}]}]}}`, false},
		{"parts not an array", `{"input":{},"output":{"messages":[{"parts":{}}]}}`, false},
		{"messages not an array", `{"input":{},"output":{"messages":"x"}}`, false},
		{"not an object", `[1]`, false},
		{"session not a string", `{"input":{},"output":{"messages":[]},"sync":{"session":1}}`, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			raw := []byte(tc.raw)
			require.True(t, jsontext.Value(raw).IsValid(jsontext.AllowDuplicateNames(true)), "rpc's scan would not accept it")
			got, ok := decodeFullForm(raw)
			assert.Equal(t, tc.takes, ok, "taken by the fast decoding")
			want, wantErr := decodeTransformParams(raw)
			if ok {
				require.NoError(t, wantErr, "the fast decoding took params the v2 decoder refuses")
				assert.Equal(t, want, got)
			}
			p, err := decodeTransform(true, raw)
			if wantErr != nil {
				require.Error(t, err)
				assert.Equal(t, wantErr.Error(), err.Error())
				return
			}
			require.NoError(t, err)
			assert.Equal(t, want, p)
		})
	}
}

// FuzzFastTransform checks that the fast decoding, on what rpc's scan
// accepts (valid JSON, duplicate names allowed), takes only params the
// JSON v2 decoder decodes, and decodes them as it does.
func FuzzFastTransform(f *testing.F) {
	for _, p := range transcriptTransformParams(f) {
		f.Add(p)
	}
	f.Add([]byte(projectedFullForm))
	f.Add([]byte(`{"input":{},"output":{"messages":[{"info":{"time":{"a":1,"a":2}},"parts":[{"text":"\ud83d\ude00\u0000"}]}]}}`))
	f.Fuzz(func(t *testing.T, raw []byte) {
		if !jsontext.Value(raw).IsValid(jsontext.AllowDuplicateNames(true)) {
			return
		}
		got, ok := decodeFullForm(raw)
		if !ok {
			return
		}
		want, err := decodeTransformParams(raw)
		require.NoError(t, err, "the fast decoding took params the v2 decoder refuses")
		assert.Equal(t, want, got)
	})
}
