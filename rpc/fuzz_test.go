package rpc_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/rs/zerolog"

	"github.com/hookwire/hookwire/rpc"
)

// The codec fuzz targets feed arbitrary bytes to Serve over a pipe, then a
// valid request, and check what came back:
//   - Serve returns (no hang) with nil at EOF, and never panics;
//   - every frame written is a well-formed JSON-RPC 2.0 response;
//   - every request that reached the dispatcher with an id got exactly one
//     reply, in arrival order; notifications got none;
//   - the request sent after the garbage is answered.
//
// Seeds: f.Add below, and testdata/fuzz/FuzzCodecLine and
// testdata/fuzz/FuzzCodecHeader (real hook calls from recorded OpenCode
// sessions, in each framing).

// fuzzLimit is the message size limit while fuzzing: small, so that the
// "message too large" path is reached by ordinary inputs.
const fuzzLimit = 8 << 10

// fuzzTimeout bounds one input; Serve must have read all of it by then.
const fuzzTimeout = 10 * time.Second

const sentinelBody = `{"jsonrpc":"2.0","id":"fuzz-sentinel","method":"sentinel","params":{"end":true}}`

func FuzzCodecLine(f *testing.F) {
	for _, s := range codecSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		checkCodec(t, rpc.FramingLine, data)
	})
}

func FuzzCodecHeader(f *testing.F) {
	for _, s := range codecSeeds {
		f.Add([]byte(s))
		f.Add(headerFramed(s))
	}
	f.Add([]byte("Content-Length: 5\r\n\r\nab"))
	f.Add([]byte("Content-Length: 99999999999999999999\r\n\r\n{}"))
	f.Add([]byte("Content-Length: 3\r\nContent-Length: 4\r\n\r\n{}}"))
	f.Add([]byte("X-Other: 1\nContent-Length: 2\n\n{}"))
	f.Add([]byte("}Content-Length: 2\r\n\r\n[]"))
	f.Add([]byte("content-length:+2\r\n\r\n[]"))
	f.Add([]byte("Content-Length: 10\r\n\r\n"))
	f.Add([]byte("Content-Type: application/json\r\n" + strings.Repeat("x", 9000) + "\r\n\r\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		checkCodec(t, rpc.FramingHeader, data)
	})
}

// codecSeeds are message streams in line framing; FuzzCodecHeader also
// gets each one header framed line by line.
var codecSeeds = []string{
	"",
	"\n\n \r\n",
	`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}` + "\n" +
		`{"jsonrpc":"2.0","id":2,"method":"status"}` + "\n",
	`{"jsonrpc":"2.0","method":"event","params":{"input":{"event":{"type":"session.deleted","properties":{"sessionID":"ses_1"}}}}}` + "\n",
	`hello there` + "\n",
	`{"jsonrpc":"2.0","id":5,"method":"sta`,
	`[{"jsonrpc":"2.0","id":1,"method":"status"},{"jsonrpc":"2.0","id":2,"method":"status"}]` + "\n",
	`{"jsonrpc":"2.0","id":9}` + "\n",
	`{"jsonrpc":"2.0","id":9,"result":null}` + "\n",
	`{"jsonrpc":"2.0","id":{"a":1},"method":"x"}` + "\n",
	`{"jsonrpc":"2.0","id":1,"id":2,"method":"x"}` + "\n",
	`{"jsonrpc":"1.0","id":1,"method":"x"}` + "\n",
	`{"jsonrpc":"2.0","id":null,"method":"x"}` + "\n",
	`{"jsonrpc":"2.0","id":-1.5e300,"method":"x","params":[1,"two",{"3":null}]}` + "\n",
	`{"jsonrpc":"2.0","id":"\u00e9\ud83d\ude00","method":"\u0000"}` + "\n",
	`{"jsonrpc":"2.0","id":"\ud83d","method":"x","params":["cut \ud83d","\udc00\\ud800"]}` + "\n",
	`{"jsonrpc":"2.0","id":3,"method":"fail.now","params":{}}` + "\n",
	`{"jsonrpc":"2.0","id":4,"method":"panic.now","params":{}}` + "\n",
	`{"jsonrpc":"2.0","method":"panic.quietly"}` + "\n",
	"{\"jsonrpc\":\"2.0\",\"id\":8,\"method\":\"status\",\"params\":{\"s\":\"\xff\xfe\"}}\n",
	`{"jsonrpc":"2.0","id":10,"method":"status","params":` + strings.Repeat("[", 20000) + strings.Repeat("]", 20000) + "}\n",
	`{"jsonrpc":"2.0","id":77,"method":"status","params":{"pad":"` + strings.Repeat("x", fuzzLimit) + `"}}` + "\n",
	`{"jsonrpc":"2.0","id":1,"method":"a"} {"jsonrpc":"2.0","id":2,"method":"b"}` + "\n",
	`{"jsonrpc":"2.0","id":1,"method":"a"}` + "\r\n" + `{"jsonrpc":"2.0","id":2,"method":"b"}`,
}

