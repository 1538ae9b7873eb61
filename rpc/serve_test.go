package rpc

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/rs/zerolog"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// wireReply is a response as it arrives at the client.
type wireReply struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Result  json.RawMessage `json:"result"`
	Error   *struct {
		Code    int64           `json:"code"`
		Message string          `json:"message"`
		Data    json.RawMessage `json:"data"`
	} `json:"error"`
}

// testServer runs Serve over in-memory pipes.
type testServer struct {
	t      *testing.T
	in     *io.PipeWriter
	frames chan []byte // every frame Serve wrote, in order
	header bool        // frame requests with Content-Length
	done   chan error
	cancel context.CancelFunc
	calls  atomic.Int64 // Dispatch calls
	notes  chan string  // params of "note" notifications
	logs   *syncBuffer
	limit  atomic.Int64 // the message size limit when Options has none; 0: default
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// testMux is the Dispatcher the Serve tests run against.
func (s *testServer) testMux() Dispatcher {
	m := NewMux()
	m.Handle("echo", func(_ context.Context, r Request) (any, error) {
		if r.Params == nil {
			return "absent", nil
		}
		return map[string]string{"raw": string(r.Params)}, nil
	})
	m.Handle("note", func(_ context.Context, r Request) (any, error) {
		s.notes <- string(r.Params)
		return "ignored", nil
	})
	m.Handle("setLimit", func(_ context.Context, r Request) (any, error) {
		n, err := strconv.ParseInt(string(r.Params), 10, 64)
		s.limit.Store(n)
		return n, err
	})
	m.Handle("validated", func(_ context.Context, r Request) (any, error) { return r.Validated, nil })
	m.Handle("panic", func(context.Context, Request) (any, error) { panic("kaboom") })
	m.Handle("panicIndex", func(_ context.Context, r Request) (any, error) { return r.Params[len(r.Params)+1], nil })
	m.Handle("fail", func(context.Context, Request) (any, error) { return nil, errors.New("boom") })
	m.Handle("rpcerr", func(context.Context, Request) (any, error) {
		return nil, fmt.Errorf("wrapped: %w", &Error{Code: CodeInvalidParams, Message: "input: missing", Data: map[string]string{"field": "input"}})
	})
	m.Handle("unencodable", func(context.Context, Request) (any, error) { return func() {}, nil })
	m.Handle("sleep", func(_ context.Context, r Request) (any, error) {
		ms, err := strconv.Atoi(string(r.Params))
		if err != nil {
			return nil, Errorf(CodeInvalidParams, "params: %v", err)
		}
		time.Sleep(time.Duration(ms) * time.Millisecond)
		return ms, nil
	})
	return dispatchCounter{m, &s.calls}
}

type dispatchCounter struct {
	d     Dispatcher
	calls *atomic.Int64
}

func (c dispatchCounter) Dispatch(ctx context.Context, r Request) (any, error) {
	c.calls.Add(1)
	return c.d.Dispatch(ctx, r)
}

func startServer(t *testing.T, opts Options, header bool) *testServer {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	s := &testServer{t: t, in: inW, frames: make(chan []byte, 100), header: header,
		done: make(chan error, 1), cancel: cancel, notes: make(chan string, 10), logs: &syncBuffer{}}
	opts.Log = zerolog.New(s.logs).Level(zerolog.DebugLevel)
	if opts.MaxMessageBytes == nil {
		opts.MaxMessageBytes = s.limit.Load
	}
	go func() {
		s.done <- Serve(ctx, inR, outW, s.testMux(), opts)
		outW.Close()
	}()
	go readFrames(outR, s.frames)
	t.Cleanup(func() {
		cancel()
		inW.Close()
		outR.Close()
	})
	return s
}

// readFrames parses everything Serve writes: header or line frames, each a
// JSON value. Anything else would make a test fail to see its reply.
func readFrames(r io.Reader, frames chan<- []byte) {
	defer close(frames)
	br := bufio.NewReader(r)
	for {
		first, err := br.Peek(1)
		if err != nil {
			return
		}
		if first[0] == 'C' {
			line, err := br.ReadString('\n')
			if err != nil {
				return
			}
			n, err := strconv.Atoi(strings.TrimSpace(strings.TrimPrefix(line, "Content-Length:")))
			if err != nil {
				frames <- []byte("bad header: " + line)
				return
			}
			if blank, err := br.ReadString('\n'); err != nil || blank != "\r\n" {
				frames <- []byte("bad header end")
				return
			}
			body := make([]byte, n)
			if _, err := io.ReadFull(br, body); err != nil {
				return
			}
			frames <- body
			continue
		}
		line, err := br.ReadBytes('\n')
		if err != nil {
			return
		}
		frames <- bytes.TrimSuffix(line, []byte("\n"))
	}
}

func (s *testServer) frame(msg string) string {
	if s.header {
		return fmt.Sprintf("Content-Length: %d\r\n\r\n%s", len(msg), msg)
	}
	return msg + "\n"
}

// send writes raw bytes to Serve's input.
func (s *testServer) sendRaw(raw string) {
	s.t.Helper()
	_, err := io.WriteString(s.in, raw)
	require.NoError(s.t, err)
}

// send writes msg in the server's framing.
func (s *testServer) send(msg string) { s.t.Helper(); s.sendRaw(s.frame(msg)) }

func (s *testServer) next() wireReply {
	s.t.Helper()
	select {
	case b, ok := <-s.frames:
		require.True(s.t, ok, "output ended")
		var r wireReply
		dec := json.NewDecoder(bytes.NewReader(b))
		dec.DisallowUnknownFields()
		require.NoError(s.t, dec.Decode(&r), "frame %q", b)
		require.Equal(s.t, "2.0", r.JSONRPC, "frame %q", b)
		return r
	case <-time.After(5 * time.Second):
		s.t.Fatal("no reply within 5s")
		return wireReply{}
	}
}

// expectError reads the next reply and checks it is an error.
func (s *testServer) expectError(code int64, id string) wireReply {
	s.t.Helper()
	r := s.next()
	require.NotNil(s.t, r.Error, "want error %d, got result %s", code, r.Result)
	assert.Equal(s.t, code, r.Error.Code, "message %q", r.Error.Message)
	assert.Equal(s.t, id, string(r.ID))
	assert.Nil(s.t, r.Result)
	return r
}

// expectAlive checks a valid request after the case is still answered.
func (s *testServer) expectAlive() {
	s.t.Helper()
	s.send(`{"jsonrpc":"2.0","id":"after","method":"echo","params":[1]}`)
	r := s.next()
	require.Nil(s.t, r.Error)
	assert.Equal(s.t, `"after"`, string(r.ID))
	assert.JSONEq(s.t, `{"raw":"[1]"}`, string(r.Result))
}

// finish closes the input and returns what Serve returned.
func (s *testServer) finish() error {
	s.t.Helper()
	s.in.Close()
	select {
	case err := <-s.done:
		return err
	case <-time.After(5 * time.Second):
		s.t.Fatal("Serve did not return within 5s")
		return nil
	}
}

func deep(n int, open, close string) string {
	return strings.Repeat(open, n) + strings.Repeat(close, n)
}

func TestServeBadInput(t *testing.T) {
	tests := []struct {
		name    string
		msg     string
		code    int64
		id      string
		message string // substring of the error message, if set
	}{
		{name: "not JSON", msg: `hello`, code: CodeParseError, id: "null"},
		{name: "truncated JSON", msg: `{"jsonrpc":"2.0","id":1,"method":"echo"`, code: CodeParseError, id: "null"},
		{name: "two values", msg: `{"jsonrpc":"2.0","id":1,"method":"echo"} {}`, code: CodeParseError, id: "null"},
		{name: "bad literal in params", msg: `{"jsonrpc":"2.0","id":1,"method":"echo","params":[tru]}`, code: CodeParseError, id: "null"},
		{name: "invalid UTF-8 in a string", msg: "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"echo\",\"params\":{\"t\":\"a\xffb\"}}", code: CodeParseError, id: "2", message: "invalid UTF-8"},
		{name: "invalid UTF-8 in a name", msg: "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"echo\",\"params\":{\"\xc3\x28\":1}}", code: CodeParseError, id: "2", message: "invalid UTF-8"},
		{name: "100k-deep arrays", msg: deep(100000, "[", "]"), code: CodeParseError, id: "null", message: "nesting too deep"},
		{name: "100k-deep params", msg: `{"jsonrpc":"2.0","id":3,"method":"echo","params":` + deep(100000, `{"a":`, "}") + `}`, code: CodeParseError, id: "3", message: "nesting too deep"},
		{name: "100k-deep params, id after them", msg: `{"jsonrpc":"2.0","method":"echo","params":` + deep(100000, `[{"id":9},`, "]") + `, "id" : "late"}`, code: CodeParseError, id: `"late"`, message: "nesting too deep"},
		{name: "number", msg: `42`, code: CodeInvalidRequest, id: "null"},
		{name: "string", msg: `"call"`, code: CodeInvalidRequest, id: "null"},
		{name: "null", msg: `null`, code: CodeInvalidRequest, id: "null"},
		{name: "batch", msg: `[{"jsonrpc":"2.0","id":1,"method":"echo"},{"jsonrpc":"2.0","id":2,"method":"echo"}]`, code: CodeInvalidRequest, id: "null", message: "batch requests are not supported"},
		{name: "empty batch", msg: `[]`, code: CodeInvalidRequest, id: "null", message: "batch"},
		{name: "missing method", msg: `{"jsonrpc":"2.0","id":4}`, code: CodeInvalidRequest, id: "4"},
		{name: "method not a string", msg: `{"jsonrpc":"2.0","id":"m","method":7}`, code: CodeInvalidRequest, id: `"m"`},
		{name: "wrong jsonrpc", msg: `{"jsonrpc":"1.0","id":5,"method":"echo"}`, code: CodeInvalidRequest, id: "5"},
		{name: "jsonrpc a number", msg: `{"jsonrpc":2.0,"id":5,"method":"echo"}`, code: CodeInvalidRequest, id: "5"},
		{name: "missing jsonrpc", msg: `{"id":6,"method":"echo"}`, code: CodeInvalidRequest, id: "6"},
		{name: "id an object", msg: `{"jsonrpc":"2.0","id":{"n":1},"method":"echo"}`, code: CodeInvalidRequest, id: "null"},
		{name: "id an array", msg: `{"jsonrpc":"2.0","id":[1],"method":"echo"}`, code: CodeInvalidRequest, id: "null"},
		{name: "id a bool", msg: `{"jsonrpc":"2.0","id":true,"method":"echo"}`, code: CodeInvalidRequest, id: "null"},
		{name: "duplicate method", msg: `{"jsonrpc":"2.0","id":7,"method":"echo","method":"fail"}`, code: CodeInvalidRequest, id: "7"},
		{name: "unknown method", msg: `{"jsonrpc":"2.0","id":8,"method":"nope"}`, code: CodeMethodNotFound, id: "8", message: "method not found: nope"},
	}
	for _, framing := range []string{"line", "header"} {
		for _, tt := range tests {
			t.Run(framing+"/"+tt.name, func(t *testing.T) {
				s := startServer(t, Options{}, framing == "header")
				s.send(tt.msg)
				r := s.expectError(tt.code, tt.id)
				if tt.message != "" {
					assert.Contains(t, r.Error.Message, tt.message)
				}
				s.expectAlive()
				if tt.code != CodeMethodNotFound {
					assert.Equal(t, int64(1), s.calls.Load(), "only the follow-up request runs")
				}
				require.NoError(t, s.finish())
			})
		}
	}
}

func TestServeIDs(t *testing.T) {
	tests := []struct {
		name string
		id   string
	}{
		{"zero", `0`},
		{"positive", `17`},
		{"negative", `-1`},
		{"fraction", `1.5`},
		{"exponent", `1e3`},
		{"beyond uint64", `18446744073709551616`},
		{"string", `"abc"`},
		{"empty string", `""`},
		{"escaped string", `"\u00e9\n"`},
		{"null", `null`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := startServer(t, Options{}, false)
			s.send(`{"jsonrpc":"2.0","id":` + tt.id + `,"method":"echo","params":{}}`)
			r := s.next()
			require.Nil(t, r.Error)
			assert.Equal(t, tt.id, string(r.ID), "id echoed byte for byte")
		})
	}
}

