package rpc

import (
	"bytes"
	"encoding/json"
	"errors"
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

	// The reply is encoded from the result, with the raw id as sent.
	result := struct {
		Patch []string `json:"patch"`
	}{Patch: []string{}}
	require.NoError(t, s.reply(p.method, p.id, result, nil))
	assert.Equal(t, `{"id":-3.5,"result":{"patch":[]},"jsonrpc":"2.0"}`+"\n", out.String())
	s.release(token)
	assert.Empty(t, s.table)

	// jsonrpc2 is never asked to write on this stream.
	resp := &jsonrpc2.Response{ID: req.ID}
	require.NoError(t, resp.SetResult(1))
	assert.ErrorIs(t, s.WriteObject(resp), errJSONRPC2Write)

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

func TestStreamReplyEncoding(t *testing.T) {
	tests := []struct {
		name   string
		id     string
		result any
		err    error
		want   string
	}{
		{"string id", `"a\u00e9<"`, 1, nil, `{"id":"a\u00e9<","result":1,"jsonrpc":"2.0"}`},
		{"null result", `7`, nil, nil, `{"id":7,"result":null,"jsonrpc":"2.0"}`},
		{"result HTML-escaped as encoding/json does", `7`, "<b>", nil, `{"id":7,"result":"\u003cb\u003e","jsonrpc":"2.0"}`},
		{"*Error with data", `1e3`, nil, &Error{Code: CodeInvalidParams, Message: "bad", Data: []int{1}}, `{"id":1e3,"error":{"code":-32602,"message":"bad","data":[1]},"jsonrpc":"2.0"}`},
		{"plain error", `null`, nil, errors.New("disk full"), `{"id":null,"error":{"code":-32603,"message":"disk full"},"jsonrpc":"2.0"}`},
		{"unencodable result", `2`, func() {}, nil, `{"id":2,"error":{"code":-32603,"message":"internal error"},"jsonrpc":"2.0"}`},
		{"unencodable data left out", `3`, nil, &Error{Code: 1, Message: "m", Data: make(chan int)}, `{"id":3,"error":{"code":1,"message":"m"},"jsonrpc":"2.0"}`},
		{"encoded result written as it is", `4`, appendedResult(`{"a": 1}`), nil, `{"id":4,"result":{"a": 1},"jsonrpc":"2.0"}`},
		{"encoded result that fails", `5`, appendedResult(""), nil, `{"id":5,"error":{"code":-32603,"message":"internal error"},"jsonrpc":"2.0"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out bytes.Buffer
			s := newTestStream("", &out, FramingLine)
			require.NoError(t, s.reply("m", []byte(tt.id), tt.result, tt.err))
			assert.Equal(t, tt.want+"\n", out.String())
		})
	}
}

// appendedResult is an EncodedResult; "" fails.
type appendedResult string

func (r appendedResult) AppendResult(b []byte) ([]byte, error) {
	if r == "" {
		return nil, errors.New("cannot encode")
	}
	return append(b, r...), nil
}

// chunkReader returns one chunk per Read.
type chunkReader struct{ chunks []string }

func (r *chunkReader) Read(p []byte) (int, error) {
	if len(r.chunks) == 0 {
		return 0, io.EOF
	}
	n := copy(p, r.chunks[0])
	r.chunks[0] = r.chunks[0][n:]
	if r.chunks[0] == "" {
		r.chunks = r.chunks[1:]
	}
	return n, nil
}

// The params a handler holds stay as they were while the stream reads on.
// Each line arrives in its own Read, which refills the reader's buffer
// from its start: params that aliased that buffer would be overwritten.
func TestStreamParamsOutliveTheFrame(t *testing.T) {
	for _, framing := range []Framing{FramingLine, FramingHeader} {
		t.Run(framing.String(), func(t *testing.T) {
			var chunks []string
			for _, p := range []string{`"first"`, `"again"`, `"third"`} {
				msg := `{"jsonrpc":"2.0","method":"a","params":` + p + `}`
				if framing == FramingHeader {
					msg = fmt.Sprintf("Content-Length: %d\r\n\r\n%s", len(msg), msg)
				} else {
					msg += "\n"
				}
				chunks = append(chunks, msg)
			}
			s := newStream(&chunkReader{chunks: chunks}, io.Discard, Options{Framing: framing, Log: zerolog.Nop()})
			var held []json.RawMessage
			for range 3 {
				var r jsonrpc2.Request
				require.NoError(t, s.ReadObject(&r))
				p, token, ok := s.take(&r)
				require.True(t, ok)
				s.release(token)
				held = append(held, p.params)
			}
			assert.Equal(t, []string{`"first"`, `"again"`, `"third"`},
				[]string{string(held[0]), string(held[1]), string(held[2])})
		})
	}
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