// headerFramed frames each line of a line-framed stream with headers.
func headerFramed(lines string) []byte {
	var b bytes.Buffer
	for _, line := range strings.Split(lines, "\n") {
		if strings.TrimSpace(line) == "" {
			continue
		}
		fmt.Fprintf(&b, "Content-Length: %d\r\n\r\n%s", len(line), line)
	}
	return b.Bytes()
}

// echoDispatcher answers every request with its sequence number, method and
// params; methods starting "fail" get an *rpc.Error carrying the sequence
// number, methods starting "panic" panic.
type echoDispatcher struct {
	mu    sync.Mutex
	calls []dispatched
}

type dispatched struct {
	seq          int
	method       string
	params       json.RawMessage
	notification bool
}

type echoResult struct {
	Seq    int             `json:"seq"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params,omitempty"`
}

func (d *echoDispatcher) Dispatch(_ context.Context, r rpc.Request) (any, error) {
	method, params, notification := r.Method, r.Params, r.Notification
	d.mu.Lock()
	seq := len(d.calls)
	d.calls = append(d.calls, dispatched{seq, method, bytes.Clone(params), notification})
	d.mu.Unlock()
	switch {
	case strings.HasPrefix(method, "panic"):
		panic("fuzz: deliberate panic")
	case strings.HasPrefix(method, "fail"):
		return nil, &rpc.Error{Code: rpc.CodeInvalidParams, Message: "deliberate failure", Data: map[string]int{"seq": seq}}
	}
	return echoResult{Seq: seq, Method: method, Params: params}, nil
}

func (d *echoDispatcher) snapshot() []dispatched {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]dispatched(nil), d.calls...)
}

// lockedBuffer collects Serve's output; Serve may write from more than one
// goroutine.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (w *lockedBuffer) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(p)
}

func (w *lockedBuffer) Bytes() []byte {
	w.mu.Lock()
	defer w.mu.Unlock()
	return bytes.Clone(w.b.Bytes())
}

