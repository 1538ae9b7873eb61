package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hookwire/hookwire/sessiondb"
	"github.com/hookwire/hookwire/sessions"
)

// The cross-process load test (issue 30 items 5 and 12): several `hookwire
// serve` processes on one state database, each driven by its own client
// at full rate (the next request as soon as the reply is in, as a busy
// OpenCode would), for a while. Every task call creates a task session
// and every third one resumes the newest by its alias, so every process
// writes all the time. It measures each hook call's latency as the shim
// sees it (its hook deadline is 250 ms), samples the size of FILE-wal and
// FILE, and at the end reads the database back: every task session a
// process was answered for is there under the alias it was given, and
// every resume was rewritten to the right task session.
//
// TestLoadShort (make test) runs it for a few seconds and asserts nothing
// lost and the WAL bound; TestLoad (make load, the load build tag) runs 8
// processes for 30 s and asserts the latency figures too.

// loadConfig shapes one load run.
type loadConfig struct {
	bin     string
	procs   int
	dur     time.Duration
	parents int // parents per process
}

// loadAgents are the agents every parent delegates to, with their alias
// prefixes (the default prefix is the name's first three letters).
var loadAgents = []struct{ name, prefix string }{{"explorer", "exp"}, {"oracle", "ora"}, {"fixer", "fix"}}

// loadResult is what one run measured.
type loadResult struct {
	bin       string
	procs     int
	elapsed   time.Duration
	lat       []time.Duration // every hook call's round trip
	after     []time.Duration // tool.execute.after's alone
	walPeak   int64           // FILE-wal's largest size seen
	totalPeak int64           // FILE plus FILE-wal, largest seen
	created   int             // task sessions the processes were answered for
	resumes   int
	problems  []string // lost writes, wrong resumes, errors
}

// loadClient drives one sidecar over line framing, one request at a time.
type loadClient struct {
	cmd   *exec.Cmd
	in    *bufio.Writer
	stdin io.Closer
	out   *bufio.Reader
	id    int
}

func (c *loadClient) call(method, params string) (json.RawMessage, time.Duration, error) {
	c.id++
	began := time.Now()
	fmt.Fprintf(c.in, `{"jsonrpc":"2.0","id":%d,"method":%q,"params":%s}`+"\n", c.id, method, params)
	if err := c.in.Flush(); err != nil {
		return nil, 0, err
	}
	line, err := c.out.ReadBytes('\n')
	took := time.Since(began)
	if err != nil {
		return nil, took, err
	}
	var rep struct {
		ID     int             `json:"id"`
		Result json.RawMessage `json:"result"`
		Error  json.RawMessage `json:"error"`
	}
	if err := json.Unmarshal(line, &rep); err != nil {
		return nil, took, fmt.Errorf("reply %.200q: %w", line, err)
	}
	if rep.ID != c.id || rep.Error != nil {
		return nil, took, fmt.Errorf("%s: reply %.300s", method, line)
	}
	return rep.Result, took, nil
}

// loadProc is one process's share of a run, filled by its client.
type loadProc struct {
	lat, after []time.Duration
	// made[parent][agent] lists the task sessions created, in order: the
	// n-th got the alias <prefix>-n.
	made     map[string][][]string
	resumes  int
	problems []string
}

func runLoad(t *testing.T, cfg loadConfig) loadResult {
	t.Helper()
	dir := t.TempDir()
	state := filepath.Join(dir, "state.db")
	clients := make([]*loadClient, cfg.procs)
	for i := range clients {
		cmd := exec.Command(cfg.bin, "serve", "--framing", "line", "--log-level", "warn", "--state", state)
		stdin, err := cmd.StdinPipe()
		require.NoError(t, err)
		stdout, err := cmd.StdoutPipe()
		require.NoError(t, err)
		cmd.Stderr = os.Stderr
		require.NoError(t, cmd.Start())
		c := &loadClient{cmd: cmd, in: bufio.NewWriter(stdin), stdin: stdin, out: bufio.NewReaderSize(stdout, 1<<16)}
		clients[i] = c
		t.Cleanup(func() { stdin.Close(); cmd.Process.Kill(); cmd.Wait() })
		_, _, err = c.call("initialize", `{"protocolVersion":1,"clientInfo":{"name":"load","version":"1"}}`)
		require.NoError(t, err)
	}

	// The files' sizes, sampled while the run goes on.
	var walPeak, totalPeak int64
	stopSampling := make(chan struct{})
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		tick := time.NewTicker(10 * time.Millisecond)
		defer tick.Stop()
		for {
			var wal, db int64
			if fi, err := os.Stat(state + "-wal"); err == nil {
				wal = fi.Size()
			}
			if fi, err := os.Stat(state); err == nil {
				db = fi.Size()
			}
			walPeak, totalPeak = max(walPeak, wal), max(totalPeak, wal+db)
			select {
			case <-stopSampling:
				return
			case <-tick.C:
			}
		}
	}()

	procs := make([]*loadProc, cfg.procs)
	var wg sync.WaitGroup
	began := time.Now()
	deadline := began.Add(cfg.dur)
	for i, c := range clients {
		lp := &loadProc{made: map[string][][]string{}}
		procs[i] = lp
		wg.Go(func() { driveLoad(c, lp, i, cfg.parents, deadline) })
	}
	wg.Wait()
	elapsed := time.Since(began)
	// A clean exit: each process writes what it holds and closes.
	for i, c := range clients {
		c.stdin.Close()
		if err := c.cmd.Wait(); err != nil {
			procs[i].problems = append(procs[i].problems, fmt.Sprintf("process %d exit: %v", i, err))
		}
	}
	close(stopSampling)
	<-sampled

	res := loadResult{bin: cfg.bin, procs: cfg.procs, elapsed: elapsed, walPeak: walPeak, totalPeak: totalPeak}
	for _, lp := range procs {
		res.lat = append(res.lat, lp.lat...)
		res.after = append(res.after, lp.after...)
		res.resumes += lp.resumes
		res.problems = append(res.problems, lp.problems...)
	}
	res.problems = append(res.problems, checkLoadKept(t, state, procs, &res.created)...)
	return res
}