func TestServeParamsExact(t *testing.T) {
	params := "{ \"b\" : [1, 2.50, \"\\u00e9\"],\n\t\"a\":null }"
	tests := []struct {
		name, msg, want string
	}{
		{"object with whitespace", `{"jsonrpc":"2.0","id":1,"method":"echo","params":` + strings.ReplaceAll(params, "\n", " ") + `}`, strings.ReplaceAll(params, "\n", " ")},
		{"params first", `{"params":[3, 4],"method":"echo","id":1,"jsonrpc":"2.0"}`, `[3, 4]`},
		{"null params", `{"jsonrpc":"2.0","id":1,"method":"echo","params":null}`, `null`},
		{"scalar params", `{"jsonrpc":"2.0","id":1,"method":"echo","params":"x"}`, `"x"`},
		{"escaped member names", `{"jsonrpc":"2.0","\u0069d":1,"m\u0065thod":"\u0065cho","params":[5]}`, `[5]`},
		{"unknown members ignored", `{"jsonrpc":"2.0","id":1,"method":"echo","meta":{"x":[]},"params":[6]}`, `[6]`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := startServer(t, Options{}, false)
			s.send(tt.msg)
			r := s.next()
			require.Nil(t, r.Error)
			var got struct{ Raw string }
			require.NoError(t, json.Unmarshal(r.Result, &got))
			assert.Equal(t, tt.want, got.Raw)
		})
	}
	t.Run("absent params", func(t *testing.T) {
		s := startServer(t, Options{}, false)
		s.send(`{"jsonrpc":"2.0","id":1,"method":"echo"}`)
		assert.JSONEq(t, `"absent"`, string(s.next().Result))
	})
}

