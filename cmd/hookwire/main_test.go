package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hookwire/hookwire/transcript"
)

var update = flag.Bool("update", false, "rewrite testdata/transcripts with the sidecar's replies")

// binPath is the hookwire binary built once (with -race) for the process
// tests, so they exercise the real program over real pipes. testDir holds
// it and the plain build (buildPlain).
var binPath, testDir string

func TestMain(m *testing.M) {
	flag.Parse()
	dir, err := os.MkdirTemp("", "hookwire-test")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	testDir = dir
	binPath = filepath.Join(dir, "hookwire")
	build := exec.Command("go", "build", "-race", "-o", binPath, ".")
	// -race needs cgo, which the Makefile turns off for plain builds.
	build.Env = append(os.Environ(), "CGO_ENABLED=1")
	build.Stderr = os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building hookwire:", err)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

func TestReplayTranscripts(t *testing.T) {
	files, err := filepath.Glob("../../testdata/transcripts/*.json")
	require.NoError(t, err)
	require.NotEmpty(t, files, "no transcripts found")
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			_, diffs, err := transcript.ReplayFile(f, transcript.Process{Bin: binPath}, transcript.ReplayOptions{Update: *update})
			require.NoError(t, err)
			assert.Empty(t, diffs, "replies differ from the transcript (go test ./cmd/hookwire -update rewrites it)")
		})
	}
}

// proc is a running sidecar with a client speaking one framing.
type proc struct {
	t      *testing.T
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	out    *bufio.Reader
	header bool
	stderr *syncBuffer
	done   chan error
}

// syncBuffer collects the sidecar's stderr; exec writes it from another
// goroutine while a test reads it.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func start(t *testing.T, header bool, args ...string) *proc {
	t.Helper()
	return startBin(t, binPath, header, args...)
}

// startBin is start with another build of hookwire.
func startBin(t *testing.T, bin string, header bool, args ...string) *proc {
	t.Helper()
	return startCommand(t, bin, header, append([]string{"serve"}, args...)...)
}

// startCommand runs bin with args (a subcommand and its flags) behind a
// client speaking one framing; the test's end closes its stdin and kills
// it if it has not exited 5 s later.
func startCommand(t *testing.T, bin string, header bool, args ...string) *proc {
	t.Helper()
	return startCmd(t, exec.Command(bin, args...), header)
}

// startCmd is startCommand with a command the caller prepared (its
// environment, credentials).
func startCmd(t *testing.T, cmd *exec.Cmd, header bool) *proc {
	t.Helper()
	stdin, err := cmd.StdinPipe()
	require.NoError(t, err)
	// Our own pipe, not StdoutPipe: Wait (below, as soon as the process
	// exits) closes a StdoutPipe, so reading the replies an exiting
	// process wrote failed with "file already closed" instead of ending
	// at EOF.
	stdout, w, err := os.Pipe()
	require.NoError(t, err)
	t.Cleanup(func() { stdout.Close() })
	cmd.Stdout = w
	p := &proc{t: t, cmd: cmd, stdin: stdin, out: bufio.NewReaderSize(stdout, 1<<20), header: header,
		stderr: &syncBuffer{}, done: make(chan error, 1)}
	cmd.Stderr = p.stderr
	err = cmd.Start()
	w.Close() // the child holds its copy
	require.NoError(t, err)
	go func() { p.done <- cmd.Wait() }()
	t.Cleanup(func() {
		p.stdin.Close()
		select {
		case <-p.done:
		case <-time.After(5 * time.Second):
			cmd.Process.Kill()
		}
	})
	return p
}

// sendRaw writes body framed as this client's framing.
func (p *proc) sendRaw(body []byte) {
	p.t.Helper()
	var err error
	if p.header {
		_, err = fmt.Fprintf(p.stdin, "Content-Length: %d\r\n\r\n%s", len(body), body)
	} else {
		_, err = p.stdin.Write(append(body, '\n'))
	}
	require.NoError(p.t, err)
}

func (p *proc) send(method string, id any, params any) {
	p.t.Helper()
	msg := map[string]any{"jsonrpc": "2.0", "method": method}
	if id != nil {
		msg["id"] = id
	}
	if params != nil {
		msg["params"] = params
	}
	b, err := json.Marshal(msg)
	require.NoError(p.t, err)
	p.sendRaw(b)
}

