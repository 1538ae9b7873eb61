package transcript

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/rs/zerolog"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hookwire/hookwire/handlers"
	"github.com/hookwire/hookwire/rpc"
)

// recordOptions are the options serve --record gives, with handlers'
// redaction when redact is set.
func recordOptions(redact bool, log zerolog.Logger) RecordOptions {
	opts := RecordOptions{Heading: "recorded by hookwire test", Log: log}
	if redact {
		opts.Redact = handlers.RedactParams
	}
	return opts
}

// memFile is a recording's file in memory; fail makes every write fail.
type memFile struct {
	mu     sync.Mutex
	buf    bytes.Buffer
	fail   error
	writes int
	closed bool
}

func (f *memFile) Write(p []byte) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.writes++
	if f.fail != nil {
		return 0, f.fail
	}
	return f.buf.Write(p)
}

func (f *memFile) Close() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.closed = true
	return nil
}

// compactSteps parses a recording and returns each step compacted, the
// heading note left out.
func compactSteps(t *testing.T, data []byte) []string {
	t.Helper()
	steps, err := Parse(data)
	require.NoError(t, err, "the recording reads as a transcript:\n%s", data)
	require.NotEmpty(t, steps)
	require.Contains(t, steps[0].Note, "recorded by hookwire")
	var out []string
	for _, st := range steps[1:] {
		var b bytes.Buffer
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(false)
		require.NoError(t, enc.Encode(st))
		out = append(out, string(bytes.TrimSpace(b.Bytes())))
	}
	return out
}