// driveLoad is process i's client: task calls round-robin over its
// parents and the agents until deadline; every third call resumes the
// newest session of its agent by alias instead of creating one.
func driveLoad(c *loadClient, lp *loadProc, i, parents int, deadline time.Time) {
	fail := func(err error) { lp.problems = append(lp.problems, fmt.Sprintf("process %d: %v", i, err)) }
	hook := func(method, params string) (json.RawMessage, bool) {
		res, took, err := c.call(method, params)
		if err != nil {
			fail(err)
			return nil, false
		}
		lp.lat = append(lp.lat, took)
		if method == "tool.execute.after" {
			lp.after = append(lp.after, took)
		}
		return res, true
	}
	names := make([]string, parents)
	for k := range names {
		names[k] = fmt.Sprintf("ses_load%02d_p%03d", i, k)
		lp.made[names[k]] = make([][]string, len(loadAgents))
		if _, ok := hook("chat.message", fmt.Sprintf(`{"input":{"sessionID":%q,"agent":"orchestrator"},"output":{"message":{},"parts":[]}}`, names[k])); !ok {
			return
		}
	}
	for n := 0; time.Now().Before(deadline); n++ {
		parent := names[n%parents]
		ag := (n / parents) % len(loadAgents)
		agent := loadAgents[ag]
		call := fmt.Sprintf("call_%d_%d", i, n)
		made := lp.made[parent][ag]
		if n%3 == 2 && len(made) > 0 {
			// Resume the newest session by its alias: the before must
			// rewrite the alias to its task id.
			task := made[len(made)-1]
			alias := fmt.Sprintf("%s-%d", agent.prefix, len(made))
			res, ok := hook("tool.execute.before", fmt.Sprintf(
				`{"input":{"tool":"task","sessionID":%q,"callID":%q},"output":{"args":{"subagent_type":%q,"description":"more","prompt":"again","task_id":%q}}}`,
				parent, call, agent.name, alias))
			if !ok {
				return
			}
			if !strings.Contains(string(res), `"value":"`+task+`"`) {
				fail(fmt.Errorf("resume of %s under %s: patch %s, want task %s", alias, parent, res, task))
			}
			lp.resumes++
			if _, ok := hook("tool.execute.after", fmt.Sprintf(
				`{"input":{"tool":"task","sessionID":%q,"callID":%q},"output":{"output":"task_id: %s (for resuming to continue this task if needed)\n\n<task_result>ok</task_result>"}}`,
				parent, call, task)); !ok {
				return
			}
			continue
		}
		task := fmt.Sprintf("ses_load%02d_t%06d", i, n)
		if _, ok := hook("tool.execute.before", fmt.Sprintf(
			`{"input":{"tool":"task","sessionID":%q,"callID":%q},"output":{"args":{"subagent_type":%q,"description":"work %d","prompt":"do it"}}}`,
			parent, call, agent.name, n)); !ok {
			return
		}
		if _, ok := hook("tool.execute.after", fmt.Sprintf(
			`{"input":{"tool":"task","sessionID":%q,"callID":%q},"output":{"title":"t","output":"<task id=\"%s\" state=\"completed\">\ndone\n</task>","metadata":{}}}`,
			parent, call, task)); !ok {
			return
		}
		lp.made[parent][ag] = append(made, task)
	}
}

