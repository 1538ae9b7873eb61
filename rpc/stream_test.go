package rpc

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/rs/zerolog"
	"github.com/sourcegraph/jsonrpc2"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func newTestStream(in string, out io.Writer, framing Framing) *stream {
	return newStream(strings.NewReader(in), out, Options{Framing: framing, Log: zerolog.Nop()})
}

func TestStreamEnvelope(t *testing.T) {
	params := `{"input": {"tool":"task"} , "output":[1, 2.0]}`
	in := `{"jsonrpc":"2.0","id":-3.5,"method":"tool.execute.before","params":` + params + "}\n" +
		`{"jsonrpc":"2.0","method":"event"}` + "\n"
	var out bytes.Buffer
	s := newTestStream(in, &out, FramingAuto)

	var req jsonrpc2.Request
	require.NoError(t, s.ReadObject(&req))
	assert.Equal(t, "tool.execute.before", req.Method)
	assert.False(t, req.Notif)
	p, token, ok := s.take(&req)
	require.True(t, ok)
	assert.Equal(t, params, string(p.params), "handler gets the exact raw params")
	assert.Equal(t, "-3.5", string(p.id))
	assert.Equal(t, "tool.execute.before", p.method)

	// The reply gets the raw id back in place of the token.
	resp := &jsonrpc2.Response{ID: req.ID}
	require.NoError(t, resp.SetResult(PatchResult{}))
	require.NoError(t, s.WriteObject(resp))
	assert.Equal(t, `{"id":-3.5,"result":{"patch":[]},"jsonrpc":"2.0"}`+"\n", out.String())
	s.release(token)
	assert.Empty(t, s.table)

	var notif jsonrpc2.Request
	require.NoError(t, s.ReadObject(&notif))
	assert.True(t, notif.Notif)
	p, token, ok = s.take(&notif)
	require.True(t, ok)
	assert.Nil(t, p.id)
	assert.Nil(t, p.params)
	s.release(token)

	assert.Equal(t, io.EOF, s.ReadObject(&notif))
}

func TestStreamParamsOutliveTheFrame(t *testing.T) {
	// The framer reuses its buffer; params handed out must not change.
	in := `{"jsonrpc":"2.0","method":"a","params":"first"}` + "\n" + `{"jsonrpc":"2.0","method":"a","params":"again"}` + "\n"
	s := newTestStream(in, io.Discard, FramingLine)
	var r1, r2 jsonrpc2.Request
	require.NoError(t, s.ReadObject(&r1))
	p1, _, _ := s.take(&r1)
	require.NoError(t, s.ReadObject(&r2))
	p2, _, _ := s.take(&r2)
	assert.Equal(t, `"first"`, string(p1.params))
	assert.Equal(t, `"again"`, string(p2.params))
}

func TestStreamAnswersBadFramesAndReadsOn(t *testing.T) {
	in := "nope\n[]\n{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":1}\n" + `{"jsonrpc":"2.0","id":"x","method":"m"}` + "\n"
	var out bytes.Buffer
	s := newTestStream(in, &out, FramingAuto)
	var req jsonrpc2.Request
	require.NoError(t, s.ReadObject(&req), "bad frames are not errors")
	assert.Equal(t, "m", req.Method)
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	require.Len(t, lines, 2, "the client's response gets no answer")
	assert.Contains(t, lines[0], `"code":-32700`)
	assert.Contains(t, lines[1], `"code":-32600`)
}

func TestStreamClosed(t *testing.T) {
	s := newTestStream(`{"jsonrpc":"2.0","method":"m"}`+"\n", io.Discard, FramingLine)
	require.NoError(t, s.Close())
	var req jsonrpc2.Request
	assert.ErrorIs(t, s.ReadObject(&req), errStreamClosed)
	assert.ErrorIs(t, s.replyError(&replyError{code: 1, message: "x"}), errStreamClosed)
}

