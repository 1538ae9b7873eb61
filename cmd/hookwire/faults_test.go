package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hookwire/hookwire/sessions"
)

// Fault tests: the real binary over real pipes, with the client or the
// machine misbehaving (PROTOCOL.md 1 and 6).

func init() {
	// The sidecars these tests start are built with -race, whose runtime
	// sleeps a second at exit (atexit_sleep_ms) before reporting; every
	// start/stop would pay it. Children inherit this.
	if os.Getenv("GORACE") == "" {
		os.Setenv("GORACE", "atexit_sleep_ms=0")
	}
}

// statusReply is the part of the status result these tests read.
type statusReply struct {
	State  string         `json:"state"`
	Store  sessions.Stats `json:"store"`
	Memory struct {
		Goroutines int `json:"goroutines"`
	} `json:"memory"`
}

func (p *proc) status() statusReply {
	p.t.Helper()
	r := p.call("status", nil)
	require.Nil(p.t, r.Error, "status failed")
	var st statusReply
	require.NoError(p.t, json.Unmarshal(r.Result, &st), "status result %s", r.Result)
	return st
}

// hookCall sends one hook request and returns its patch as JSON.
func (p *proc) hookCall(method string, params string) string {
	p.t.Helper()
	r := p.call(method, json.RawMessage(params))
	require.Nil(p.t, r.Error, "%s failed: %+v", method, r.Error)
	var res struct {
		Patch json.RawMessage `json:"patch"`
	}
	require.NoError(p.t, json.Unmarshal(r.Result, &res))
	return string(res.Patch)
}

// orchestrate makes parent an orchestrator session.
func (p *proc) orchestrate(parent string) {
	p.t.Helper()
	p.hookCall("chat.message", fmt.Sprintf(`{"input":{"sessionID":%q,"agent":"orchestrator"},"output":{"message":{},"parts":[]}}`, parent))
}

// createTask runs one task call from parent that creates the task session
// taskID for agent.
func (p *proc) createTask(parent, callID, agent, taskID string) {
	p.t.Helper()
	p.hookCall("tool.execute.before", fmt.Sprintf(
		`{"input":{"tool":"task","sessionID":%q,"callID":%q},"output":{"args":{"subagent_type":%q,"description":"work","prompt":"do it"}}}`,
		parent, callID, agent))
	p.hookCall("tool.execute.after", fmt.Sprintf(
		`{"input":{"tool":"task","sessionID":%q,"callID":%q},"output":{"title":"t","output":"<task id=\"%s\" state=\"completed\">\ndone\n</task>","metadata":{}}}`,
		parent, callID, taskID))
}

func TestFaultStdinClosedMidFrame(t *testing.T) {
	rows := []struct {
		name   string
		header bool
		tail   string
	}{
		{"line: half a line", false, `{"jsonrpc":"2.0","id":2,"method":"sta`},
		{"line: half a multi-byte character", false, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"status\",\"params\":{\"s\":\"\xe2\x82"},
		{"header: half a header line", true, "Content-Len"},
		{"header: headers without the blank line", true, "Content-Length: 40\r\n"},
		{"header: body shorter than promised", true, "Content-Length: 4000\r\n\r\n{\"jsonrpc\":\"2.0\",\"id\":2,"},
	}
	for _, row := range rows {
		t.Run(row.name, func(t *testing.T) {
			p := start(t, row.header)
			p.initialize()
			_, err := io.WriteString(p.stdin, row.tail)
			require.NoError(t, err)
			p.stdin.Close()
			assert.Equal(t, 0, p.waitExit(), "log: %s", p.stderr.String())
			// Whatever was written before exiting is whole frames.
			rest, _ := io.ReadAll(p.out)
			for len(rest) > 0 && !row.header {
				line, more, _ := bytes.Cut(rest, []byte{'\n'})
				assert.True(t, json.Valid(line), "partial reply %q", line)
				rest = more
			}
		})
	}
}