// Handlers may rely on Request.Validated: Serve sets it, as its params
// passed the transport's scan.
func TestServeParamsValidated(t *testing.T) {
	for _, header := range []bool{false, true} {
		s := startServer(t, Options{}, header)
		s.send(`{"jsonrpc":"2.0","id":1,"method":"validated","params":{"a":"\u00e9"}}`)
		assert.JSONEq(t, `true`, string(s.next().Result))
	}
}

func TestServeOversize(t *testing.T) {
	big := strings.Repeat("x", 5000)
	tests := []struct {
		name string
		msg  string
		id   string
	}{
		{"id first", `{"jsonrpc":"2.0","id":42,"method":"echo","params":"` + big + `"}`, "42"},
		{"string id", `{"id":"req-9","jsonrpc":"2.0","method":"echo","params":"` + big + `"}`, `"req-9"`},
		{"id after a small member", `{"jsonrpc":"2.0","method":"echo","meta":{"a":[1,2]},"id":43,"params":"` + big + `"}`, "43"},
		{"id beyond 4 KiB", `{"jsonrpc":"2.0","method":"echo","params":"` + big + `","id":44}`, "null"},
		{"id only nested", `{"jsonrpc":"2.0","method":"echo","params":{"id":45,"t":"` + big + `"}}`, "null"},
		{"id of a wrong type", `{"jsonrpc":"2.0","id":{"n":1},"method":"echo","params":"` + big + `"}`, "null"},
		{"batch", `[{"jsonrpc":"2.0","id":46,"method":"echo","params":"` + big + `"}]`, "null"},
		{"not JSON", big, "null"},
	}
	for _, framing := range []string{"line", "header"} {
		for _, tt := range tests {
			t.Run(framing+"/"+tt.name, func(t *testing.T) {
				limit := func() int64 { return 1024 }
				s := startServer(t, Options{MaxMessageBytes: limit}, framing == "header")
				s.send(tt.msg)
				r := s.expectError(CodeInvalidRequest, tt.id)
				assert.Equal(t, "message too large", r.Error.Message)
				s.expectAlive()
				assert.Equal(t, int64(1), s.calls.Load())
				require.NoError(t, s.finish())
			})
		}
	}
}