// openCodeRequest builds a chat.messages.transform request of about size
// bytes shaped like OpenCode's history: messages with text and tool parts.
func openCodeRequest(size int) []byte {
	var b bytes.Buffer
	b.WriteString(`{"jsonrpc":"2.0","id":42,"method":"chat.messages.transform","params":{"input":{},"output":{"messages":[`)
	for i := 0; b.Len() < size; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"info":{"id":"msg_%04d","role":"assistant","sessionID":"ses_1a2b3c","agent":"orchestrator","time":{"created":1732900000%03d}},"parts":[`, i, i%1000)
		fmt.Fprintf(&b, `{"type":"text","text":"Looking at the file \"src/hooks/index.ts\" – line %d:\n\tconst x = await load(); // ✓ naïve ok\n"},`, i)
		fmt.Fprintf(&b, `{"type":"tool","tool":"read","callID":"call_%d","state":{"status":"completed","input":{"filePath":"/repo/src/file%d.ts","limit":200},"output":"%s","time":{"start":1,"end":2}}}]}`,
			i, i, strings.Repeat(`export function f(a: number): number { return a * 2 }\n`, 12))
	}
	b.WriteString("]}}}")
	return b.Bytes()
}

// reportCPU adds a cpu-ns/op metric to b; call it before b.Loop.
func reportCPU(b *testing.B) func() {
	start := processCPU()
	return func() {
		if cpu := processCPU() - start; cpu > 0 && b.N > 0 {
			b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N), "cpu-ns/op")
		}
	}
}

// loopReader returns line, then '\n', forever.
type loopReader struct {
	line []byte
	off  int
}

func (r *loopReader) Read(p []byte) (int, error) {
	n := 0
	for n < len(p) {
		if r.off == len(r.line) {
			p[n] = '\n'
			n++
			r.off = 0
			continue
		}
		c := copy(p[n:], r.line[r.off:])
		n += c
		r.off += c
	}
	return n, nil
}

func TestOpenCodeRequestIsValid(t *testing.T) {
	line := openCodeRequest(1 << 20)
	require.True(t, json.Valid(line))
	s := newStream(&loopReader{line: line}, io.Discard, Options{Framing: FramingLine, Log: zerolog.Nop()})
	var req jsonrpc2.Request
	require.NoError(t, s.ReadObject(&req))
	p, _, ok := s.take(&req)
	require.True(t, ok)
	var whole struct{ Params json.RawMessage }
	require.NoError(t, json.Unmarshal(line, &whole))
	assert.Equal(t, string(whole.Params), string(p.params))
}

// BenchmarkReadObject1MB is the sidecar's cost to take a 1 MB line off the
// wire up to the handler: framing, one syntax/UTF-8 scan, the params copy,
// and jsonrpc2's decode of the small envelope. Compare with
// BenchmarkDecodeAny1MB (encoding/json into any) and
// BenchmarkStockRequestUnmarshal1MB (what jsonrpc2 alone would cost).
func BenchmarkReadObject1MB(b *testing.B) {
	line := openCodeRequest(1 << 20)
	s := newStream(&loopReader{line: line}, io.Discard, Options{Framing: FramingLine, Log: zerolog.Nop()})
	b.SetBytes(int64(len(line)))
	b.ReportAllocs()
	defer reportCPU(b)()
	for b.Loop() {
		var req jsonrpc2.Request
		if err := s.ReadObject(&req); err != nil {
			b.Fatal(err)
		}
		p, token, ok := s.take(&req)
		if !ok || len(p.params) == 0 {
			b.Fatal("no params")
		}
		s.release(token)
	}
}

func BenchmarkDecodeAny1MB(b *testing.B) {
	line := openCodeRequest(1 << 20)
	b.SetBytes(int64(len(line)))
	b.ReportAllocs()
	defer reportCPU(b)()
	for b.Loop() {
		var v any
		if err := json.Unmarshal(line, &v); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkStockRequestUnmarshal1MB(b *testing.B) {
	line := openCodeRequest(1 << 20)
	b.SetBytes(int64(len(line)))
	b.ReportAllocs()
	defer reportCPU(b)()
	for b.Loop() {
		var req jsonrpc2.Request
		if err := req.UnmarshalJSON(line); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkReadObjectSmall is a typical small hook call.
func BenchmarkReadObjectSmall(b *testing.B) {
	line := []byte(`{"jsonrpc":"2.0","id":7,"method":"tool.execute.before","params":{"input":{"tool":"task","sessionID":"ses_1","callID":"call_1"},"output":{"args":{"description":"look around","prompt":"find the config loader","subagent_type":"explorer"}}}}`)
	s := newStream(&loopReader{line: line}, io.Discard, Options{Framing: FramingLine, Log: zerolog.Nop()})
	b.ReportAllocs()
	defer reportCPU(b)()
	for b.Loop() {
		var req jsonrpc2.Request
		if err := s.ReadObject(&req); err != nil {
			b.Fatal(err)
		}
		_, token, _ := s.take(&req)
		s.release(token)
	}
}