type reply struct {
	ID     json.RawMessage `json:"id"`
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    int64  `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// recv reads one reply, failing the test after a deadline.
func (p *proc) recv() reply {
	p.t.Helper()
	type res struct {
		body []byte
		err  error
	}
	ch := make(chan res, 1)
	go func() {
		body, err := p.readFrame()
		ch <- res{body, err}
	}()
	select {
	case r := <-ch:
		require.NoError(p.t, r.err, "reading reply; sidecar log: %s", p.stderr.String())
		var rep reply
		require.NoError(p.t, json.Unmarshal(r.body, &rep), "reply %q", r.body)
		return rep
	case <-time.After(10 * time.Second):
		p.t.Fatalf("no reply within 10s; sidecar log: %s", p.stderr.String())
	}
	return reply{}
}

func (p *proc) readFrame() ([]byte, error) {
	if !p.header {
		line, err := p.out.ReadBytes('\n')
		return bytes.TrimSpace(line), err
	}
	length := -1
	for {
		line, err := p.out.ReadString('\n')
		if err != nil {
			return nil, err
		}
		line = strings.TrimRight(line, "\r\n")
		if line == "" {
			break
		}
		if v, ok := strings.CutPrefix(line, "Content-Length:"); ok {
			length, _ = strconv.Atoi(strings.TrimSpace(v))
		}
	}
	if length < 0 {
		return nil, fmt.Errorf("reply without Content-Length")
	}
	body := make([]byte, length)
	_, err := io.ReadFull(p.out, body)
	return body, err
}

func (p *proc) call(method string, params any) reply {
	p.t.Helper()
	p.send(method, 1, params)
	return p.recv()
}

func (p *proc) initialize() {
	p.t.Helper()
	r := p.call("initialize", map[string]any{"protocolVersion": 1})
	require.Nil(p.t, r.Error, "initialize failed")
}

// waitExit waits for the process to end and returns its exit code.
func (p *proc) waitExit() int {
	p.t.Helper()
	select {
	case err := <-p.done:
		p.done <- err // let Cleanup see it too
		if err == nil {
			return 0
		}
		if ee, ok := err.(*exec.ExitError); ok {
			return ee.ExitCode()
		}
		p.t.Fatalf("wait: %v", err)
	case <-time.After(10 * time.Second):
		p.t.Fatalf("sidecar did not exit; log: %s", p.stderr.String())
	}
	return -1
}

var framings = []struct {
	name   string
	header bool
}{{"line", false}, {"header", true}}

func TestLifecycle(t *testing.T) {
	for _, fr := range framings {
		t.Run(fr.name, func(t *testing.T) {
			t.Run("request before initialize gets -32002", func(t *testing.T) {
				p := start(t, fr.header)
				r := p.call("status", nil)
				require.NotNil(t, r.Error)
				assert.Equal(t, int64(-32002), r.Error.Code)
				p.initialize()
				r = p.call("status", nil)
				assert.Nil(t, r.Error)
			})
			t.Run("second initialize gets -32600", func(t *testing.T) {
				p := start(t, fr.header)
				p.initialize()
				r := p.call("initialize", map[string]any{"protocolVersion": 1})
				require.NotNil(t, r.Error)
				assert.Equal(t, int64(-32600), r.Error.Code)
			})
			t.Run("shutdown then exit ends with 0", func(t *testing.T) {
				p := start(t, fr.header)
				p.initialize()
				r := p.call("shutdown", nil)
				assert.Nil(t, r.Error)
				assert.Equal(t, "null", string(r.Result))
				p.send("exit", nil, nil)
				assert.Equal(t, 0, p.waitExit())
			})
			t.Run("EOF on stdin exits 0", func(t *testing.T) {
				p := start(t, fr.header)
				p.initialize()
				p.stdin.Close()
				assert.Equal(t, 0, p.waitExit())
			})
			t.Run("SIGTERM exits 0", func(t *testing.T) {
				p := start(t, fr.header)
				p.initialize()
				require.NoError(t, p.cmd.Process.Signal(syscall.SIGTERM))
				assert.Equal(t, 0, p.waitExit())
			})
			t.Run("SIGINT exits 0", func(t *testing.T) {
				p := start(t, fr.header)
				p.initialize()
				require.NoError(t, p.cmd.Process.Signal(syscall.SIGINT))
				assert.Equal(t, 0, p.waitExit())
			})
		})
	}
}

func TestForcedFraming(t *testing.T) {
	p := start(t, true, "--framing", "header")
	p.initialize()
	assert.Nil(t, p.call("status", nil).Error)

	q := start(t, false, "--framing", "line")
	q.initialize()
	assert.Nil(t, q.call("status", nil).Error)
}

func TestBadInput(t *testing.T) {
	deep := strings.Repeat("[", 100000) + strings.Repeat("]", 100000)
	big := `{"jsonrpc":"2.0","id":77,"method":"status","params":{"pad":"` + strings.Repeat("x", 2048) + `"}}`
	rows := []struct {
		name     string
		body     string
		wantCode int64
		wantID   string // the reply's id, as JSON
		config   map[string]any
	}{
		{"not JSON", `hello there`, -32700, "null", nil},
		{"truncated JSON", `{"jsonrpc":"2.0","id":5,"method":"sta`, -32700, "null", nil},
		{"batch", `[{"jsonrpc":"2.0","id":1,"method":"status"},{"jsonrpc":"2.0","id":2,"method":"status"}]`, -32600, "null", nil},
		{"not a request object", `{"jsonrpc":"2.0","id":9}`, -32600, "9", nil},
		{"wrong param types", `{"jsonrpc":"2.0","id":3,"method":"tool.execute.before","params":{"input":{"tool":7},"output":{"args":{}}}}`, -32602, "3", nil},
		{"missing input", `{"jsonrpc":"2.0","id":4,"method":"tool.execute.after","params":{"output":{"output":"x"}}}`, -32602, "4", nil},
		{"params not an object", `{"jsonrpc":"2.0","id":6,"method":"chat.messages.transform","params":[1,2]}`, -32602, "6", nil},
		{"unknown method", `{"jsonrpc":"2.0","id":"abc","method":"no.such.method"}`, -32601, `"abc"`, nil},
		{"message over maxMessageBytes", big, -32600, "77", map[string]any{"maxMessageBytes": 1024}},
		{"invalid UTF-8 inside a string", "{\"jsonrpc\":\"2.0\",\"id\":8,\"method\":\"status\",\"params\":{\"s\":\"\xff\xfe\"}}", -32700, "8", nil},
		{"100k-deep nesting", `{"jsonrpc":"2.0","id":10,"method":"status","params":` + deep + `}`, -32700, "10", nil}, // the id is readable: PROTOCOL.md 1
	}
	for _, fr := range framings {
		for _, row := range rows {
			t.Run(fr.name+"/"+row.name, func(t *testing.T) {
				p := start(t, fr.header)
				params := map[string]any{"protocolVersion": 1}
				if row.config != nil {
					params["config"] = row.config
				}
				require.Nil(t, p.call("initialize", params).Error)
				p.sendRaw([]byte(row.body))
				r := p.recv()
				require.NotNil(t, r.Error, "want an error reply, got %s", r.Result)
				assert.Equal(t, row.wantCode, r.Error.Code, "message: %s", r.Error.Message)
				assert.JSONEq(t, row.wantID, string(r.ID))
				// The connection keeps serving.
				after := p.call("status", nil)
				assert.Nil(t, after.Error, "status after bad input")
				assert.Contains(t, string(after.Result), `"version"`)
			})
		}
	}
}