func TestServeLimitReadPerMessage(t *testing.T) {
	// The limit is read as each message starts, so a handler (initialize)
	// changes it from the next message on.
	s := startServer(t, Options{}, false)
	msg := `{"jsonrpc":"2.0","id":1,"method":"echo","params":"` + strings.Repeat("y", 200) + `"}`
	setLimit := func(n int) {
		s.send(`{"jsonrpc":"2.0","id":0,"method":"setLimit","params":` + strconv.Itoa(n) + `}`)
		require.Nil(t, s.next().Error)
	}
	steps := []struct {
		name  string
		limit int
		fits  bool
	}{
		{"below", 100, false},
		{"well above", 1000, true},
		{"exactly", len(msg), true},
		{"one byte short", len(msg) - 1, false},
		{"back to the default", 0, true},
	}
	for _, st := range steps {
		setLimit(st.limit)
		s.send(msg)
		r := s.next()
		assert.Equal(t, "1", string(r.ID), st.name)
		if st.fits {
			assert.Nil(t, r.Error, st.name)
		} else if assert.NotNil(t, r.Error, st.name) {
			assert.Equal(t, "message too large", r.Error.Message, st.name)
		}
	}
}

func TestServeLineFraming(t *testing.T) {
	s := startServer(t, Options{}, false)
	s.sendRaw("\n  \r\n\t\n") // blank lines are skipped
	s.sendRaw(`{"jsonrpc":"2.0","id":1,"method":"echo","params":[1]}` + "\r\n")
	r := s.next()
	require.Nil(t, r.Error)
	assert.JSONEq(t, `{"raw":"[1]"}`, string(r.Result))
	s.sendRaw("\n\n" + `  {"jsonrpc":"2.0","id":2,"method":"echo","params":[2]}  ` + "\n")
	assert.Equal(t, "2", string(s.next().ID))
	require.NoError(t, s.finish())
}