func TestRecorderSteps(t *testing.T) {
	type ev struct {
		kind byte // 'r' read, 'w' wrote, 's' skipped, 'l' loaded
		data string
	}
	tests := []struct {
		name   string
		redact bool
		events []ev
		want   []string
	}{
		{
			name: "a call and its reply, a notification",
			events: []ev{
				{'r', `{"jsonrpc":"2.0","id":1,"method":"m","params":{"a":"b"}}`},
				{'w', `{"id":1,"result":{"z":1,"a":2},"jsonrpc":"2.0"}`},
				{'r', `{"jsonrpc":"2.0","method":"exit"}`},
			},
			want: []string{
				`{"send":{"jsonrpc":"2.0","id":1,"method":"m","params":{"a":"b"}}}`,
				`{"recv":{"id":1,"result":{"z":1,"a":2},"jsonrpc":"2.0"}}`,
				`{"send":{"jsonrpc":"2.0","method":"exit"}}`,
			},
		},
		{
			name: "the store as loaded goes before the initialize that loaded it",
			events: []ev{
				{'r', `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}`},
				{'l', `{"version":1,"parents":[]}`},
				{'w', `{"id":1,"result":{"serverInfo":{"name":"hookwire","version":"1.2.3"}},"jsonrpc":"2.0"}`},
			},
			want: []string{
				`{"state":{"version":1,"parents":[]}}`,
				`{"send":{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}}`,
				`{"recv":{"id":1,"jsonrpc":"2.0","result":{"serverInfo":{"name":"hookwire","version":"<any>"}}}}`,
			},
		},
		{
			name: "status and sessions.list figures that vary are <any>; counts are kept",
			events: []ev{
				{'r', `{"jsonrpc":"2.0","id":2,"method":"status"}`},
				{'w', `{"id":2,"result":{"version":"v","uptimeSeconds":1.5,"requests":{"status":1},"errors":0,"memory":{"heapAllocBytes":1},"state":"persistent: /x","stateFile":{"mode":"persistent","path":"/x"},"store":{"parents":1}},"jsonrpc":"2.0"}`},
				{'r', `{"jsonrpc":"2.0","id":3,"method":"sessions.list","params":{}}`},
				{'w', `{"id":3,"result":[{"alias":"explorer-1","lastUse":"2026-01-01T00:00:00Z"},{"alias":"explorer-2","lastUse":"2026-01-02T00:00:00Z"}],"jsonrpc":"2.0"}`},
			},
			want: []string{
				`{"send":{"jsonrpc":"2.0","id":2,"method":"status"}}`,
				`{"recv":{"id":2,"jsonrpc":"2.0","result":{"errors":0,"memory":"<any>","requests":{"status":1},"state":"<any>","stateFile":"<any>","store":{"parents":1},"uptimeSeconds":"<any>","version":"<any>"}}}`,
				`{"send":{"jsonrpc":"2.0","id":3,"method":"sessions.list","params":{}}}`,
				`{"recv":{"id":3,"jsonrpc":"2.0","result":[{"alias":"explorer-1","lastUse":"<any>"},{"alias":"explorer-2","lastUse":"<any>"}]}}`,
			},
		},
		{
			name: "a notification the sidecar sends on its own (cache.bust) is not recorded, and the awaited reply is still the next",
			events: []ev{
				{'r', `{"jsonrpc":"2.0","method":"event","params":{}}`},
				{'r', `{"jsonrpc":"2.0","id":5,"method":"status"}`},
				{'w', `{"jsonrpc":"2.0","method":"cache.bust","params":{"session":"ses_1","bustsInARow":2}}`},
				{'w', `{"id":5,"result":{"version":"v","errors":0},"jsonrpc":"2.0"}`},
			},
			want: []string{
				`{"send":{"jsonrpc":"2.0","method":"event","params":{}}}`,
				`{"send":{"jsonrpc":"2.0","id":5,"method":"status"}}`,
				`{"recv":{"id":5,"jsonrpc":"2.0","result":{"errors":0,"version":"<any>"}}}`,
			},
		},
		{
			name: "skipped input: a note, and its error reply is left out",
			events: []ev{
				{'s', "message over the size limit"},
				{'w', `{"id":null,"error":{"code":-32600,"message":"too large"},"jsonrpc":"2.0"}`},
				{'r', `{"jsonrpc":"2.0","id":4,"method":"m"}`},
				{'w', `{"id":4,"result":null,"jsonrpc":"2.0"}`},
			},
			want: []string{
				`{"note":"here the sidecar skipped input (message over the size limit); it and its error reply are left out"}`,
				`{"send":{"jsonrpc":"2.0","id":4,"method":"m"}}`,
				`{"recv":{"id":4,"result":null,"jsonrpc":"2.0"}}`,
			},
		},
		{
			name: "unreadable input is kept byte for byte without redaction",
			events: []ev{
				{'r', `{"jsonrpc":"2.0","id":5,`},
				{'w', `{"id":null,"error":{"code":-32700,"message":"parse error"},"jsonrpc":"2.0"}`},
				{'r', `{"jsonrpc":"2.0","id":6,"method":"m","params":"\ud800"}`},
				{'w', `{"id":6,"result":"\ufffd","jsonrpc":"2.0"}`},
			},
			want: []string{
				`{"sendRaw":"{\"jsonrpc\":\"2.0\",\"id\":5,\n"}`,
				`{"recv":{"id":null,"error":{"code":-32700,"message":"parse error"},"jsonrpc":"2.0"}}`,
				`{"sendRaw":"{\"jsonrpc\":\"2.0\",\"id\":6,\"method\":\"m\",\"params\":\"\\ud800\"}\n"}`,
				`{"recv":{"id":6,"result":"�","jsonrpc":"2.0"}}`,
			},
		},
		{
			name:   "with redaction, unreadable input and its reply are left out",
			redact: true,
			events: []ev{
				{'r', `{"jsonrpc":"2.0","id":5,"method":"chat.messages.transform","params":{"output":"secret`},
				{'w', `{"id":5,"error":{"code":-32700,"message":"parse error"},"jsonrpc":"2.0"}`},
			},
			want: []string{
				`{"note":"a message is left out here: the sidecar could not read a message, so it could not be redacted"}`,
			},
		},
		{
			name: "a response from the client is kept; no reply follows it",
			events: []ev{
				{'r', `{"jsonrpc":"2.0","id":9,"result":{"a":1}}`},
				{'r', `{"jsonrpc":"2.0","id":10,"method":"m"}`},
				{'w', `{"id":10,"result":null,"jsonrpc":"2.0"}`},
			},
			want: []string{
				`{"send":{"jsonrpc":"2.0","id":9,"result":{"a":1}}}`,
				`{"send":{"jsonrpc":"2.0","id":10,"method":"m"}}`,
				`{"recv":{"id":10,"result":null,"jsonrpc":"2.0"}}`,
			},
		},
		{
			name:   "with redaction, a response from the client is left out, and the next reply kept",
			redact: true,
			events: []ev{
				{'r', `{"jsonrpc":"2.0","id":9,"result":{"secret":"x"}}`},
				{'r', `{"jsonrpc":"2.0","id":10,"method":"m"}`},
				{'w', `{"id":10,"result":null,"jsonrpc":"2.0"}`},
			},
			want: []string{
				`{"note":"a message is left out here: a response from the client, which the sidecar ignores, is not redacted"}`,
				`{"send":{"jsonrpc":"2.0","id":10,"method":"m"}}`,
				`{"recv":{"id":10,"result":null,"jsonrpc":"2.0"}}`,
			},
		},
		{
			name:   "with redaction, what the transform never reads is masked at its length",
			redact: true,
			events: []ev{
				{'r', `{"jsonrpc":"2.0","id":7,"method":"chat.messages.transform","params":{"input":{},"output":{"messages":[{"info":{"role":"user"},"parts":[{"type":"text","text":"keep me"},{"type":"tool","tool":"read","state":{"status":"completed","output":"secret file","input":{"filePath":"/etc/x"}}}]}]}}}`},
				{'w', `{"id":7,"result":{"patch":[]},"jsonrpc":"2.0"}`},
				{'r', `{"jsonrpc":"2.0","id":8,"method":"tool.execute.after","params":{"input":{"tool":"task","callID":"c"},"output":{"output":"task_id: ses_1"}}}`},
			},
			want: []string{
				`{"send":{"jsonrpc":"2.0","id":7,"method":"chat.messages.transform","params":{"input":{},"output":{"messages":[{"info":{"role":"user"},"parts":[{"type":"text","text":"keep me"},{"type":"tool","tool":"read","state":{"status":"completed","output":"***********","input":{"********":"******"}}}]}]}}}}`,
				`{"recv":{"id":7,"result":{"patch":[]},"jsonrpc":"2.0"}}`,
				`{"send":{"jsonrpc":"2.0","id":8,"method":"tool.execute.after","params":{"input":{"tool":"task","callID":"c"},"output":{"output":"task_id: ses_1"}}}}`,
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := &memFile{}
			r := NewRecorder(f, recordOptions(tt.redact, zerolog.Nop()))
			for _, e := range tt.events {
				switch e.kind {
				case 'r':
					r.Read([]byte(e.data))
				case 'w':
					r.Wrote([]byte(e.data))
				case 's':
					r.Skipped(e.data)
				case 'l':
					r.Loaded([]byte(e.data))
				}
			}
			r.Close()
			require.True(t, f.closed)
			assert.Equal(t, tt.want, compactSteps(t, f.buf.Bytes()))
		})
	}
}