func TestInitializeErrors(t *testing.T) {
	rows := []struct {
		name     string
		params   map[string]any
		wantCode int64
		wantMsg  []string
	}{
		{"wrong protocolVersion names the supported ones", map[string]any{"protocolVersion": 7}, -32602, []string{"7", "[1]"}},
		{"missing protocolVersion", map[string]any{}, -32602, []string{"protocolVersion"}},
		{"config not an object", map[string]any{"protocolVersion": 1, "config": []any{"cacheStable"}}, -32602, []string{"config must be an object"}},
	}
	for _, row := range rows {
		t.Run(row.name, func(t *testing.T) {
			p := start(t, false)
			r := p.call("initialize", row.params)
			require.NotNil(t, r.Error)
			assert.Equal(t, row.wantCode, r.Error.Code)
			for _, m := range row.wantMsg {
				assert.Contains(t, r.Error.Message, m)
			}
			// A failed initialize leaves the sidecar waiting for a good one,
			// and serving after it.
			p.initialize()
			assert.Nil(t, p.call("status", nil).Error)
		})
	}
}

func TestStdoutCarriesOnlyProtocol(t *testing.T) {
	p := start(t, false, "--log-level", "trace")
	p.initialize()
	p.call("status", nil)
	p.stdin.Close()
	rest, _ := io.ReadAll(p.out)
	assert.Empty(t, strings.TrimSpace(string(rest)), "nothing but replies may reach stdout")
	assert.Equal(t, 0, p.waitExit())
	assert.Contains(t, p.stderr.String(), "serving", "logs go to stderr")
}

func TestVersionAndDemo(t *testing.T) {
	out, err := exec.Command(binPath, "version").Output()
	require.NoError(t, err)
	assert.Contains(t, string(out), "hookwire ")

	out, err = exec.Command(binPath, "demo").CombinedOutput()
	require.NoError(t, err, "%s", out)
	// The built binary runs it too (demo_test.go checks what it says).
	assert.Contains(t, string(out), "hookwire sessions: what the project remembers")
}