func TestServeHeaderFraming(t *testing.T) {
	body := `{"jsonrpc":"2.0","id":1,"method":"echo","params":[1]}`
	tests := []struct {
		name  string
		raw   string
		reply func(s *testServer)
	}{
		{"with Content-Type", "Content-Length: " + strconv.Itoa(len(body)) + "\r\nContent-Type: application/vscode-jsonrpc; charset=utf-8\r\n\r\n" + body,
			func(s *testServer) { assert.Equal(t, "1", string(s.next().ID)) }},
		{"Content-Type first, lower-case name, bare LF", "Content-Type: application/json\ncontent-length:" + strconv.Itoa(len(body)) + "\n\n" + body,
			func(s *testServer) { assert.Equal(t, "1", string(s.next().ID)) }},
		{"bad Content-Length", "Content-Length: abc\r\n\r\n" + body,
			func(s *testServer) { s.expectError(CodeParseError, "null") }},
		{"negative Content-Length", "Content-Length: -5\r\n\r\n" + body,
			func(s *testServer) { s.expectError(CodeParseError, "null") }},
		{"conflicting Content-Length", "Content-Length: 3\r\nContent-Length: 4\r\n\r\n" + body,
			func(s *testServer) { s.expectError(CodeParseError, "null") }},
		{"missing Content-Length", "Content-Type: application/json\r\n\r\n" + body,
			func(s *testServer) { s.expectError(CodeParseError, "null") }},
		{"malformed header line", "this is not a header\r\n\r\n" + body,
			func(s *testServer) { s.expectError(CodeParseError, "null") }},
		{"header line too long", "X-Junk: " + strings.Repeat("j", 100000) + "\r\n\r\n" + body,
			func(s *testServer) { s.expectError(CodeParseError, "null") }},
		{"junk glued to the next header", "}Content-Length: " + strconv.Itoa(len(body)) + "\r\n\r\n" + body,
			func(s *testServer) {
				s.expectError(CodeParseError, "null")
				assert.Equal(t, "1", string(s.next().ID), "the glued frame is still read")
			}},
		{"empty body", "Content-Length: 0\r\n\r\n",
			func(s *testServer) { s.expectError(CodeParseError, "null") }},
		{"line JSON sent to a header server", body + "\n",
			func(s *testServer) { s.expectError(CodeParseError, "null") }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := startServer(t, Options{Framing: FramingHeader}, true)
			s.sendRaw(tt.raw)
			tt.reply(s)
			s.expectAlive()
			require.NoError(t, s.finish())
		})
	}
}

func TestServeAutoDetect(t *testing.T) {
	tests := []struct {
		name   string
		header bool
		first  string
	}{
		{"header", true, ""},
		{"line object", false, ""},
		{"line after blank lines", false, "\r\n \n"},
		{"header after blank lines", true, "\r\n\r\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := startServer(t, Options{}, tt.header)
			s.sendRaw(tt.first)
			s.expectAlive() // the reader checks the reply's framing is the request's
		})
	}
	t.Run("garbage first means line framing", func(t *testing.T) {
		s := startServer(t, Options{}, false)
		s.sendRaw("xyz\n")
		s.expectError(CodeParseError, "null")
		s.expectAlive()
	})
	t.Run("forced line framing answers headers as garbage", func(t *testing.T) {
		s := startServer(t, Options{Framing: FramingLine}, false)
		s.sendRaw("Content-Length: 2\r\n")
		s.expectError(CodeParseError, "null")
		s.expectAlive()
	})
}

