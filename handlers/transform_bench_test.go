package handlers_test

// Benchmarks behind `make bench` (scripts/bench.sh). The large-history ones
// compare the sidecar's chat.messages.transform with encoding/json decoding
// the same bytes into any, round by round (A B A B), so the ratio holds on
// a noisy machine; scripts/bench/summary.mjs takes the median per-round ratio.
//
// The histories come from scripts/bench/gen.mjs: from the files in
// $HOOKWIRE_BENCH_HISTORIES (history-1MB.json, history-5MB.json) when set,
// else by running node. $HOOKWIRE_BENCH_ROUNDS sets the rounds (default 3).

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"testing"

	"github.com/rs/zerolog"

	"github.com/hookwire/hookwire/handlers"
	"github.com/hookwire/hookwire/rpc"
)

var historySizes = []struct {
	name  string
	bytes int
}{{"1MB", 1 << 20}, {"5MB", 5 << 20}}

var (
	historiesMu sync.Mutex
	histories   = map[string][]byte{}
)

// history returns the chat.messages.transform params of one size.
func history(b *testing.B, name string, size int) []byte {
	return generatedHistory(b, name, strconv.Itoa(size))
}

// generatedHistory returns the params gen.mjs writes for args (a size,
// with --text the text-heavy shape), whole, named name: from
// HOOKWIRE_BENCH_HISTORIES (make bench writes them there) or made now,
// once per name.
func generatedHistory(b *testing.B, name string, args ...string) []byte {
	b.Helper()
	historiesMu.Lock()
	defer historiesMu.Unlock()
	if h, ok := histories[name]; ok {
		return h
	}
	var h []byte
	var err error
	if dir := os.Getenv("HOOKWIRE_BENCH_HISTORIES"); dir != "" {
		h, err = os.ReadFile(filepath.Join(dir, "history-"+name+".json"))
	} else {
		cmd := exec.Command("node", append([]string{filepath.Join("..", "scripts", "bench", "gen.mjs")}, args...)...)
		cmd.Stderr = os.Stderr
		h, err = cmd.Output()
	}
	if err != nil {
		b.Skipf("no %s history (set HOOKWIRE_BENCH_HISTORIES or install node): %v", name, err)
	}
	histories[name] = h
	return h
}

func rounds() int {
	if n, err := strconv.Atoi(os.Getenv("HOOKWIRE_BENCH_ROUNDS")); err == nil && n > 0 {
		return n
	}
	return 3
}

// newServer returns an initialized server with the default config.
func newServer(b *testing.B) *handlers.Server {
	b.Helper()
	srv := handlers.New(handlers.Options{Version: "bench", Log: zerolog.Nop()})
	if _, err := srv.Dispatch(context.Background(), rpc.Request{Method: "initialize", Params: json.RawMessage(`{"protocolVersion":1}`)}); err != nil {
		b.Fatalf("initialize: %v", err)
	}
	return srv
}

// BenchmarkLargeHistory measures, per size and round: encoding/json
// decoding the params into any (the reference), the sidecar's
// chat.messages.transform handler on the raw params (Dispatch), and the
// whole Go path: a request line through rpc.Serve over io.Pipe to its
// reply line.
func BenchmarkLargeHistory(b *testing.B) {
	for _, size := range historySizes {
		raw := history(b, size.name, size.bytes)
		for r := 1; r <= rounds(); r++ {
			prefix := fmt.Sprintf("%s/round=%d/", size.name, r)
			b.Run(prefix+"decode-any", func(b *testing.B) { benchDecodeAny(b, raw) })
			b.Run(prefix+"transform", func(b *testing.B) { benchTransform(b, raw) })
			b.Run(prefix+"serve", func(b *testing.B) { benchServe(b, "chat.messages.transform", func(int) []byte { return raw }) })
		}
	}
}

func benchDecodeAny(b *testing.B, raw []byte) {
	b.SetBytes(int64(len(raw)))
	b.ReportAllocs()
	for b.Loop() {
		var v any
		if err := json.Unmarshal(raw, &v); err != nil {
			b.Fatal(err)
		}
	}
}

