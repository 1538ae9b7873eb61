package rpc

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/rs/zerolog"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// event is one Observer call, as a string: "read <msg>", "skipped" or
// "wrote <msg>".
type eventLog struct{ events []string }

func (l *eventLog) Read(msg []byte)  { l.events = append(l.events, "read "+string(msg)) }
func (l *eventLog) Skipped(string)   { l.events = append(l.events, "skipped") }
func (l *eventLog) Wrote(msg []byte) { l.events = append(l.events, "wrote "+string(msg)) }

func TestObserverSeesEveryMessageInOrder(t *testing.T) {
	echo := NewMux()
	echo.Handle("echo", func(_ context.Context, r Request) (any, error) { return string(r.Params), nil })
	tests := []struct {
		name  string
		in    string
		limit int64
		want  []string
	}{
		{
			name: "request, notification, reply",
			in:   `{"jsonrpc":"2.0","id":1,"method":"echo","params":"a"}` + "\n" + `{"jsonrpc":"2.0","method":"echo"}` + "\n",
			want: []string{
				`read {"jsonrpc":"2.0","id":1,"method":"echo","params":"a"}`,
				`wrote {"id":1,"result":"\"a\"","jsonrpc":"2.0"}`,
				`read {"jsonrpc":"2.0","method":"echo"}`,
			},
		},
		{
			name: "a bad frame is read and answered",
			in:   "{oops\n",
			want: []string{
				`read {oops`,
				`wrote {"id":null,"error":{"code":-32700,"message":"<any>"},"jsonrpc":"2.0"}`,
			},
		},
		{
			name:  "a message over the limit is skipped and answered",
			in:    `{"jsonrpc":"2.0","id":2,"method":"echo","params":"` + strings.Repeat("x", 200) + `"}` + "\n",
			limit: 64,
			want:  []string{"skipped", `wrote {"id":2,"error":{"code":-32600,"message":"<any>"},"jsonrpc":"2.0"}`},
		},
		{
			name: "the observer gets the message as sent, before the scan rewrites a lone surrogate",
			in:   `{"jsonrpc":"2.0","id":3,"method":"echo","params":"\ud800"}` + "\n",
			want: []string{
				`read {"jsonrpc":"2.0","id":3,"method":"echo","params":"\ud800"}`,
				`wrote {"id":3,"result":"\"\\ufffd\"","jsonrpc":"2.0"}`,
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var obs eventLog
			var out bytes.Buffer
			opts := Options{Framing: FramingLine, Log: zerolog.Nop(), Observer: &obs}
			if tt.limit > 0 {
				opts.MaxMessageBytes = func() int64 { return tt.limit }
			}
			require.NoError(t, Serve(context.Background(), strings.NewReader(tt.in), &out, echo, opts))
			require.Len(t, obs.events, len(tt.want))
			for i, want := range tt.want {
				got := obs.events[i]
				if prefix, _, wild := strings.Cut(want, `"<any>"`); wild {
					assert.True(t, strings.HasPrefix(got, prefix), "event %d: %s", i, got)
					continue
				}
				assert.Equal(t, want, got, "event %d", i)
			}
			// What the observer saw written is what the client got.
			var wrote []string
			for _, e := range obs.events {
				if m, ok := strings.CutPrefix(e, "wrote "); ok {
					wrote = append(wrote, m+"\n")
				}
			}
			assert.Equal(t, strings.Join(wrote, ""), out.String())
		})
	}
}

func TestReadEnvelope(t *testing.T) {
	tests := []struct {
		name   string
		msg    string
		want   Envelope
		params string // the bytes at ParamsStart:ParamsEnd
		err    string // "" when Serve dispatches it
	}{
		{name: "request", msg: `{"jsonrpc":"2.0","id":1,"method":"m","params":{"a":[1]}}`,
			want: Envelope{Method: "m", Call: true}, params: `{"a":[1]}`},
		{name: "null id is a request", msg: `{"jsonrpc":"2.0","id":null,"method":"m"}`, want: Envelope{Method: "m", Call: true}},
		{name: "notification, params first", msg: `{"params" : [ 1 ] ,"jsonrpc":"2.0","method":"exit"}`,
			want: Envelope{Method: "exit"}, params: `[ 1 ]`},
		{name: "escaped lone surrogate: offsets into msg", msg: `{"jsonrpc":"2.0","id":"\ud800","method":"m","params":"\udc00x"}`,
			want: Envelope{Method: "m", Call: true}, params: `"\udc00x"`},
		{name: "escaped method name", msg: `{"jsonrpc":"2.0","method":"a\u002eb"}`, want: Envelope{Method: "a.b"}},
		{name: "response from the client", msg: `{"jsonrpc":"2.0","id":3,"result":{}}`, want: Envelope{Response: true}},
		{name: "not JSON", msg: `{"jsonrpc":"2.0","id":5,`, want: Envelope{Call: true}, err: "parse error"},
		{name: "no method", msg: `{"jsonrpc":"2.0","id":5}`, want: Envelope{Call: true}, err: `"method" must be a string`},
		{name: "wrong version", msg: `{"jsonrpc":"1.0","method":"m"}`, want: Envelope{Call: true}, err: `"jsonrpc" must be "2.0"`},
		{name: "batch", msg: `[{"jsonrpc":"2.0","method":"m"}]`, want: Envelope{Call: true}, err: "batch"},
		{name: "invalid UTF-8", msg: "{\"jsonrpc\":\"2.0\",\"method\":\"m\",\"params\":\"\xff\"}", want: Envelope{Call: true}, err: "UTF-8"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			msg := []byte(tt.msg)
			env, err := ReadEnvelope(msg)
			assert.Equal(t, tt.msg, string(msg), "msg is not changed")
			if tt.err != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tt.err)
			} else {
				require.NoError(t, err)
			}
			got := env
			got.ParamsStart, got.ParamsEnd = 0, 0
			assert.Equal(t, tt.want, got)
			assert.Equal(t, tt.params, tt.msg[env.ParamsStart:env.ParamsEnd])
		})
	}
}