func TestServeDispatchErrors(t *testing.T) {
	tests := []struct {
		name, method string
		code         int64
		message      string
		data         string
	}{
		{"plain error", "fail", CodeInternalError, "boom", ""},
		{"wrapped *Error keeps code, message, data", "rpcerr", CodeInvalidParams, "input: missing", `{"field":"input"}`},
		{"panic", "panic", CodeInternalError, "internal error", ""},
		{"unencodable result", "unencodable", CodeInternalError, "internal error", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := startServer(t, Options{}, false)
			s.send(`{"jsonrpc":"2.0","id":1,"method":"` + tt.method + `"}`)
			r := s.expectError(tt.code, "1")
			assert.Equal(t, tt.message, r.Error.Message)
			if tt.data != "" {
				assert.JSONEq(t, tt.data, string(r.Error.Data))
			} else {
				assert.Nil(t, r.Error.Data)
			}
			s.expectAlive()
			require.NoError(t, s.finish())
		})
	}
}

// TestServePanicLogged: a panic is logged at error level with its stack,
// and its value only when it is the runtime's own error; any other value
// (it may quote a message) goes to a debug line.
func TestServePanicLogged(t *testing.T) {
	s := startServer(t, Options{}, false)
	s.send(`{"jsonrpc":"2.0","id":1,"method":"panic"}`)
	s.expectError(CodeInternalError, "1")
	s.send(`{"jsonrpc":"2.0","method":"panic"}`) // a panicking notification: no reply
	s.send(`{"jsonrpc":"2.0","id":2,"method":"panicIndex","params":{}}`)
	s.expectError(CodeInternalError, "2")
	s.expectAlive()
	require.NoError(t, s.finish())
	type logEntry struct{ Level, Message, Panic, PanicType, Stack, Method string }
	var panics, values int
	for _, line := range strings.Split(strings.TrimSpace(s.logs.String()), "\n") {
		var entry logEntry
		require.NoError(t, json.Unmarshal([]byte(line), &entry))
		if entry.Level != "debug" {
			assert.NotContains(t, line, "kaboom", "a panic's value at %s level", entry.Level)
		}
		switch entry.Message {
		case "handler panicked":
			panics++
			assert.Equal(t, "error", entry.Level)
			assert.Contains(t, entry.Stack, "serve_test.go")
			if entry.Method == "panic" {
				assert.Equal(t, "string", entry.PanicType)
				assert.Empty(t, entry.Panic)
			} else {
				assert.Equal(t, "panicIndex", entry.Method)
				assert.Contains(t, entry.Panic, "index out of range")
			}
		case "handler panic value":
			values++
			assert.Equal(t, "debug", entry.Level)
			assert.Equal(t, "kaboom", entry.Panic)
		}
	}
	assert.Equal(t, 3, panics)
	assert.Equal(t, 2, values)
}

func TestServeNotifications(t *testing.T) {
	s := startServer(t, Options{}, false)
	s.send(`{"jsonrpc":"2.0","method":"note","params":{"n":1}}`)
	s.send(`{"jsonrpc":"2.0","method":"fail"}`)         // error: no reply
	s.send(`{"jsonrpc":"2.0","method":"nope"}`)         // unknown: no reply
	s.send(`{"jsonrpc":"2.0","id":1,"result":{"x":1}}`) // a response from the client: ignored
	s.send(`{"jsonrpc":"2.0","id":2,"error":{"code":1,"message":"m"}}`)
	s.expectAlive() // the first reply is the follow-up's
	assert.Equal(t, `{"n":1}`, <-s.notes)
	require.NoError(t, s.finish())
	select {
	case f, ok := <-s.frames:
		assert.False(t, ok, "unexpected frame %s", f)
	case <-time.After(time.Second):
		t.Fatal("output not closed")
	}
}

func TestServeOrder(t *testing.T) {
	s := startServer(t, Options{}, false)
	var batch strings.Builder
	// Slower requests first: replies still come in arrival order.
	for i, ms := range []int{40, 30, 20, 10, 0} {
		fmt.Fprintf(&batch, `{"jsonrpc":"2.0","id":%d,"method":"sleep","params":%d}`+"\n", i, ms)
	}
	s.sendRaw(batch.String())
	for i, ms := range []int{40, 30, 20, 10, 0} {
		r := s.next()
		require.Nil(t, r.Error)
		assert.Equal(t, strconv.Itoa(i), string(r.ID))
		assert.Equal(t, strconv.Itoa(ms), string(r.Result))
	}
	require.NoError(t, s.finish())
}