func TestRecorderRedactionKeepsLengths(t *testing.T) {
	msg := `{"jsonrpc":"2.0","id":1,"method":"chat.messages.transform","params":{"input":{"sessionID":"ses_1"},"output":{"messages":[` +
		`{"info":{"id":"m","role":"assistant","time":{"created":1}},"parts":[{"type":"tool","tool":"bash","state":{"status":"completed",` +
		`"output":"line one\nline \"two\" \u00e9 ✓","metadata":{"diff":["a","b"]},"title":"run it"}}]}]}}}`
	f := &memFile{}
	r := NewRecorder(f, recordOptions(true, zerolog.Nop()))
	r.Read([]byte(msg))
	r.Close()
	steps, err := Parse(f.buf.Bytes())
	require.NoError(t, err)
	require.Len(t, steps, 2)
	sent := string(compact(steps[1].Send))
	assert.Len(t, sent, len(msg), "the redacted message has the length of the message")
	// The transform reads nothing of its input and of info.time: names go too.
	for _, gone := range []string{"line one", "two", "run it", `"a"`, "ses_1", "sessionID", "created", "diff"} {
		assert.NotContains(t, sent, gone)
	}
	for _, kept := range []string{`"id":"m"`, `"role":"assistant"`, `"tool":"bash"`, `"status":"completed"`} {
		assert.Contains(t, sent, kept)
	}
}

func TestRecorderFailingFileLogsOnceAndStops(t *testing.T) {
	for _, fail := range []error{syscall.ENOSPC, os.ErrClosed} {
		t.Run(fail.Error(), func(t *testing.T) {
			f := &memFile{fail: fail}
			var logs lockedBuffer
			r := NewRecorder(f, recordOptions(false, zerolog.New(&logs).Level(zerolog.WarnLevel)))
			for range 50 {
				r.Read([]byte(`{"jsonrpc":"2.0","id":1,"method":"m"}`))
				r.Wrote([]byte(`{"id":1,"result":null,"jsonrpc":"2.0"}`))
			}
			r.Close()
			assert.Equal(t, 1, strings.Count(logs.String(), "recording stopped"), logs.String())
			assert.Contains(t, logs.String(), fail.Error())
			assert.LessOrEqual(t, f.writes, 2, "no write after the failure is logged") // the failing one, and none after
			assert.True(t, f.closed)
		})
	}
}