func checkCodec(t *testing.T, framing rpc.Framing, garbage []byte) {
	// What follows the garbage: a padding that completes any frame the
	// garbage left open, then the sentinel. In header framing a body the
	// garbage announced swallows the padding; one announced larger than
	// the padding swallows the sentinel too, so the sentinel is then not
	// required to be answered.
	var tail bytes.Buffer
	checkSentinel := true
	var sentinel []byte
	if framing == rpc.FramingHeader {
		declared := maxDeclaredLength(garbage)
		const maxPad = 256 << 10
		if declared > maxPad {
			checkSentinel = false
			declared = 0
		}
		// The padding ends an open header line, ends the headers, fills a
		// body of the declared length, and leaves blank lines.
		tail.WriteString(strings.Repeat("\r\n", int(declared)/2+4))
		sentinel = headerFramed(sentinelBody)
	} else {
		tail.WriteString("\n")
		sentinel = []byte(sentinelBody + "\n")
	}
	tail.Write(sentinel)

	d := &echoDispatcher{}
	out := &lockedBuffer{}
	pr, pw := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	// The writer splits the input at irregular points, so frames cross
	// the reader's chunk boundaries in ever different places.
	go func() {
		input := append(bytes.Clone(garbage), tail.Bytes()...)
		step := 1
		for len(input) > 0 {
			n := min(len(input), step)
			if _, err := pw.Write(input[:n]); err != nil {
				return
			}
			input = input[n:]
			step = step*7%4099 + 1
		}
		pw.Close()
	}()

	served := make(chan error, 1)
	go func() {
		served <- rpc.Serve(ctx, pr, out, d, rpc.Options{
			Framing:         framing,
			MaxMessageBytes: func() int64 { return fuzzLimit },
			Log:             zerolog.Nop(),
		})
	}()
	select {
	case err := <-served:
		if err != nil {
			t.Fatalf("Serve returned %v at EOF, want nil", err)
		}
	case <-time.After(fuzzTimeout):
		cancel()
		pr.CloseWithError(errors.New("fuzz timeout"))
		t.Fatalf("Serve did not finish within %v (hang); output so far: %.2000q", fuzzTimeout, out.Bytes())
	}

	frames, err := splitFrames(framing, out.Bytes())
	if err != nil {
		t.Fatalf("output is not a sequence of %v frames: %v\n%.2000q", framing, err, out.Bytes())
	}
	calls := d.snapshot()
	wantReplies := map[int]dispatched{} // seq → call, for requests with an id
	wantPanics := 0
	for _, c := range calls {
		if c.notification {
			continue
		}
		if strings.HasPrefix(c.method, "panic") {
			wantPanics++
			continue
		}
		wantReplies[c.seq] = c
	}
	lastSeq := -1
	panics := 0
	sentinelAnswered := false
	for i, fr := range frames {
		resp, err := checkResponse(fr)
		if err != nil {
			t.Fatalf("frame %d is not a JSON-RPC 2.0 response: %v\n%q", i, err, fr)
		}
		seq := -1
		switch {
		case resp.Result != nil:
			var r echoResult
			if err := json.Unmarshal(resp.Result, &r); err != nil {
				t.Fatalf("frame %d: result is not the echo: %v\n%q", i, err, fr)
			}
			seq = r.Seq
			c, ok := wantReplies[seq]
			if !ok {
				t.Fatalf("frame %d: reply for seq %d, which was not a pending request\n%q", i, seq, fr)
			}
			if r.Method != c.method {
				t.Fatalf("frame %d: echoed method %q, dispatched %q", i, r.Method, c.method)
			}
			if !sameJSON(r.Params, c.params) {
				t.Fatalf("frame %d: echoed params %s, dispatched %s", i, r.Params, c.params)
			}
			if c.method == "sentinel" && string(resp.ID) == `"fuzz-sentinel"` {
				sentinelAnswered = true
			}
		case resp.Error.Data != nil:
			var data struct {
				Seq *int `json:"seq"`
			}
			if err := json.Unmarshal(resp.Error.Data, &data); err != nil || data.Seq == nil {
				t.Fatalf("frame %d: error data is not ours: %s", i, resp.Error.Data)
			}
			seq = *data.Seq
			if _, ok := wantReplies[seq]; !ok {
				t.Fatalf("frame %d: error reply for seq %d, which was not a pending request\n%q", i, seq, fr)
			}
		case resp.Error.Code == rpc.CodeInternalError:
			panics++
		}
		if seq >= 0 {
			if seq <= lastSeq {
				t.Fatalf("frame %d: reply for seq %d after seq %d: replies out of order or repeated", i, seq, lastSeq)
			}
			lastSeq = seq
			delete(wantReplies, seq)
		}
	}
	if len(wantReplies) > 0 {
		for seq, c := range wantReplies {
			t.Fatalf("request %d (method %q) got no reply (%d unanswered); output:\n%.4000q", seq, c.method, len(wantReplies), out.Bytes())
		}
	}
	if panics != wantPanics {
		t.Fatalf("%d requests panicked but %d -32603 replies were written", wantPanics, panics)
	}
	if checkSentinel && !sentinelAnswered {
		t.Fatalf("the request after the garbage was not answered; output:\n%.4000q", out.Bytes())
	}
}

// maxDeclaredLength over-approximates the largest body length any
// Content-Length header in b could announce: the largest run of digits on
// the rest of a line after "content-length:" (any case).
func maxDeclaredLength(b []byte) int64 {
	lowerB := asciiLower(b)
	var largest int64
	const key = "content-length:"
	for i := 0; ; {
		j := bytes.Index(lowerB[i:], []byte(key))
		if j < 0 {
			return largest
		}
		i += j + len(key)
		rest := b[i:]
		if nl := bytes.IndexByte(rest, '\n'); nl >= 0 {
			rest = rest[:nl]
		}
		for k := 0; k < len(rest); {
			if rest[k] < '0' || rest[k] > '9' {
				k++
				continue
			}
			start := k
			for k < len(rest) && '0' <= rest[k] && rest[k] <= '9' {
				k++
			}
			n, err := strconv.ParseInt(string(rest[start:k]), 10, 64)
			if err != nil {
				return 1 << 62
			}
			largest = maxInt64(largest, n)
		}
	}
}

func maxInt64(a, b int64) int64 {
	if a > b {
		return a
	}
	return b
}

func asciiLower(b []byte) []byte {
	out := make([]byte, len(b))
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		out[i] = c
	}
	return out
}