func TestServeEOF(t *testing.T) {
	tests := []struct {
		name   string
		header bool
		raw    string
		reply  bool // a final parse error is written
	}{
		{"nothing", false, "", false},
		{"only blank lines", false, "\n\n  ", false},
		{"after a request", false, `{"jsonrpc":"2.0","id":1,"method":"echo"}` + "\n", false},
		{"last line without newline", false, `{"jsonrpc":"2.0","id":1,"method":"echo"}`, false},
		{"mid line", false, `{"jsonrpc":"2.0","id":1,"met`, true},
		{"mid header", true, "Content-Length: 40\r\n", true},
		{"mid body", true, "Content-Length: 40\r\n\r\n{\"jsonrpc\"", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := startServer(t, Options{}, tt.header)
			s.sendRaw(tt.raw)
			err := s.finish()
			require.NoError(t, err)
			if strings.Contains(tt.name, "request") || strings.Contains(tt.name, "newline") {
				assert.Equal(t, "1", string(s.next().ID))
			}
			if tt.reply {
				s.expectError(CodeParseError, "null")
			}
			_, open := <-s.frames
			assert.False(t, open, "no more output")
		})
	}
}

func TestServeCancel(t *testing.T) {
	s := startServer(t, Options{}, false)
	s.expectAlive()
	s.cancel()
	select {
	case err := <-s.done:
		require.NoError(t, err)
	case <-time.After(5 * time.Second):
		t.Fatal("Serve did not return after cancel")
	}
}

func TestServeCancelWaitsForDispatch(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		started, release := make(chan struct{}), make(chan struct{})
		var finished atomic.Bool
		m := NewMux()
		m.Handle("block", func(context.Context, Request) (any, error) {
			close(started)
			<-release
			finished.Store(true)
			return nil, nil
		})
		inR, inW := io.Pipe()
		defer inW.Close()
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan error, 1)
		go func() { done <- Serve(ctx, inR, io.Discard, m, Options{Log: zerolog.Nop()}) }()
		_, err := io.WriteString(inW, `{"jsonrpc":"2.0","id":1,"method":"block"}`+"\n")
		require.NoError(t, err)
		<-started
		cancel()
		synctest.Wait() // every goroutine has run as far as it can
		select {
		case <-done:
			t.Fatal("Serve returned while Dispatch was running")
		default:
		}
		close(release)
		require.NoError(t, <-done)
		assert.True(t, finished.Load())
	})
}

// stallingWriter holds its first Write halfway: it takes half the bytes,
// says so on stalled and takes the rest once release is closed. A stdout
// pipe the client is slow to read does the same to a large frame.
type stallingWriter struct {
	stalled, release chan struct{}
	mu               sync.Mutex
	out              bytes.Buffer
	once             sync.Once
}

func (w *stallingWriter) Write(p []byte) (int, error) {
	held := false
	w.once.Do(func() {
		w.add(p[:len(p)/2])
		close(w.stalled)
		<-w.release
		w.add(p[len(p)/2:])
		held = true
	})
	if !held {
		w.add(p)
	}
	return len(p), nil
}

func (w *stallingWriter) add(p []byte) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.out.Write(p)
}

func (w *stallingWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.out.String()
}

// TestServeCancelWaitsForWrite: a message being written when ctx ends is
// finished before Serve returns (the caller exits right after), and none
// is written after. Both writers are covered: the handler's reply and the
// stream's own answer to a bad frame.
func TestServeCancelWaitsForWrite(t *testing.T) {
	tests := []struct {
		name, input string
		header      bool
		want        string
	}{
		{"reply to a request", `{"jsonrpc":"2.0","id":1,"method":"echo"}` + "\n", false,
			`{"id":1,"result":1,"jsonrpc":"2.0"}` + "\n"},
		{"reply to a request, header framing", "Content-Length: 40\r\n\r\n" + `{"jsonrpc":"2.0","id":1,"method":"echo"}`, true,
			"Content-Length: 35\r\n\r\n" + `{"id":1,"result":1,"jsonrpc":"2.0"}`},
		{"answer to a bad frame", "not json\n", false, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				m := NewMux()
				m.Handle("echo", func(context.Context, Request) (any, error) { return 1, nil })
				w := &stallingWriter{stalled: make(chan struct{}), release: make(chan struct{})}
				inR, inW := io.Pipe()
				defer inW.Close()
				ctx, cancel := context.WithCancel(t.Context())
				done := make(chan error, 1)
				go func() { done <- Serve(ctx, inR, w, m, Options{Log: zerolog.Nop()}) }()
				_, err := io.WriteString(inW, tt.input)
				require.NoError(t, err)
				<-w.stalled
				cancel()
				synctest.Wait() // every goroutine has run as far as it can
				select {
				case <-done:
					written := w.String()
					close(w.release) // let the writer end, so the bubble can
					t.Fatalf("Serve returned with a message half written: %q", written)
				default:
				}
				close(w.release)
				require.NoError(t, <-done)
				out := w.String()
				if tt.want != "" {
					assert.Equal(t, tt.want, out)
					return
				}
				var r wireReply
				require.NoError(t, json.Unmarshal([]byte(out), &r), "one whole frame: %q", out)
				require.NotNil(t, r.Error)
				assert.EqualValues(t, CodeParseError, r.Error.Code)
			})
		})
	}
}

