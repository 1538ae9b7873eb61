package rpc

import (
	"context"
	"encoding/json"
	"fmt"
	"runtime"
	"strconv"
	"strings"
	"testing"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/rs/zerolog"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Hostile inputs from real clients and adversarial ones (issue 9), each
// over pipes through Serve.

// Node's JSON.stringify writes an escaped lone surrogate for a string cut
// inside a UTF-16 pair. It is accepted and reads as U+FFFD; the params a
// handler gets decode with the handlers' JSON v2 decoder.
func TestServeLoneSurrogates(t *testing.T) {
	tests := []struct {
		name, id, params, want string
	}{
		{"high surrogate cut off", `1`, `{"t":"emoji \ud83d"}`, `{"t":"emoji \ufffd"}`},
		{"low surrogate alone", `2`, `["\udc00x"]`, `["\ufffdx"]`},
		{"upper case, then a valid pair", `3`, `"\uD83D\uD83D\uDE00"`, `"\ufffd\uD83D\uDE00"`},
		{"in a member name", `4`, `{"\ud800":1}`, `{"\ufffd":1}`},
		{"an escaped backslash is text", `5`, `"\\ud83d"`, `"\\ud83d"`},
		{"id with a lone surrogate echoed as sent", `"req-\ud83d"`, `"\ud83d"`, `"\ufffd"`},
	}
	for _, framing := range []string{"line", "header"} {
		for _, tt := range tests {
			t.Run(framing+"/"+tt.name, func(t *testing.T) {
				s := startServer(t, Options{}, framing == "header")
				s.send(`{"jsonrpc":"2.0","id":` + tt.id + `,"method":"echo","params":` + tt.params + `}`)
				r := s.next()
				require.Nil(t, r.Error, "%+v", r.Error)
				assert.Equal(t, tt.id, string(r.ID))
				var got struct{ Raw string }
				require.NoError(t, json.Unmarshal(r.Result, &got))
				assert.Equal(t, tt.want, got.Raw)
				var v any
				assert.NoError(t, jsonv2.Unmarshal([]byte(got.Raw), &v))
				s.expectAlive()
			})
		}
	}
}

// Raw invalid UTF-8 is still an error, answered with the request's id
// whenever the id can be read, so the client can match it.
func TestServeInvalidUTF8KeepsTheID(t *testing.T) {
	tests := []struct {
		name, msg, id string
	}{
		{"in params", "{\"jsonrpc\":\"2.0\",\"id\":41,\"method\":\"echo\",\"params\":{\"t\":\"a\xffb\"}}", "41"},
		{"before the id", "{\"params\":[\"\xc3\x28\"],\"jsonrpc\":\"2.0\",\"method\":\"echo\",\"id\":\"s-1\"}", `"s-1"`},
		{"in a member name", "{\"jsonrpc\":\"2.0\",\"id\":42,\"method\":\"echo\",\"params\":{\"\xe2\x82\":1}}", "42"},
		{"in the id itself", "{\"jsonrpc\":\"2.0\",\"id\":\"\xff\",\"method\":\"echo\"}", "null"},
		{"and a syntax error", "{\"jsonrpc\":\"2.0\",\"id\":43,\"method\":\"echo\",\"params\":\"\xff\"", "null"},
	}
	for _, framing := range []string{"line", "header"} {
		for _, tt := range tests {
			t.Run(framing+"/"+tt.name, func(t *testing.T) {
				s := startServer(t, Options{}, framing == "header")
				s.send(tt.msg)
				r := s.expectError(CodeParseError, tt.id)
				if tt.id != "null" {
					assert.Equal(t, msgInvalidUTF8, r.Error.Message)
				}
				s.expectAlive()
				assert.Equal(t, int64(1), s.calls.Load(), "the bad message is not dispatched")
			})
		}
	}
}

// A Content-Length over the limit gets -32600 without the client sending
// more: a body up to maxSkipBytes is read and skipped, a larger length is
// not believed and the reader resynchronises on the next header. Either
// way the next request is answered.
func TestServeOversizedContentLength(t *testing.T) {
	const limit = 1024
	body := func(n int) string {
		msg := `{"jsonrpc":"2.0","id":42,"method":"echo","params":"`
		return msg + strings.Repeat("x", n-len(msg)-2) + `"}`
	}
	tests := []struct {
		name string
		raw  string
		id   string
	}{
		{"one byte over the limit", "Content-Length: 1025\r\n\r\n" + body(1025), "42"},
		{"well over the limit", "Content-Length: 100000\r\n\r\n" + body(100000), "42"},
		{"just over the skip bound", fmt.Sprintf("Content-Length: %d\r\n\r\n", maxSkipBytes+1) + body(2000), "null"},
		{"10^15", "Content-Length: 1000000000000000\r\n\r\n" + body(200), "null"},
		{"int64's maximum", "Content-Length: " + strconv.FormatInt(1<<63-1, 10) + "\r\n\r\n" + body(200), "null"},
		{"int64's maximum, no body", "Content-Length: " + strconv.FormatInt(1<<63-1, 10) + "\r\n\r\n", "null"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := startServer(t, Options{Framing: FramingHeader, MaxMessageBytes: func() int64 { return limit }}, true)
			s.sendRaw(tt.raw)
			r := s.expectError(CodeInvalidRequest, tt.id)
			assert.Equal(t, msgTooLarge, r.Error.Message)
			s.expectAlive()
			assert.Equal(t, int64(1), s.calls.Load())
			require.NoError(t, s.finish())
		})
	}
}