// TestFaultStdoutClosed: the client closes its end of stdout and goes on
// writing requests. The sidecar must notice and exit by itself, promptly
// and cleanly, rather than spin or die of SIGPIPE.
func TestFaultStdoutClosed(t *testing.T) {
	for _, fr := range framings {
		t.Run(fr.name, func(t *testing.T) {
			cmd := exec.Command(binPath, "serve")
			stdin, err := cmd.StdinPipe()
			require.NoError(t, err)
			outR, outW, err := os.Pipe()
			require.NoError(t, err)
			cmd.Stdout = outW
			stderr := &syncBuffer{}
			cmd.Stderr = stderr
			require.NoError(t, cmd.Start())
			outW.Close()
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			t.Cleanup(func() {
				stdin.Close()
				select {
				case <-done:
				case <-time.After(5 * time.Second):
					cmd.Process.Kill()
				}
			})
			frame := func(body string) string {
				if fr.header {
					return fmt.Sprintf("Content-Length: %d\r\n\r\n%s", len(body), body)
				}
				return body + "\n"
			}
			// One request answered, so the sidecar is up and has written.
			_, err = io.WriteString(stdin, frame(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}`))
			require.NoError(t, err)
			line, err := bufio.NewReader(outR).ReadString('}')
			require.NoError(t, err, "no reply to initialize; log: %s", stderr.String())
			require.Contains(t, line, `"id"`)
			outR.Close() // the client is gone

			start := time.Now()
			var rusageBefore syscall.Rusage
			_ = syscall.Getrusage(syscall.RUSAGE_CHILDREN, &rusageBefore)
			writer := make(chan struct{})
			go func() {
				defer close(writer)
				for i := 2; i < 2000; i++ {
					if _, err := io.WriteString(stdin, frame(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"status"}`, i))); err != nil {
						return // the sidecar is gone: that is the point
					}
				}
			}()
			select {
			case err := <-done:
				done <- err
				elapsed := time.Since(start)
				t.Logf("exited %v after the client closed stdout (%v)", err, elapsed.Round(time.Millisecond))
				var ee *exec.ExitError
				if err != nil {
					require.ErrorAs(t, err, &ee)
					ws := ee.Sys().(syscall.WaitStatus)
					if ws.Signaled() {
						t.Fatalf("killed by %v instead of exiting: a write to the closed stdout must be an error, not a fatal SIGPIPE; log: %s", ws.Signal(), stderr.String())
					}
					t.Fatalf("exit code %d, want 0; log: %s", ee.ExitCode(), stderr.String())
				}
				var ru syscall.Rusage
				_ = syscall.Getrusage(syscall.RUSAGE_CHILDREN, &ru)
				cpu := time.Duration(ru.Utime.Nano()+ru.Stime.Nano()-rusageBefore.Utime.Nano()-rusageBefore.Stime.Nano()) * time.Nanosecond
				t.Logf("CPU used by exited children meanwhile: %v", cpu)
			case <-time.After(10 * time.Second):
				// Normally well under a second; the margin is for a loaded
				// machine running the race-built binary.
				t.Fatalf("sidecar still running 10s after its stdout was closed; log: %s", stderr.String())
			}
			<-writer
		})
	}
}

// TestFaultSIGTERMMidStream: SIGTERM while thousands of requests are in
// flight flushes what was answered and exits 0; stdout holds only whole
// replies, in order.
func TestFaultSIGTERMMidStream(t *testing.T) {
	for _, fr := range framings {
		t.Run(fr.name, func(t *testing.T) {
			state := filepath.Join(t.TempDir(), "state.json")
			p := start(t, fr.header, "--state", state)
			p.initialize()
			p.orchestrate("ses_p")
			const n = 20000
			go func() {
				for i := 0; i < n; i++ {
					body := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tool.execute.before","params":{"input":{"tool":"task","sessionID":"ses_p","callID":"c%d"},"output":{"args":{"subagent_type":"explorer","description":"d"}}}}`, i+10, i)
					var err error
					if fr.header {
						_, err = fmt.Fprintf(p.stdin, "Content-Length: %d\r\n\r\n%s", len(body), body)
					} else {
						_, err = io.WriteString(p.stdin, body+"\n")
					}
					if err != nil {
						return
					}
				}
			}()
			// Let some replies come back, then signal.
			for i := 0; i < 100; i++ {
				body, err := p.readFrame()
				require.NoError(t, err)
				require.True(t, json.Valid(body))
			}
			require.NoError(t, p.cmd.Process.Signal(syscall.SIGTERM))
			got := 100
			want := int64(110)
			for {
				body, err := p.readFrame()
				if err != nil {
					if fr.header {
						assert.ErrorIs(t, err, io.EOF, "a reply was cut short")
					} else {
						assert.Empty(t, body, "a reply was cut short")
					}
					break
				}
				var r reply
				require.NoError(t, json.Unmarshal(body, &r), "reply %q", body)
				require.Nil(t, r.Error)
				assert.Equal(t, fmt.Sprint(want), string(r.ID), "replies in order")
				want++
				got++
			}
			assert.Equal(t, 0, p.waitExit(), "log: %s", p.stderr.String())
			t.Logf("%d of %d replies before the SIGTERM took effect", got, n)
			assert.Contains(t, p.stderr.String(), "stopping")
		})
	}
}

