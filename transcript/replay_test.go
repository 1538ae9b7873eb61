package transcript

import (
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hookwire/hookwire/rpc"
)

// echoServer is an InProcess target over the real transport: "echo"
// answers its params, "state" the contents of the state file it was
// started from, "count" how many calls came before.
func echoServer(ctx context.Context, state string, in io.Reader, out io.Writer) error {
	mux := rpc.NewMux()
	calls := 0
	mux.Handle("echo", func(_ context.Context, r rpc.Request) (any, error) { calls++; return r.Params, nil })
	mux.Handle("count", func(context.Context, rpc.Request) (any, error) { calls++; return calls, nil })
	mux.Handle("state", func(context.Context, rpc.Request) (any, error) {
		calls++
		if state == "" {
			return nil, nil
		}
		b, err := os.ReadFile(state)
		return json.RawMessage(b), err
	})
	return rpc.Serve(ctx, in, out, mux, rpc.Options{Framing: rpc.FramingLine, Log: zerolog.Nop()})
}

func mustParse(t *testing.T, s string) []Step {
	t.Helper()
	steps, err := Parse([]byte(s))
	require.NoError(t, err)
	return steps
}

func TestReplayInProcess(t *testing.T) {
	tests := []struct {
		name  string
		in    string
		diffs []string // each Difference as "step N (line L): what"
	}{
		{
			name: "replies match; member order and whitespace do not count",
			in: `{"note":"n"}
{"send":{"jsonrpc":"2.0","id":1,"method":"echo","params":{"a":[1, 2]}}}
{"recv":{"result":{"a":[1,2]},"id":1,"jsonrpc":"2.0"}}`,
		},
		{
			name: "a differing reply names its step, line and path",
			in: `{"send":{"jsonrpc":"2.0","id":1,"method":"echo","params":{"a":1}}}

{"recv":{"jsonrpc":"2.0","id":1,"result":{"a":2}}}
{"send":{"jsonrpc":"2.0","id":2,"method":"echo","params":"same"}}
{"recv":{"jsonrpc":"2.0","id":2,"result":"same"}}`,
			diffs: []string{"step 2 (line 3): at /result/a: want 2, got 1"},
		},
		{
			name: "<any> matches any value",
			in: `{"send":{"jsonrpc":"2.0","id":1,"method":"count"}}
{"recv":{"jsonrpc":"2.0","id":1,"result":"<any>"}}`,
		},
		{
			name: "sendRaw parts are sent joined; bad input gets its error reply",
			in: `{"sendRaw":["{\"jsonrpc\":\"2.0\",", "\"id\":3,\"method\":\"count\"}\n"]}
{"recv":{"jsonrpc":"2.0","id":3,"result":1}}
{"sendRaw":"not json\n"}
{"recv":{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"<any>"}}}`,
		},
		{
			name: "the state step is the server's state file",
			in: `{"state":{"version":1,"x":"y"}}
{"send":{"jsonrpc":"2.0","id":1,"method":"state"}}
{"recv":{"jsonrpc":"2.0","id":1,"result":{"version":1,"x":"z"}}}`,
			diffs: []string{`step 3 (line 3): at /result/x: strings differ at byte 0: want "z", got "y"`},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			diffs, err := Replay(mustParse(t, tt.in), InProcess(echoServer), ReplayOptions{})
			require.NoError(t, err)
			var got []string
			for _, d := range diffs {
				got = append(got, strings.SplitN(d.String(), "\n", 2)[0])
			}
			assert.Equal(t, tt.diffs, got)
		})
	}
}

func TestReplayFileUpdate(t *testing.T) {
	path := filepath.Join(t.TempDir(), "t.json")
	require.NoError(t, os.WriteFile(path, []byte(`{"send":{"jsonrpc":"2.0","id":1,"method":"echo","params":{"n":12345678901234567890,"k":"v"}}}
{"recv":{}}
{"send":{"jsonrpc":"2.0","id":2,"method":"count"}}
{"recv":{"jsonrpc":"2.0","id":2,"result":"<any>"}}
`), 0o644))
	steps, diffs, err := ReplayFile(path, InProcess(echoServer), ReplayOptions{Update: true})
	require.NoError(t, err)
	assert.Empty(t, diffs)
	require.Len(t, steps, 4)
	read, err := ReadFile(path)
	require.NoError(t, err)
	assert.JSONEq(t, `{"id":1,"jsonrpc":"2.0","result":{"k":"v","n":12345678901234567890}}`, string(read[1].Recv))
	assert.Contains(t, string(read[1].Recv), "12345678901234567890", "numbers are kept as written")
	assert.JSONEq(t, `{"id":2,"jsonrpc":"2.0","result":"<any>"}`, string(read[3].Recv), "<any> stays")
	assert.JSONEq(t, string(read[1].Recv), string(steps[1].Recv), "the steps returned are the steps written")

	_, diffs, err = ReplayFile(path, InProcess(echoServer), ReplayOptions{})
	require.NoError(t, err)
	assert.Empty(t, diffs, "an updated transcript replays")
}