// checkLoadKept reads the database after every process exited: each
// (parent, agent) keeps its newest sessions (the default bound of 2 per
// agent) under the aliases their creation was given.
func checkLoadKept(t *testing.T, state string, procs []*loadProc, created *int) []string {
	t.Helper()
	contents, err := sessiondb.ReadState(state)
	require.NoError(t, err)
	have := map[string]string{} // parent \x00 alias -> task
	for _, e := range contents.Sessions {
		have[e.Parent+"\x00"+e.Alias] = e.TaskID
	}
	var lost []string
	for _, lp := range procs {
		for parent, byAgent := range lp.made {
			for ag, made := range byAgent {
				*created += len(made)
				for n := max(0, len(made)-sessions.DefaultMaxSessionsPerAgent); n < len(made); n++ {
					alias := fmt.Sprintf("%s-%d", loadAgents[ag].prefix, n+1)
					if got := have[parent+"\x00"+alias]; got != made[n] {
						lost = append(lost, fmt.Sprintf("%s %s: database has %q, want %s", parent, alias, got, made[n]))
					}
				}
			}
		}
	}
	return lost
}

// quantile is the q-quantile (0..1) of sorted durations.
func quantile(sorted []time.Duration, q float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := int(math.Ceil(q*float64(len(sorted)))) - 1
	return sorted[min(max(i, 0), len(sorted)-1)]
}

// loadFigures are a run's latency figures.
type loadFigures struct {
	n              int
	p50, p99, max  time.Duration
	over250        int
	share250       float64 // over250 / n
	afterP99       time.Duration
	afterOver250   int
	callsPerSecond float64
}

func (r loadResult) figures() loadFigures {
	all := slices.Clone(r.lat)
	slices.Sort(all)
	after := slices.Clone(r.after)
	slices.Sort(after)
	f := loadFigures{n: len(all), p50: quantile(all, 0.5), p99: quantile(all, 0.99), afterP99: quantile(after, 0.99)}
	if len(all) > 0 {
		f.max = all[len(all)-1]
	}
	for _, d := range all {
		if d > 250*time.Millisecond {
			f.over250++
		}
	}
	for _, d := range after {
		if d > 250*time.Millisecond {
			f.afterOver250++
		}
	}
	if f.n > 0 {
		f.share250 = float64(f.over250) / float64(f.n)
	}
	f.callsPerSecond = float64(f.n) / r.elapsed.Seconds()
	return f
}

func (r loadResult) log(t *testing.T, label string) {
	t.Helper()
	f := r.figures()
	t.Logf("%s: %d processes, %v: %d hook calls (%.0f/s; %d task sessions, %d resumes): p50 %v, p99 %v, max %v, over 250 ms %d (%.3f%%); tool.execute.after p99 %v, over 250 ms %d of %d; WAL peak %.1f MiB, database+WAL peak %.1f MiB; lost or wrong %d",
		label, r.procs, r.elapsed.Round(time.Millisecond), f.n, f.callsPerSecond, r.created, r.resumes,
		f.p50.Round(10*time.Microsecond), f.p99.Round(10*time.Microsecond), f.max.Round(10*time.Microsecond), f.over250, 100*f.share250,
		f.afterP99.Round(10*time.Microsecond), f.afterOver250, len(r.after),
		float64(r.walPeak)/(1<<20), float64(r.totalPeak)/(1<<20), len(r.problems))
	for i, p := range r.problems {
		if i == 10 {
			t.Logf("... and %d more", len(r.problems)-10)
			break
		}
		t.Log(p)
	}
}

// The WAL bound of PROTOCOL.md 6: FILE-wal under 16 MiB, FILE and FILE-wal
// together under 24 MiB.
const (
	loadWALBound   = 16 << 20
	loadTotalBound = 24 << 20
)

// assertLoadKept asserts what holds however loaded the machine is:
// nothing lost, every resume right, the files within their bound.
func assertLoadKept(t *testing.T, r loadResult) {
	t.Helper()
	assert.Empty(t, r.problems, "lost writes, wrong resumes or errors")
	assert.Positive(t, r.created, "task sessions created")
	assert.Less(t, r.walPeak, int64(loadWALBound), "FILE-wal's peak size")
	assert.Less(t, r.totalPeak, int64(loadTotalBound), "FILE plus FILE-wal's peak size")
}

// TestLoadShort is the load test's short pass: 8 processes for 3 s.
// Latency is only logged here (a loaded CI machine says nothing about
// it); nothing lost and the WAL bound are asserted.
func TestLoadShort(t *testing.T) {
	if testing.Short() {
		t.Skip("starts 8 sidecars for 3 s")
	}
	r := runLoad(t, loadConfig{bin: buildPlain(t), procs: 8, dur: 3 * time.Second, parents: 20})
	r.log(t, "short load")
	assertLoadKept(t, r)
}