// faultSeed is the seed of the random kill moments: HOOKWIRE_FAULT_SEED
// when set (to replay a failed run), else new each run. The test logs it.
func faultSeed(t *testing.T) uint64 {
	t.Helper()
	if v := os.Getenv("HOOKWIRE_FAULT_SEED"); v != "" {
		seed, err := strconv.ParseUint(v, 10, 64)
		require.NoError(t, err, "HOOKWIRE_FAULT_SEED")
		return seed
	}
	return uint64(time.Now().UnixNano())
}

// The soak driver (TestSoak in soak_test.go, build tag soak, and the short
// TestSoakShort below): one sidecar process, many parent sessions, requests
// pipelined (one goroutine writes, another reads the replies in order and
// checks them), with the process's RSS, goroutines and store sizes taken
// after warm-up, in the middle and at the end.

// soakConfig shapes a soak run: parents are visited in groups whose
// members are interleaved round by round; each round of one parent is
// seven calls.
type soakConfig struct {
	bin     string
	parents int
	rounds  int // per parent
	group   int // parents interleaved at a time
}

// soakMaxTracked is the maxTrackedSessions the soak runs with.
const soakMaxTracked = 2000

// soakPoint is one measurement.
type soakPoint struct {
	label      string
	calls      int
	rssKB      int
	heapBytes  uint64
	goroutines int
	store      sessions.Stats
	at         time.Duration
}

type soakExpect struct {
	id   int64
	kind int
	want string // resume: the task id the patch must hold
}

const (
	expectAny    = iota // a result, not an error
	expectPatch         // a non-empty patch
	expectResume        // a patch that sets task_id to want
	expectStatus        // a status result: measure
)

// runSoak drives one sidecar with cfg's workload and returns the
// measurements (warm-up, middle, end) and the number of calls sent.
// soakDriver is one soak's sidecar: its process, the goroutine reading and
// checking its replies, the stall watchdog, and a buffered writer.
type soakDriver struct {
	t       *testing.T
	p       *proc
	pid     int
	began   time.Time
	w       *bufio.Writer
	id      int64
	calls   int
	expects chan soakExpect
	labels  chan string
	points  chan soakPoint
	readErr chan error
	replies atomic.Int64
	stalled <-chan struct{}
}

// startSoak starts `hookwire serve` with args and the reader of its
// replies; points holds up to npoints measurements.
func startSoak(t *testing.T, bin string, npoints int, args ...string) *soakDriver {
	t.Helper()
	p := startCommand(t, bin, false, append([]string{"serve"}, args...)...)
	d := &soakDriver{t: t, p: p, pid: p.cmd.Process.Pid, began: time.Now(),
		w: bufio.NewWriterSize(p.stdin, 256<<10), expects: make(chan soakExpect, 1<<16),
		labels: make(chan string, npoints), points: make(chan soakPoint, npoints), readErr: make(chan error, 1)}
	stalled, stopWatchdog := soakWatchdog(t, p.cmd, &d.replies)
	d.stalled = stalled
	go func() {
		err := soakRead(p.out, d.expects, d.labels, d.points, d.pid, d.began, &d.replies)
		stopWatchdog() // every reply is in (or none will come)
		if err != nil {
			// Unblock the writer: a reader that stopped reading would
			// leave it waiting on a full pipe forever.
			p.cmd.Process.Kill()
		}
		d.readErr <- err
	}()
	return d
}

// send queues a request whose reply the reader checks against kind (and want).
func (d *soakDriver) send(kind int, want, method, params string) {
	d.id++
	d.expects <- soakExpect{id: d.id, kind: kind, want: want}
	fmt.Fprintf(d.w, `{"jsonrpc":"2.0","id":%d,"method":%q,"params":%s}`+"\n", d.id, method, params)
	d.calls++
}

