package rpc

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/rs/zerolog"
)

// countReader returns line and '\n' n times, then EOF.
type countReader struct {
	loopReader
	left int
}

func (r *countReader) Read(p []byte) (int, error) {
	if r.left == 0 {
		return 0, io.EOF
	}
	n := 0
	for n < len(p) && r.left > 0 {
		if r.off == len(r.line) {
			p[n] = '\n'
			n++
			r.off = 0
			r.left--
			continue
		}
		c := copy(p[n:], r.line[r.off:])
		n += c
		r.off += c
	}
	return n, nil
}

type smallResult struct {
	Patch []any `json:"patch"`
}

type benchDispatcher struct{}

func (benchDispatcher) Dispatch(context.Context, Request) (any, error) {
	return smallResult{Patch: []any{}}, nil
}

// BenchmarkServeSmall is a small hook call through the whole transport:
// framing, the scan, dispatch, and the reply's encoding.
func BenchmarkServeSmall(b *testing.B) {
	line := []byte(`{"jsonrpc":"2.0","id":7,"method":"tool.execute.before","params":{"input":{"tool":"task","sessionID":"ses_1","callID":"call_1"},"output":{"args":{"description":"look around","prompt":"find the config loader","subagent_type":"explorer"}}}}`)
	b.ReportAllocs()
	defer reportCPU(b)()
	b.ResetTimer()
	in := &countReader{loopReader: loopReader{line: line}, left: b.N}
	if err := Serve(context.Background(), in, io.Discard, benchDispatcher{}, Options{Framing: FramingLine, Log: zerolog.Nop()}); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkScanRequest is the scan of one chat.messages.transform request
// line of a 1 MB and a 5 MB history ($HOOKWIRE_BENCH_HISTORIES, from
// scripts/bench/gen.mjs; skipped without it): jsontext's scan alone (the
// decoder's, decodeSlow) and decode (the fast scan), round by round.
func BenchmarkScanRequest(b *testing.B) {
	dir := os.Getenv("HOOKWIRE_BENCH_HISTORIES")
	if dir == "" {
		b.Skip("set HOOKWIRE_BENCH_HISTORIES to the directory of gen.mjs --out")
	}
	rounds, err := strconv.Atoi(os.Getenv("HOOKWIRE_BENCH_ROUNDS"))
	if err != nil || rounds <= 0 {
		rounds = 3
	}
	for _, size := range []string{"1MB", "5MB"} {
		params, err := os.ReadFile(filepath.Join(dir, "history-"+size+".json"))
		if err != nil {
			b.Skip(err)
		}
		line := append(append([]byte(`{"jsonrpc":"2.0","id":1,"method":"chat.messages.transform","params":`), params...), '}')
		for r := 1; r <= rounds; r++ {
			for _, v := range []struct {
				name   string
				decode func(*decoder, []byte) message
			}{{"jsontext", (*decoder).decodeSlow}, {"scan", (*decoder).decode}} {
				b.Run(fmt.Sprintf("%s/round=%d/%s", size, r, v.name), func(b *testing.B) {
					var d decoder
					b.SetBytes(int64(len(line)))
					b.ReportAllocs()
					defer reportCPU(b)()
					for b.Loop() {
						if m := v.decode(&d, line); m.kind != kindRequest {
							b.Fatalf("not a request: %+v", m.reply)
						}
					}
				})
			}
		}
	}
}