func TestReplayFailures(t *testing.T) {
	silent := InProcess(func(ctx context.Context, _ string, in io.Reader, _ io.Writer) error {
		_, err := io.Copy(io.Discard, in)
		return err
	})
	closing := InProcess(func(context.Context, string, io.Reader, io.Writer) error { return nil })
	tests := []struct {
		name   string
		target Target
		in     string
		want   string
	}{
		{"no reply in time", silent, `{"send":{"jsonrpc":"2.0","id":1,"method":"m"}}` + "\n" + `{"recv":{}}`, "step 2: no reply: timed out after"},
		{"output closed", closing, `{"note":"n"}` + "\n" + `{"recv":{}}`, "step 2: no reply: sidecar closed its output"},
		{"two state steps", silent, `{"state":{}}` + "\n\n" + `{"state":{}}`, "step 2 (line 3): a second state step"},
		{"a binary that is not there", Process{Bin: filepath.Join(t.TempDir(), "missing")}, `{"note":"n"}`, "starting "},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Replay(mustParse(t, tt.in), tt.target, ReplayOptions{ReplyTimeout: 100 * time.Millisecond})
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
		})
	}
}

// A Client keeps the read error: every Next after the output ended says
// so at once, after the replies that came before it.
func TestClientAfterEOF(t *testing.T) {
	once := InProcess(func(_ context.Context, _ string, _ io.Reader, out io.Writer) error {
		_, err := io.WriteString(out, "{\"a\":1}\n\n{\"b\":2}\n")
		return err
	})
	c, err := Dial(once, "")
	require.NoError(t, err)
	defer c.Close()
	for _, want := range []string{`{"a":1}`, `{"b":2}`} {
		got, err := c.Next(time.Second)
		require.NoError(t, err)
		assert.Equal(t, want, string(got))
	}
	for range 2 {
		_, err := c.Next(time.Second)
		assert.EqualError(t, err, "sidecar closed its output")
	}
}

func TestDiff(t *testing.T) {
	tests := []struct {
		name, want, got, diff string
	}{
		{"equal, members reordered", `{"a":1,"b":[true,null]}`, `{"b":[true,null],"a":1}`, ""},
		{"<any> anywhere", `{"a":"<any>","b":["<any>"]}`, `{"a":{"x":1},"b":[7]}`, ""},
		{"missing member", `{"a":1,"b":2}`, `{"a":1}`, "at /b: missing"},
		{"unexpected member", `{"a":1}`, `{"a":1,"c":2}`, "at /c: unexpected"},
		{"array length", `[1,2]`, `[1]`, "at /: want 2 items, got 1"},
		{"type", `{"a":{}}`, `{"a":[]}`, "at /a: want an object"},
		{"number", `{"a":[0,1]}`, `{"a":[0,2]}`, "at /a/1: want 1, got 2"},
		{"string excerpt", `"abcdef"`, `"abcxef"`, `at /: strings differ at byte 3: want "abcdef", got "abcxef"`},
		{"sidecar sent no JSON", `{}`, `{`, "sidecar reply is not JSON: unexpected end of JSON input"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.diff, Diff(json.RawMessage(tt.want), json.RawMessage(tt.got)))
		})
	}
}

func TestKeepWildcards(t *testing.T) {
	got := KeepWildcards(json.RawMessage(`{"a":"<any>","b":[1,"<any>"],"c":{"d":"<any>"}}`),
		json.RawMessage(`{"a":5,"b":[2,3],"c":{"d":1,"e":9007199254740993}}`))
	assert.JSONEq(t, `{"a":"<any>","b":[2,"<any>"],"c":{"d":"<any>","e":9007199254740993}}`, string(got))
	assert.Contains(t, string(got), "9007199254740993", "a large integer is not rounded")
}