// notify queues a notification (no reply).
func (d *soakDriver) notify(method, params string) {
	fmt.Fprintf(d.w, `{"jsonrpc":"2.0","method":%q,"params":%s}`+"\n", method, params)
	d.calls++
}

// measure asks for a status reply that the reader records under label.
func (d *soakDriver) measure(label string) {
	d.labels <- label
	d.send(expectStatus, "", "status", "null")
	require.NoError(d.t, d.w.Flush())
}

// flush writes what is queued; a failed write fails the test with the
// reader's error when it has one (it usually explains the write's).
func (d *soakDriver) flush() {
	if err := d.w.Flush(); err != nil {
		select {
		case rerr := <-d.readErr:
			d.t.Fatalf("reading replies: %v (%s); log: %s", rerr, stallNote(d.stalled), d.p.stderr.String())
		case <-time.After(5 * time.Second):
		}
		d.t.Fatalf("writing to the sidecar: %v; log: %s", err, d.p.stderr.String())
	}
}

// waitReplies ends the run's requests and waits for the reader to check
// every reply, or fails when the watchdog killed a stalled sidecar.
func (d *soakDriver) waitReplies() {
	close(d.expects)
	close(d.labels)
	select {
	case err := <-d.readErr:
		require.NoError(d.t, err, "%s; log: %s", stallNote(d.stalled), d.p.stderr.String())
	case <-d.stalled:
		d.t.Fatalf("no reply for %v after %d replies: sidecar killed; log: %s", soakStall, d.replies.Load(), d.p.stderr.String())
	}
}

// exit closes stdin and requires the sidecar to exit cleanly within limit.
func (d *soakDriver) exit(limit time.Duration) {
	d.p.stdin.Close()
	select {
	case err := <-d.p.done:
		d.p.done <- err
		require.NoError(d.t, err, "sidecar exit; log: %s", d.p.stderr.String())
	case <-time.After(limit):
		d.t.Fatalf("sidecar did not exit at EOF")
	}
}

func runSoak(t *testing.T, cfg soakConfig) ([]soakPoint, int) {
	t.Helper()
	d := startSoak(t, cfg.bin, 8, "--framing", "line", "--log-level", "warn")
	send, measure := d.send, d.measure
	notify := func(method, params string) { d.notify(method, params) }

	// A tracked-sessions bound below the number of parents, so the run
	// reaches it well before the middle and the flat part is measured.
	// cacheStable off: chat.system.transform then carries the block (the
	// hostile soak runs with it on).
	send(expectAny, "", "initialize", fmt.Sprintf(
		`{"protocolVersion":1,"clientInfo":{"name":"soak","version":"1"},"config":{"maxTrackedSessions":%d,"cacheStable":false}}`, soakMaxTracked))
	warmUp, middle := cfg.parents/20, cfg.parents/2
	for g := 0; g < cfg.parents; g += cfg.group {
		switch g {
		case warmUp - warmUp%cfg.group:
			measure("start")
		case middle - middle%cfg.group:
			measure("middle")
		}
		end := min(g+cfg.group, cfg.parents)
		for k := g; k < end; k++ {
			send(expectAny, "", "chat.message", fmt.Sprintf(
				`{"input":{"sessionID":"ses_p%06d","agent":"orchestrator","model":{"providerID":"p","modelID":"m"}},"output":{"message":{"id":"msg_%d","role":"user"},"parts":[{"type":"text","text":"go"}]}}`, k, k))
		}
		for r := 0; r < cfg.rounds; r++ {
			agent, prefix := "explorer", "exp"
			if r%2 == 1 {
				agent, prefix = "oracle", "ora"
			}
			alias := fmt.Sprintf("%s-%d", prefix, r/2+1)
			for k := g; k < end; k++ {
				parent := fmt.Sprintf("ses_p%06d", k)
				task := fmt.Sprintf("ses_p%06d_r%d", k, r)
				call := fmt.Sprintf("call_%d_%d", k, r)
				// Create a task session, then resume it by its alias.
				send(expectAny, "", "tool.execute.before", fmt.Sprintf(
					`{"input":{"tool":"task","sessionID":%q,"callID":%q},"output":{"args":{"subagent_type":%q,"description":"round %d work","prompt":"do round %d"}}}`,
					parent, call, agent, r, r))
				send(expectAny, "", "tool.execute.after", fmt.Sprintf(
					`{"input":{"tool":"task","sessionID":%q,"callID":%q},"output":{"title":"t","output":"<task id=\"%s\" state=\"completed\">\nresult of round %d\n</task>","metadata":{}}}`,
					parent, call, task, r))
				send(expectResume, task, "tool.execute.before", fmt.Sprintf(
					`{"input":{"tool":"task","sessionID":%q,"callID":%q},"output":{"args":{"subagent_type":%q,"description":"more","prompt":"again","task_id":%q}}}`,
					parent, call+"b", agent, alias))
				send(expectAny, "", "tool.execute.after", fmt.Sprintf(
					`{"input":{"tool":"task","sessionID":%q,"callID":%q},"output":{"output":"task_id: %s (for resuming to continue this task if needed)\n\n<task_result>ok</task_result>"}}`,
					parent, call+"b", task))
				send(expectPatch, "", "chat.system.transform", fmt.Sprintf(
					`{"input":{"sessionID":%q,"model":{"providerID":"p"}},"output":{"system":["You are the orchestrator."]}}`, parent))
				send(expectPatch, "", "chat.messages.transform", fmt.Sprintf(
					`{"input":{},"output":{"messages":[{"info":{"id":"m%d_%d_1","role":"user","agent":"orchestrator","sessionID":%q},"parts":[{"type":"text","text":"start"}]},`+
						`{"info":{"id":"m%d_%d_2","role":"assistant","sessionID":%q},"parts":[{"type":"tool","tool":"task","state":{"status":"error","error":"Unknown agent type: explorr is not a valid agent type"}}]},`+
						`{"info":{"id":"m%d_%d_3","role":"user","agent":"orchestrator","sessionID":%q},"parts":[{"type":"text","text":"round %d"}]}]}}`,
					k, r, parent, k, r, parent, k, r, parent, r))
				notify("event", fmt.Sprintf(
					`{"input":{"event":{"type":"session.status","properties":{"sessionID":%q,"status":{"type":"idle"}}}}}`, task))
			}
		}
		// Some parents are deleted; the others never are, so only the
		// bounds keep memory flat.
		for k := g; k < end; k++ {
			if k%3 == 0 {
				notify("event", fmt.Sprintf(
					`{"input":{"event":{"type":"session.deleted","properties":{"sessionID":"ses_p%06d","info":{"id":"ses_p%06d"}}}}}`, k, k))
			}
		}
		d.flush()
	}
	measure("end")
	d.waitReplies()
	close(d.points)
	d.exit(10 * time.Second)
	var out []soakPoint
	for p := range d.points {
		out = append(out, p)
	}
	return out, d.calls
}