// A skipped oversized message costs about the limit in memory, not a
// multiple of it: measured as bytes allocated while Serve reads and
// answers a message 8 times the limit.
func TestServeOversizedMessageMemory(t *testing.T) {
	const limit = 4 << 20
	for _, framing := range []string{"line", "header"} {
		t.Run(framing, func(t *testing.T) {
			s := startServer(t, Options{MaxMessageBytes: func() int64 { return limit }}, framing == "header")
			s.expectAlive() // framing detected, goroutines started
			msg := []byte(s.frame(`{"jsonrpc":"2.0","id":9,"method":"echo","params":"` + strings.Repeat("z", 8*limit) + `"}`))
			allocated := allocatedBy(func() {
				_, err := s.in.Write(msg)
				require.NoError(t, err)
				s.expectError(CodeInvalidRequest, "9")
			})
			t.Logf("%s framing: %.2f MiB allocated to skip a %d MiB message (limit %d MiB)",
				framing, float64(allocated)/(1<<20), len(msg)>>20, limit>>20)
			assert.LessOrEqual(t, allocated, uint64(limit+256<<10), "bytes allocated")
			s.expectAlive()
		})
	}
}

// allocatedBy returns the bytes the process allocated while f ran.
func allocatedBy(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// A parse error's reply may quote a few bytes of the message (jsontext's
// errors do); the logs above debug level quote none.
func TestServeParseErrorNotLoggedAboveDebug(t *testing.T) {
	for _, framing := range []string{"line", "header"} {
		t.Run(framing, func(t *testing.T) {
			s := startServer(t, Options{}, framing == "header")
			s.send(`{"jsonrpc":"2.0","id":1,"method":"echo","params":"\uQUUX secret"}`)
			r := s.expectError(CodeParseError, "null")
			assert.Contains(t, r.Error.Message, "QUUX", "the reply says what was wrong")
			s.expectAlive()
			require.NoError(t, s.finish())
			var sawDebug bool
			for _, line := range strings.Split(strings.TrimSpace(s.logs.String()), "\n") {
				var entry struct{ Level string }
				require.NoError(t, json.Unmarshal([]byte(line), &entry))
				if entry.Level == "debug" || entry.Level == "trace" {
					sawDebug = sawDebug || strings.Contains(line, "QUUX")
					continue
				}
				assert.NotContains(t, line, "QUUX", "message content logged at %s", entry.Level)
			}
			assert.True(t, sawDebug, "the detail is logged at debug")
		})
	}
}

// BenchmarkSkipOversizedLine reports the bytes allocated to skip a line 8
// times the limit (compare B/op with the 4 MiB limit).
func BenchmarkSkipOversizedLine(b *testing.B) {
	const limit = 4 << 20
	line := []byte(`{"jsonrpc":"2.0","id":9,"method":"echo","params":"` + strings.Repeat("z", 8*limit) + `"}`)
	b.SetBytes(int64(len(line)))
	b.ReportAllocs()
	for b.Loop() {
		in := &countReader{loopReader: loopReader{line: line}, left: 1}
		if err := Serve(context.Background(), in, discardWriter{}, NewMux(), Options{Framing: FramingLine, MaxMessageBytes: func() int64 { return limit }, Log: zerolog.Nop()}); err != nil {
			b.Fatal(err)
		}
	}
}

type discardWriter struct{}

func (discardWriter) Write(p []byte) (int, error) { return len(p), nil }