func TestCreateRecording(t *testing.T) {
	old := syscall.Umask(0)
	defer syscall.Umask(old)
	dir := t.TempDir()
	tests := []struct {
		name     string
		existing []string
		path     string
		want     string
	}{
		{"a new file", nil, "rec.json", "rec.json"},
		{"an existing file is never written over", []string{"s.json"}, "s.json", "s-2.json"},
		{"the first free number", []string{"t.json", "t-2.json"}, "t.json", "t-3.json"},
		{"no extension", []string{"u"}, "u", "u-2"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, e := range tt.existing {
				require.NoError(t, os.WriteFile(filepath.Join(dir, e), []byte("old"), 0o644))
			}
			f, err := CreateRecording(filepath.Join(dir, tt.path))
			require.NoError(t, err)
			defer f.Close()
			assert.Equal(t, filepath.Join(dir, tt.want), f.Name())
			fi, err := f.Stat()
			require.NoError(t, err)
			assert.Equal(t, os.FileMode(0o600), fi.Mode().Perm())
			for _, e := range tt.existing {
				b, err := os.ReadFile(filepath.Join(dir, e))
				require.NoError(t, err)
				assert.Equal(t, "old", string(b))
			}
		})
	}
	_, err := CreateRecording(filepath.Join(dir, "missing", "r.json"))
	assert.Error(t, err)
}

func TestStateFile(t *testing.T) {
	path, cleanup, err := stateFile([]Step{{Note: "n"}, {Send: json.RawMessage(`{}`)}})
	require.NoError(t, err)
	cleanup()
	assert.Empty(t, path, "no state step: no state file")

	path, cleanup, err = stateFile([]Step{{State: json.RawMessage(`{"version":1}`)}, {Send: json.RawMessage(`{}`)}})
	require.NoError(t, err)
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, `{"version":1}`, string(b))
	cleanup()
	_, err = os.Stat(path)
	assert.True(t, errors.Is(err, os.ErrNotExist), "cleanup removes the copy")

	_, _, err = stateFile([]Step{{State: json.RawMessage(`{}`)}, {State: json.RawMessage(`{}`), Line: 9}})
	assert.ErrorContains(t, err, "line 9")
}

// linesReader returns line and '\n' n times, then EOF.
type linesReader struct {
	line []byte
	off  int
	left int
}

func (r *linesReader) Read(p []byte) (int, error) {
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
	if n == 0 {
		return 0, io.EOF
	}
	return n, nil
}

type patchDispatcher struct{}

func (patchDispatcher) Dispatch(context.Context, rpc.Request) (any, error) {
	return map[string]any{"patch": []any{}}, nil
}

// BenchmarkServeRecorded is rpc's BenchmarkServeSmall (a small hook call
// through the whole transport) without a recording, and with one written
// to a file: "serve" times serving alone (the writer runs beside it),
// "drained" also waits until the recording is on disk.
func BenchmarkServeRecorded(b *testing.B) {
	line := []byte(`{"jsonrpc":"2.0","id":7,"method":"tool.execute.before","params":{"input":{"tool":"task","sessionID":"ses_1","callID":"call_1"},"output":{"args":{"description":"look around","prompt":"find the config loader","subagent_type":"explorer"}}}}`)
	for _, mode := range []string{"off", "serve", "serve-redact", "drained", "drained-redact"} {
		b.Run(mode, func(b *testing.B) {
			var rec *Recorder
			var observer rpc.Observer
			if mode != "off" {
				f, err := CreateRecording(filepath.Join(b.TempDir(), "bench.json"))
				require.NoError(b, err)
				rec = NewRecorder(f, recordOptions(strings.HasSuffix(mode, "redact"), zerolog.Nop()))
				observer = rec
			}
			b.ReportAllocs()
			b.ResetTimer()
			in := &linesReader{line: line, left: b.N}
			err := rpc.Serve(context.Background(), in, io.Discard, patchDispatcher{},
				rpc.Options{Framing: rpc.FramingLine, Log: zerolog.Nop(), Observer: observer})
			require.NoError(b, err)
			if strings.HasPrefix(mode, "drained") {
				rec.Close()
			}
			b.StopTimer()
			if rec != nil {
				rec.Close()
			}
		})
	}
}