// soakStall is how long a soak waits for the next reply before it kills
// the sidecar and fails: far beyond any one reply on a loaded machine, and
// well within go test's -timeout, so a stall fails with the sidecar's log
// rather than a dump of every goroutine.
const soakStall = 2 * time.Minute

// soakWatchdog kills cmd's process once replies has not moved for
// soakStall, and then closes stalled (the writer, blocked on a full pipe,
// then fails too). It watches until stop is called (any number of times)
// or the test ends.
func soakWatchdog(t *testing.T, cmd *exec.Cmd, replies *atomic.Int64) (stalled <-chan struct{}, stop func()) {
	stalledC, stopC := make(chan struct{}), make(chan struct{})
	var once sync.Once
	stop = func() { once.Do(func() { close(stopC) }) }
	t.Cleanup(stop)
	go func() {
		tick := time.NewTicker(time.Second)
		defer tick.Stop()
		last, since := int64(-1), time.Now()
		for {
			select {
			case <-stopC:
				return
			case <-tick.C:
			}
			if n := replies.Load(); n != last {
				last, since = n, time.Now()
			} else if time.Since(since) > soakStall {
				cmd.Process.Kill()
				close(stalledC)
				return
			}
		}
	}()
	return stalledC, stop
}

// stallNote says whether the watchdog killed the sidecar.
func stallNote(stalled <-chan struct{}) string {
	select {
	case <-stalled:
		return fmt.Sprintf("no reply for %v: the watchdog killed the sidecar", soakStall)
	default:
		return "the sidecar was not stalled"
	}
}