// failingWriter fails every write, like stdout once the client is gone.
type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, io.ErrClosedPipe }

func TestServeWriteError(t *testing.T) {
	tests := []struct {
		name, input string
	}{
		{"reply to a request", `{"jsonrpc":"2.0","id":1,"method":"echo"}` + "\n"},
		{"error reply to a request", `{"jsonrpc":"2.0","id":1,"method":"nope"}` + "\n"},
		{"answer to a bad frame", "not json\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			inR, inW := io.Pipe()
			done := make(chan error, 1)
			var calls atomic.Int64
			d := dispatchCounter{NewMux(), &calls}
			go func() { done <- Serve(context.Background(), inR, failingWriter{}, d, Options{Log: zerolog.Nop()}) }()
			// stdin stays open: Serve must end on the write error alone.
			_, err := io.WriteString(inW, tt.input)
			require.NoError(t, err)
			select {
			case err := <-done:
				require.Error(t, err)
				assert.ErrorIs(t, err, io.ErrClosedPipe)
			case <-time.After(5 * time.Second):
				t.Fatal("Serve did not return on a write error")
			}
			inW.Close()
		})
	}
	t.Run("closed pipe reader", func(t *testing.T) {
		inR, inW := io.Pipe()
		outR, outW := io.Pipe()
		outR.Close()
		done := make(chan error, 1)
		go func() { done <- Serve(context.Background(), inR, outW, NewMux(), Options{}) }()
		_, err := io.WriteString(inW, `{"jsonrpc":"2.0","id":1,"method":"x"}`+"\n")
		require.NoError(t, err)
		assert.ErrorIs(t, <-done, io.ErrClosedPipe)
		inW.Close()
	})
}

// errReader fails with a non-EOF error.
type errReader struct{ err error }

func (r errReader) Read([]byte) (int, error) { return 0, r.err }

func TestServeReadError(t *testing.T) {
	errDisk := errors.New("disk on fire")
	err := Serve(context.Background(), errReader{errDisk}, io.Discard, NewMux(), Options{})
	assert.ErrorIs(t, err, errDisk)
}

func TestServeStdoutOnlyFrames(t *testing.T) {
	// Every byte Serve writes, across all kinds of input, parses as frames.
	var out bytes.Buffer
	in := strings.Join([]string{
		`{"jsonrpc":"2.0","id":1,"method":"echo"}`, `garbage`, `[1]`,
		`{"jsonrpc":"2.0","method":"note"}`, "{\"jsonrpc\":\"2.0\",\"id\":\"\xff\",\"method\":\"x\"}",
		`{"jsonrpc":"2.0","id":2,"method":"panic"}`,
	}, "\n")
	m := NewMux()
	m.Handle("panic", func(context.Context, Request) (any, error) { panic("x") })
	m.Handle("echo", func(context.Context, Request) (any, error) { return 1, nil })
	m.Handle("note", func(context.Context, Request) (any, error) { return 1, nil })
	logs := &syncBuffer{}
	require.NoError(t, Serve(context.Background(), strings.NewReader(in), &out, m, Options{Log: zerolog.New(logs).Level(zerolog.InfoLevel)}))
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	require.Len(t, lines, 5)
	for _, l := range lines {
		var r wireReply
		require.NoError(t, json.Unmarshal([]byte(l), &r), l)
		assert.Equal(t, "2.0", r.JSONRPC)
	}
	assert.NotContains(t, logs.String(), "garbage", "message contents only at debug")
}
