package main

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hookwire/hookwire/transcript"
)

// BenchmarkReplay is `hookwire replay` of transcripts of 25,000 and
// 100,000 steps (hook calls of about 1 KB and their replies, written as
// -update writes them), against the plain build over pipes ("process":
// what the command does) and against the server in this process
// ("in-process"). Replay is linear in the file when ns/step stays flat
// across the sizes: the 100k run then takes about 4 times the 25k run.
// cpu-ns/step counts the CPU time of this process and the sidecars it
// ran (user + system), which load moves less than wall time.
// Compare the rows of one run; the machine's load moves them all.
func BenchmarkReplay(b *testing.B) {
	targets := []struct {
		name   string
		target func(b *testing.B) transcript.Target
	}{
		{"process", func(b *testing.B) transcript.Target { return transcript.Process{Bin: buildPlain(b)} }},
		{"in-process", func(*testing.B) transcript.Target { return transcript.InProcess(serveInProcess) }},
	}
	dir := b.TempDir()
	for _, tg := range targets {
		for _, steps := range []int{25_000, 100_000} {
			path := filepath.Join(dir, fmt.Sprintf("steps-%d.json", steps))
			b.Run(fmt.Sprintf("%s/steps=%d", tg.name, steps), func(b *testing.B) {
				writeBenchTranscript(b, path, steps)
				target := tg.target(b)
				b.ResetTimer()
				cpu := cpuTime()
				for b.Loop() {
					_, diffs, err := transcript.ReplayFile(path, target, transcript.ReplayOptions{})
					require.NoError(b, err)
					require.Empty(b, diffs)
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*steps), "ns/step")
				b.ReportMetric(float64((cpuTime()-cpu).Nanoseconds())/float64(b.N*steps), "cpu-ns/step")
			})
		}
	}
}

// writeBenchTranscript writes a transcript of steps steps at path, once:
// an initialize, then tool.execute.before calls of about 1 KB (a tool the
// hook leaves alone) and their replies.
func writeBenchTranscript(b *testing.B, path string, steps int) {
	b.Helper()
	if _, err := transcript.ReadFile(path); err == nil {
		return
	}
	pad := strings.Repeat("0123456789abcdef", 56)
	all := []transcript.Step{
		{Send: []byte(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1}}`)},
		{Recv: []byte(`{"jsonrpc":"2.0","id":0,"result":"<any>"}`)},
	}
	for id := 1; len(all) < steps; id++ {
		all = append(all,
			transcript.Step{Send: fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%d,"method":"tool.execute.before","params":`+
				`{"input":{"tool":"read","sessionID":"ses_bench","callID":"call_%d"},"output":{"args":{"filePath":"/src/%d.go","note":"%s"}}}}`, id, id, id, pad)},
			transcript.Step{Recv: fmt.Appendf(nil, `{"id":%d,"jsonrpc":"2.0","result":{"patch":[]}}`, id)})
	}
	require.NoError(b, transcript.WriteFile(path, all[:steps]))
}