// soakRead reads replies in order and checks each against its expectation,
// counting them in replies.
func soakRead(r io.Reader, expects <-chan soakExpect, labels <-chan string, points chan<- soakPoint, pid int, began time.Time, replies *atomic.Int64) error {
	br := bufio.NewReaderSize(r, 1<<20)
	dec := jsontext.NewDecoder(bytes.NewBuffer(nil))
	n := 0
	for want := range expects {
		line, err := br.ReadSlice('\n')
		if err != nil {
			return fmt.Errorf("reply %d (id %d): %w", n, want.id, err)
		}
		n++
		replies.Add(1)
		rep, err := decodeReply(dec, line)
		if err != nil {
			return fmt.Errorf("reply %.200q: %w", line, err)
		}
		if rep.ID != want.id {
			return fmt.Errorf("reply for id %d, want %d (out of order or missing)", rep.ID, want.id)
		}
		if rep.Error != nil {
			return fmt.Errorf("id %d: error %s", rep.ID, rep.Error)
		}
		switch want.kind {
		case expectPatch:
			if !bytes.Contains(rep.Result, []byte(`"op"`)) {
				return fmt.Errorf("id %d: empty patch %s", rep.ID, rep.Result)
			}
		case expectResume:
			if !bytes.Contains(rep.Result, []byte(`"path":"/args/task_id","value":"`+want.want+`"`)) {
				return fmt.Errorf("id %d: resume by alias did not resolve to %s: %s", rep.ID, want.want, rep.Result)
			}
		case expectStatus:
			var st struct {
				statusReply
				Memory struct {
					HeapAllocBytes uint64 `json:"heapAllocBytes"`
					Goroutines     int    `json:"goroutines"`
				} `json:"memory"`
			}
			if err := json.Unmarshal(rep.Result, &st); err != nil {
				return fmt.Errorf("status %s: %w", rep.Result, err)
			}
			points <- soakPoint{label: <-labels, calls: int(rep.ID), rssKB: vmRSSKB(pid), heapBytes: st.Memory.HeapAllocBytes,
				goroutines: st.Memory.Goroutines, store: st.Store, at: time.Since(began)}
		}
	}
	return nil
}

// soakReply is a reply as soakRead checks it; Result and Error alias the
// line it was decoded from.
type soakReply struct {
	ID     int64
	Result []byte
	Error  []byte
}

// decodeReply checks that line is one JSON object and picks out its id,
// result and error, in one pass and without copying: replies of the
// hostile soak run to hundreds of KB, and decoding them with
// encoding/json cost the race-instrumented test more than the sidecar
// spent answering.
func decodeReply(dec *jsontext.Decoder, line []byte) (soakReply, error) {
	var rep soakReply
	dec.Reset(bytes.NewBuffer(line))
	if tok, err := dec.ReadToken(); err != nil || tok.Kind() != '{' {
		return rep, fmt.Errorf("not an object (%v)", err)
	}
	for dec.PeekKind() != '}' {
		name, err := dec.ReadToken()
		if err != nil {
			return rep, err
		}
		key := name.String()
		if key == "id" {
			tok, err := dec.ReadToken()
			if err != nil || tok.Kind() != '0' {
				return rep, fmt.Errorf("id is not a number (%v)", err)
			}
			rep.ID, _ = tok.Int()
			continue
		}
		from := dec.InputOffset()
		if err := dec.SkipValue(); err != nil {
			return rep, err
		}
		// From the end of the name: the colon and any space, then the value.
		value := bytes.TrimLeft(line[from:dec.InputOffset()], ": \t\r\n")
		switch key {
		case "result":
			rep.Result = value
		case "error":
			rep.Error = value
		}
	}
	if _, err := dec.ReadToken(); err != nil {
		return rep, err
	}
	if _, err := dec.ReadToken(); err != io.EOF {
		return rep, fmt.Errorf("more than one value on a line (%v)", err)
	}
	return rep, nil
}

// vmRSSKB is the process's resident set size in KiB (/proc/PID/status).
func vmRSSKB(pid int) int {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return -1
	}
	for _, line := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			var kb int
			fmt.Sscanf(strings.TrimSpace(v), "%d", &kb)
			return kb
		}
	}
	return -1
}