func benchTransform(b *testing.B, raw []byte) {
	srv := newServer(b)
	ctx := context.Background()
	res, err := srv.Dispatch(ctx, rpc.Request{Method: "chat.messages.transform", Params: raw})
	if err != nil {
		b.Fatalf("chat.messages.transform: %v", err)
	}
	if p, ok := res.(handlers.PatchResult); !ok || len(p.Patch) == 0 {
		b.Fatalf("chat.messages.transform did no work: %#v", res)
	}
	b.SetBytes(int64(len(raw)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := srv.Dispatch(ctx, rpc.Request{Method: "chat.messages.transform", Params: raw}); err != nil {
			b.Fatal(err)
		}
	}
}

// smallCalls are 500 B tool.execute.before params from a managed session:
// task calls to explorer, each with its own callID, so the store remembers
// them (it keeps the newest 100 pending calls). They are built up front so
// that formatting them is not timed.
var smallCalls = func() [][]byte {
	const pad = "Look through the repository and list the packages, their responsibilities and how requests flow between them; report file paths."
	calls := make([][]byte, 1024)
	for i := range calls {
		calls[i] = fmt.Appendf(nil, `{"input":{"tool":"task","sessionID":"ses_b","callID":"call_%d"},"output":{"args":{"description":"Explore the repo","prompt":%q,"subagent_type":"explorer"}}}`, i, pad+" "+pad+" "+pad[:24])
	}
	return calls
}()

func smallCall(i int) []byte { return smallCalls[i%len(smallCalls)] }

// BenchmarkSmallCall is the 500 B tool.execute.before, through Dispatch and
// through rpc.Serve over io.Pipe, for profiling the small round trip.
func BenchmarkSmallCall(b *testing.B) {
	b.Run("dispatch", func(b *testing.B) {
		srv := newServer(b)
		ctx := context.Background()
		managedSession(b, srv.Dispatch)
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			i++
			if _, err := srv.Dispatch(ctx, rpc.Request{Method: "tool.execute.before", Params: smallCall(i)}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("serve", func(b *testing.B) { benchServe(b, "tool.execute.before", smallCall) })
}

const chatMessage = `{"input":{"sessionID":"ses_b","agent":"orchestrator"},"output":{"message":{"agent":"orchestrator"}}}`

func managedSession(b *testing.B, dispatch func(context.Context, rpc.Request) (any, error)) {
	b.Helper()
	if _, err := dispatch(context.Background(), rpc.Request{Method: "chat.message", Params: json.RawMessage(chatMessage)}); err != nil {
		b.Fatalf("chat.message: %v", err)
	}
}

// benchServe sends method with params(i) as request lines to rpc.Serve
// over io.Pipe and waits for each reply line.
func benchServe(b *testing.B, method string, params func(i int) []byte) {
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	srv := handlers.New(handlers.Options{Version: "bench", Log: zerolog.Nop()})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- rpc.Serve(ctx, inR, outW, srv, rpc.Options{MaxMessageBytes: srv.MaxMessageBytes, Log: zerolog.Nop()})
	}()
	defer func() {
		cancel()
		inW.Close()
		outR.Close()
		<-done
	}()
	replies := bufio.NewReaderSize(outR, 64<<10)
	id := 0
	var line []byte // reused, so the client's copy of a large request is not counted
	call := func(method string, params []byte) []byte {
		id++
		line = fmt.Appendf(line[:0], `{"jsonrpc":"2.0","id":%d,"method":%q,"params":`, id, method)
		line = append(append(line, params...), "}\n"...)
		if _, err := inW.Write(line); err != nil {
			b.Fatalf("writing request: %v", err)
		}
		reply, err := replies.ReadBytes('\n')
		if err != nil {
			b.Fatalf("reading reply: %v", err)
		}
		if bytes.Contains(reply, []byte(`"error":`)) {
			b.Fatalf("%s failed: %.300s", method, reply)
		}
		return reply
	}
	call("initialize", []byte(`{"protocolVersion":1}`))
	call("chat.message", []byte(chatMessage))
	call(method, params(0))
	size := len(params(0))
	b.SetBytes(int64(size))
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		i++
		call(method, params(i))
	}
}

// BenchmarkIncremental is the incremental form (PROTOCOL.md 4.6) of a
// history grown by one message, through Dispatch: each iteration is the
// request that adds the last message to a base of n-1, and the one that
// takes it back off (a revert), so the base alternates between the two.
// The -cold variants evict the caches before each request (untimed), as
// the seconds OpenCode waits for the model do in the real process; run
// them with a fixed -benchtime (e.g. 300x), as each eviction takes
// milliseconds. The params are marked valid JSON, as rpc.Serve marks
// every request it hands on, so the strings the handler skips are pruned
// as in the real process.
func BenchmarkIncremental(b *testing.B) {
	for _, size := range historySizes {
		raw := history(b, size.name, size.bytes)
		var full struct {
			Input  json.RawMessage `json:"input"`
			Output struct {
				Messages []json.RawMessage `json:"messages"`
			} `json:"output"`
		}
		if err := json.Unmarshal(raw, &full); err != nil {
			b.Fatal(err)
		}
		msgs := full.Output.Messages
		for _, cold := range []bool{false, true} {
			name := size.name
			if cold {
				name += "-cold"
			}
			b.Run(name, func(b *testing.B) { benchIncremental(b, full.Input, msgs, cold) })
		}
	}
}

// evictBuffer is larger than the last level cache of the machines we
// measure on (32 MiB); touching every line of it evicts what a request
// left there.
var evictBuffer []byte

func evictCaches() {
	if evictBuffer == nil {
		evictBuffer = make([]byte, 64<<20)
	}
	for i := 0; i < len(evictBuffer); i += 64 {
		evictBuffer[i]++
	}
}

func benchIncremental(b *testing.B, input json.RawMessage, msgs []json.RawMessage, cold bool) {
	n := len(msgs)
	srv := newServer(b)
	ctx := context.Background()
	managedSession(b, srv.Dispatch)
	call := func(params []byte) string {
		res, err := srv.Dispatch(ctx, rpc.Request{Method: "chat.messages.transform", Params: params, Validated: true})
		if err != nil {
			b.Fatalf("chat.messages.transform: %v", err)
		}
		out, err := json.Marshal(res)
		if err != nil {
			b.Fatal(err)
		}
		var r struct {
			Base string `json:"base"`
		}
		if err := json.Unmarshal(out, &r); err != nil || r.Base == "" {
			b.Fatalf("no base in %.300s", out)
		}
		return r.Base
	}
	first, _ := json.Marshal(map[string]any{"input": input, "output": map[string]any{"messages": msgs[:n-1]}, "sync": map[string]any{"session": "ses_b"}})
	short := call(first)
	grow := func(base string) []byte {
		p, _ := json.Marshal(map[string]any{"input": json.RawMessage(`{}`), "sync": map[string]any{"session": "ses_b", "base": base, "reapply": true,
			"messages": []any{map[string]int{"keep": 0, "count": n - 1}, map[string]any{"message": msgs[n-1]}}}})
		return p
	}
	shrink := func(base string) []byte {
		p, _ := json.Marshal(map[string]any{"input": json.RawMessage(`{}`), "sync": map[string]any{"session": "ses_b", "base": base, "reapply": true,
			"messages": []any{map[string]int{"keep": 0, "count": n - 1}}}})
		return p
	}
	long := call(grow(short))
	up, down := grow(short), shrink(long)
	if got := call(down); got != short {
		b.Fatalf("shrink gave base %s, want %s", got, short)
	}
	b.ReportAllocs()
	dispatch := func(params []byte) {
		if cold {
			b.StopTimer()
			evictCaches()
			b.StartTimer()
		}
		if _, err := srv.Dispatch(ctx, rpc.Request{Method: "chat.messages.transform", Params: params, Validated: true}); err != nil {
			b.Fatal(err)
		}
	}
	b.ResetTimer()
	for range b.N {
		dispatch(up)
		dispatch(down)
	}
}
