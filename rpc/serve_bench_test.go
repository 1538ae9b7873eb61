package rpc

import (
	"context"
	"io"
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