// checkSoak prints the figures and fails on growth: end RSS over 1.5x the
// middle's plus slack, more goroutines at the end than at the start, or a
// store beyond its configured bounds (defaults: PROTOCOL.md 7).
func checkSoak(t *testing.T, points []soakPoint, calls int, elapsed time.Duration) {
	t.Helper()
	require.Len(t, points, 3, "measurements")
	t.Logf("%d calls in %v (%.0f calls/s)", calls, elapsed.Round(time.Millisecond), float64(calls)/elapsed.Seconds())
	for _, p := range points {
		t.Logf("%-6s after %8d requests at %7v: RSS %6d KiB, heap %6d KiB, goroutines %d, store %+v",
			p.label, p.calls, p.at.Round(time.Millisecond), p.rssKB, p.heapBytes>>10, p.goroutines, p.store)
	}
	start, middle, end := points[0], points[1], points[2]
	const slackKB = 16 << 10
	assert.LessOrEqual(t, end.rssKB, middle.rssKB*3/2+slackKB, "RSS grew from the middle to the end")
	assert.LessOrEqual(t, end.goroutines, start.goroutines, "goroutines grew")
	for _, p := range points {
		assert.LessOrEqual(t, p.store.Parents, sessions.DefaultMaxParents, "%s: parents", p.label)
		assert.LessOrEqual(t, p.store.TrackedSessions, soakMaxTracked, "%s: tracked sessions", p.label)
		assert.LessOrEqual(t, p.store.PendingCalls, sessions.DefaultMaxPendingCalls, "%s: pending calls", p.label)
		// Two agents per parent, each keeping maxSessionsPerAgent entries.
		assert.LessOrEqual(t, p.store.Entries, p.store.Parents*2*sessions.DefaultMaxSessionsPerAgent, "%s: entries", p.label)
	}
}

// buildPlain returns hookwire built without -race, once per test binary:
// the race detector's shadow memory would swamp the RSS figures and slow a
// soak or a large load several times over.
func buildPlain(t testing.TB) string {
	t.Helper()
	plain.once.Do(func() {
		bin := filepath.Join(testDir, "hookwire-plain")
		if out, err := goBuild("-o", bin, ".").CombinedOutput(); err != nil {
			plain.err = fmt.Errorf("building hookwire: %w: %s", err, out)
			return
		}
		plain.path = bin
	})
	require.NoError(t, plain.err)
	return plain.path
}

// goBuild is `go build args...` for a plain (not race) binary, built as
// the Makefile and the linux/amd64 release build do (no cgo, -trimpath),
// so that the packages it compiles (modernc's SQLite above all, about 75
// CPU-seconds from an empty build cache) are the ones those builds share,
// not one more compilation of them in `make test`.
func goBuild(args ...string) *exec.Cmd {
	cmd := exec.Command("go", append([]string{"build", "-trimpath"}, args...)...)
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	return cmd
}

var plain struct {
	once sync.Once
	path string
	err  error
}

// TestSoakShort is the soak at a small scale (about 50,000 calls over 500
// parents, a few seconds); TestSoak (go test -tags soak) is the full one.
func TestSoakShort(t *testing.T) {
	if testing.Short() {
		t.Skip("soak skipped in -short mode")
	}
	bin := buildPlain(t)
	began := time.Now()
	points, calls := runSoak(t, soakConfig{bin: bin, parents: 500, rounds: 14, group: 25})
	checkSoak(t, points, calls, time.Since(began))
}

// hostileSoak shapes a soak with hostile sizes and cacheStable on: per
// parent (a long session id), agents tasks for agents with long names,
// long call and task ids, then messages orchestrator messages in batches,
// each message freezing a sessions block; and one session whose agent name
// is 50 KB (over its cap).
type hostileSoak struct {
	bin      string
	parents  int
	agents   int
	messages int
}

// hostileResult is what a hostile soak measured.
type hostileResult struct {
	calls      int
	peakRSSKB  int // VmHWM at the end
	stateBytes int64
	store      sessions.Stats
	elapsed    time.Duration
}

// soakMemoryCeilingKB is the documented ceiling (README, PROTOCOL.md 7) of
// the sidecar's peak RSS under the hostile soak with default limits.
const soakMemoryCeilingKB = 96 << 10

