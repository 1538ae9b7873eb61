package rpc

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/rs/zerolog"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// recordingDispatcher keeps every request it gets and answers with its
// params (null when absent).
type recordingDispatcher struct{ got []Request }

func (d *recordingDispatcher) Dispatch(_ context.Context, r Request) (any, error) {
	d.got = append(d.got, r)
	if r.Params == nil {
		return nil, nil
	}
	return r.Params, nil
}

func TestServeHandsOnRawRequests(t *testing.T) {
	params := `{"input": {"tool":"task"} , "output":[1, 2.0]}`
	in := `{"jsonrpc":"2.0","id":-3.5,"method":"tool.execute.before","params":` + params + "}\n" +
		`{"jsonrpc":"2.0","method":"event"}` + "\n"
	var out bytes.Buffer
	d := &recordingDispatcher{}
	require.NoError(t, Serve(context.Background(), strings.NewReader(in), &out, d, Options{Log: zerolog.Nop()}))

	require.Len(t, d.got, 2)
	assert.Equal(t, Request{Method: "tool.execute.before", Params: json.RawMessage(params), Validated: true}, d.got[0],
		"the handler gets the exact raw params")
	assert.Equal(t, Request{Method: "event", Notification: true, Validated: true}, d.got[1])
	// The reply carries the raw id as sent; the notification gets none.
	// (json.RawMessage results are compacted by encoding/json.)
	assert.Equal(t, `{"id":-3.5,"result":{"input":{"tool":"task"},"output":[1,2.0]},"jsonrpc":"2.0"}`+"\n", out.String())
}

func TestWriterReply(t *testing.T) {
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
			w := lineWriter(&out)
			require.NoError(t, w.reply("m", []byte(tt.id), tt.result, tt.err))
			assert.Equal(t, tt.want+"\n", out.String())
		})
	}
}

// lineWriter is a writer in line framing.
func lineWriter(out io.Writer) *writer {
	w := newWriter(out, zerolog.Nop(), nil)
	w.setFraming(newFramer(FramingLine, bufio.NewReader(strings.NewReader(""))))
	return w
}

func TestWriterStopped(t *testing.T) {
	var out bytes.Buffer
	w := lineWriter(&out)
	w.stop()
	assert.ErrorIs(t, w.replyError(&replyError{code: 1, message: "x"}), errStopped)
	assert.ErrorIs(t, w.reply("m", []byte("1"), 1, nil), errStopped)
	assert.ErrorIs(t, w.notify(Notification{Method: "n"}), errStopped)
	assert.Empty(t, out.String())
	assert.NoError(t, w.err(), "stopping is not a write error")
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

// Params are valid while Dispatch runs, in both framings, for messages
// that fit the read buffer and ones that span it (a handler copies what
// it keeps); Serve then reads the next message into the same buffer.
func TestServeParamsDuringDispatch(t *testing.T) {
	long := strings.Repeat("x", 3*readBufferSize)
	for _, framing := range []Framing{FramingLine, FramingHeader} {
		t.Run(framing.String(), func(t *testing.T) {
			var chunks []string
			want := []string{`"first"`, `"` + long + `"`, `"again"`, `"` + long + `y"`, `"third"`}
			for _, p := range want {
				msg := `{"jsonrpc":"2.0","method":"a","params":` + p + `}`
				if framing == FramingHeader {
					msg = fmt.Sprintf("Content-Length: %d\r\n\r\n%s", len(msg), msg)
				} else {
					msg += "\n"
				}
				chunks = append(chunks, msg)
			}
			var copied []string
			m := NewMux()
			m.Handle("a", func(_ context.Context, r Request) (any, error) {
				copied = append(copied, string(r.Params))
				return nil, nil
			})
			require.NoError(t, Serve(context.Background(), &chunkReader{chunks: chunks}, io.Discard, m, Options{Framing: framing, Log: zerolog.Nop()}))
			assert.Equal(t, want, copied)
		})
	}
}

func TestServeAnswersBadFramesAndReadsOn(t *testing.T) {
	in := "nope\n[]\n{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":1}\n" + `{"jsonrpc":"2.0","id":"x","method":"m"}` + "\n"
	var out bytes.Buffer
	d := &recordingDispatcher{}
	require.NoError(t, Serve(context.Background(), strings.NewReader(in), &out, d, Options{Log: zerolog.Nop()}))
	require.Len(t, d.got, 1)
	assert.Equal(t, "m", d.got[0].Method)
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	require.Len(t, lines, 3, "the client's response gets no answer")
	assert.Contains(t, lines[0], `"code":-32700`)
	assert.Contains(t, lines[1], `"code":-32600`)
	assert.Equal(t, `{"id":"x","result":null,"jsonrpc":"2.0"}`, lines[2])
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

// requestReader is the read half of Serve's loop, frame then decode, for
// benchmarks.
type requestReader struct {
	fr  framer
	dec decoder
}

func newRequestReader(line []byte) *requestReader {
	return &requestReader{fr: newFramer(FramingLine, bufio.NewReaderSize(&loopReader{line: line}, readBufferSize))}
}

func (r *requestReader) next() (message, error) {
	fr, err := r.fr.ReadFrame(DefaultMaxMessageBytes)
	if err != nil {
		return message{}, err
	}
	return r.dec.decode(fr.data), nil
}

func TestOpenCodeRequestIsValid(t *testing.T) {
	line := openCodeRequest(1 << 20)
	require.True(t, json.Valid(line))
	m, err := newRequestReader(line).next()
	require.NoError(t, err)
	require.Equal(t, kindRequest, m.kind)
	var whole struct{ Params json.RawMessage }
	require.NoError(t, json.Unmarshal(line, &whole))
	assert.Equal(t, string(whole.Params), string(m.params))
}

// BenchmarkReadRequest1MB is the sidecar's cost to take a 1 MB line off
// the wire up to the handler: framing and one syntax/UTF-8 scan. Compare
// with BenchmarkDecodeAny1MB (encoding/json into any) and
// BenchmarkStockRequestUnmarshal1MB (what jsonrpc2's Request alone costs).
func BenchmarkReadRequest1MB(b *testing.B) {
	line := openCodeRequest(1 << 20)
	r := newRequestReader(line)
	b.SetBytes(int64(len(line)))
	b.ReportAllocs()
	defer reportCPU(b)()
	for b.Loop() {
		m, err := r.next()
		if err != nil || len(m.params) == 0 {
			b.Fatal("no params", err)
		}
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

// BenchmarkReadRequestSmall is a typical small hook call.
func BenchmarkReadRequestSmall(b *testing.B) {
	line := []byte(`{"jsonrpc":"2.0","id":7,"method":"tool.execute.before","params":{"input":{"tool":"task","sessionID":"ses_1","callID":"call_1"},"output":{"args":{"description":"look around","prompt":"find the config loader","subagent_type":"explorer"}}}}`)
	r := newRequestReader(line)
	b.ReportAllocs()
	defer reportCPU(b)()
	for b.Loop() {
		if m, err := r.next(); err != nil || m.kind != kindRequest {
			b.Fatal(err)
		}
	}
}