// splitFrames splits Serve's output into message bodies, strictly: line
// framing is one value per '\n'-terminated line, header framing exactly
// "Content-Length: N\r\n\r\n" and N bytes.
func splitFrames(framing rpc.Framing, out []byte) ([][]byte, error) {
	var frames [][]byte
	if framing == rpc.FramingLine {
		if len(out) > 0 && out[len(out)-1] != '\n' {
			return nil, errors.New("output does not end with a newline")
		}
		for _, line := range bytes.Split(out, []byte{'\n'}) {
			if len(line) > 0 {
				frames = append(frames, line)
			}
		}
		return frames, nil
	}
	r := bufio.NewReader(bytes.NewReader(out))
	for {
		line, err := r.ReadString('\n')
		if err == io.EOF && line == "" {
			return frames, nil
		}
		if err != nil {
			return nil, fmt.Errorf("header line: %w", err)
		}
		v, ok := strings.CutPrefix(line, "Content-Length: ")
		if !ok || !strings.HasSuffix(v, "\r\n") {
			return nil, fmt.Errorf("bad header line %q", line)
		}
		n, err := strconv.Atoi(strings.TrimSuffix(v, "\r\n"))
		if err != nil || n < 0 {
			return nil, fmt.Errorf("bad Content-Length in %q", line)
		}
		if blank, err := r.ReadString('\n'); err != nil || blank != "\r\n" {
			return nil, fmt.Errorf("header not ended by a blank line: %q", blank)
		}
		body := make([]byte, n)
		if _, err := io.ReadFull(r, body); err != nil {
			return nil, fmt.Errorf("body shorter than its Content-Length: %w", err)
		}
		frames = append(frames, body)
	}
}

type wireResponse struct {
	ID     json.RawMessage
	Result json.RawMessage
	Error  *struct {
		Code    int64           `json:"code"`
		Message string          `json:"message"`
		Data    json.RawMessage `json:"data"`
	}
}

var knownCodes = map[int64]bool{
	rpc.CodeParseError: true, rpc.CodeInvalidRequest: true, rpc.CodeMethodNotFound: true,
	rpc.CodeInvalidParams: true, rpc.CodeInternalError: true, rpc.CodeNotInitialized: true,
}

// checkResponse checks that b is one JSON-RPC 2.0 response object: valid
// UTF-8 JSON, "jsonrpc":"2.0", an id that is a string, number or null, and
// exactly one of result and error (an error with a known integer code and
// a string message), nothing else.
func checkResponse(b []byte) (wireResponse, error) {
	var resp wireResponse
	if !utf8.Valid(b) {
		return resp, errors.New("invalid UTF-8")
	}
	if !json.Valid(b) {
		return resp, errors.New("invalid JSON")
	}
	var members map[string]json.RawMessage
	if err := json.Unmarshal(b, &members); err != nil {
		return resp, fmt.Errorf("not an object: %w", err)
	}
	if string(members["jsonrpc"]) != `"2.0"` {
		return resp, fmt.Errorf(`"jsonrpc" is %s, want "2.0"`, members["jsonrpc"])
	}
	id, ok := members["id"]
	if !ok {
		return resp, errors.New("no id")
	}
	switch id[0] {
	case '"', 'n', '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
	default:
		return resp, fmt.Errorf("id %s is not a string, number or null", id)
	}
	resp.ID = id
	result, hasResult := members["result"]
	rawErr, hasError := members["error"]
	if hasResult == hasError {
		return resp, errors.New("want exactly one of result and error")
	}
	for name := range members {
		switch name {
		case "jsonrpc", "id", "result", "error":
		default:
			return resp, fmt.Errorf("unexpected member %q", name)
		}
	}
	if hasResult {
		resp.Result = result
		return resp, nil
	}
	var e map[string]json.RawMessage
	if err := json.Unmarshal(rawErr, &e); err != nil {
		return resp, fmt.Errorf("error is not an object: %w", err)
	}
	var code int64
	if err := json.Unmarshal(e["code"], &code); err != nil {
		return resp, fmt.Errorf("error code %s is not an integer", e["code"])
	}
	if !knownCodes[code] {
		return resp, fmt.Errorf("error code %d is not one of PROTOCOL.md 8", code)
	}
	var msg string
	if err := json.Unmarshal(e["message"], &msg); err != nil || msg == "" {
		return resp, fmt.Errorf("error message %s is not a non-empty string", e["message"])
	}
	if err := json.Unmarshal(rawErr, &resp.Error); err != nil {
		return resp, err
	}
	return resp, nil
}

// sameJSON reports whether a and b hold the same JSON value (nil and
// absent are the same).
func sameJSON(a, b json.RawMessage) bool {
	if len(a) == 0 || len(b) == 0 {
		return len(bytes.TrimSpace(a)) == len(bytes.TrimSpace(b))
	}
	va, errA := decodeAny(a)
	vb, errB := decodeAny(b)
	return errA == nil && errB == nil && reflect.DeepEqual(va, vb)
}

func decodeAny(b []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	err := dec.Decode(&v)
	return v, err
}