func runHostileSoak(t *testing.T, cfg hostileSoak) hostileResult {
	t.Helper()
	state := filepath.Join(t.TempDir(), "state.db")
	d := startSoak(t, cfg.bin, 2, "--framing", "line", "--log-level", "warn", "--state", state)
	send := func(kind int, method, params string) { d.send(kind, "", method, params) }
	long := func(prefix string, n, k int) string {
		return fmt.Sprintf("%s%s%06d", prefix, strings.Repeat("x", n), k)
	}
	hugeAgent := strings.Repeat("h", 50<<10)

	send(expectAny, "initialize", `{"protocolVersion":1,"config":{"cacheStable":true}}`)
	msgID := 0
	for k := 0; k < cfg.parents; k++ {
		parent := long("ses_", 200, k)
		send(expectAny, "chat.message", fmt.Sprintf(
			`{"input":{"sessionID":%q,"agent":"orchestrator"},"output":{"message":{"id":"m_%d","role":"user"},"parts":[]}}`, parent, k))
		send(expectAny, "chat.message", fmt.Sprintf(
			`{"input":{"sessionID":"ses_side_%d","agent":%q},"output":{"message":{"id":"s_%d","role":"user"},"parts":[]}}`, k, hugeAgent, k))
		for a := 0; a < cfg.agents; a++ {
			agent := long("agent ", 190, a)
			call := long("call_", 200, k*cfg.agents+a)
			task := long("ses_task_", 200, k*cfg.agents+a)
			send(expectAny, "tool.execute.before", fmt.Sprintf(
				`{"input":{"tool":"task","sessionID":%q,"callID":%q},"output":{"args":{"subagent_type":%q,"description":%q,"prompt":"do it"}}}`,
				parent, call, agent, strings.Repeat("describe the work ", 100)))
			send(expectAny, "tool.execute.after", fmt.Sprintf(
				`{"input":{"tool":"task","sessionID":%q,"callID":%q},"output":{"title":"t","output":"task_id: %s\n\nok","metadata":{}}}`,
				parent, call, task))
		}
		const batch = 32
		for m := 0; m < cfg.messages; m += batch {
			var msgs []string
			for j := 0; j < batch && m+j < cfg.messages; j++ {
				msgID++
				msgs = append(msgs, fmt.Sprintf(`{"info":{"id":"msg_%08d","role":"user","agent":"orchestrator","sessionID":%q},"parts":[{"type":"text","text":"turn %d"}]}`,
					msgID, parent, m+j))
			}
			send(expectPatch, "chat.messages.transform", `{"input":{},"output":{"messages":[`+strings.Join(msgs, ",")+`]}}`)
		}
		d.flush()
	}
	d.measure("end")
	d.waitReplies()
	end := <-d.points
	peak := vmHWMKB(d.pid)
	t.Logf("at the end: RSS %d KiB, heap %d KiB", end.rssKB, end.heapBytes>>10)
	d.exit(30 * time.Second)
	fi, err := os.Stat(state)
	require.NoError(t, err)
	return hostileResult{calls: d.calls, peakRSSKB: peak, stateBytes: fi.Size(), store: end.store, elapsed: time.Since(d.began)}
}

// vmHWMKB is the process's peak resident set size in KiB.
func vmHWMKB(pid int) int {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return -1
	}
	for _, line := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			var kb int
			fmt.Sscanf(strings.TrimSpace(v), "%d", &kb)
			return kb
		}
	}
	return -1
}

// checkHostileSoak prints the figures and fails when the state database
// is over the byte budget plus SQLite's page overhead (PROTOCOL.md 7: an
// eighth) or the peak RSS over the documented ceiling.
func checkHostileSoak(t *testing.T, r hostileResult) {
	t.Helper()
	t.Logf("%d calls in %v: peak RSS %d KiB, state file %d bytes, store %+v",
		r.calls, r.elapsed.Round(time.Millisecond), r.peakRSSKB, r.stateBytes, r.store)
	assert.LessOrEqual(t, r.stateBytes, int64(sessions.DefaultMaxStateBytes)*9/8, "state database over the byte budget and its page overhead")
	if r.peakRSSKB > 0 {
		assert.LessOrEqual(t, r.peakRSSKB, soakMemoryCeilingKB, "peak RSS over the documented ceiling")
	}
}

// TestSoakHostileShort is the hostile soak at a small scale; TestSoakHostile
// (go test -tags soak) is the full one.
func TestSoakHostileShort(t *testing.T) {
	if testing.Short() {
		t.Skip("soak skipped in -short mode")
	}
	bin := buildPlain(t)
	// About 16 of these parents fill the byte budget: 32 reach it and
	// evict half again as many (120 took two minutes of CI's test-go).
	const parents = 32
	r := runHostileSoak(t, hostileSoak{bin: bin, parents: parents, agents: 8, messages: 256})
	checkHostileSoak(t, r)
	assert.Less(t, r.store.Parents, parents, "the byte budget evicted parents")
}
