package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hookwire/hookwire/sessiondb"
	"github.com/hookwire/hookwire/sessions"
)

// The state database through real processes (PROTOCOL.md 6): crash
// safety, restarts, sharing between processes, read-only, hostile files.

// stateFileReply is status.stateFile.
type stateFileReply struct {
	Mode     string   `json:"mode"`
	Path     string   `json:"path"`
	Reason   string   `json:"reason"`
	Warnings []string `json:"warnings"`
}

func (p *proc) stateFile() stateFileReply {
	p.t.Helper()
	r := p.call("status", nil)
	require.Nil(p.t, r.Error, "status failed")
	var st struct {
		StateFile stateFileReply `json:"stateFile"`
	}
	require.NoError(p.t, json.Unmarshal(r.Result, &st))
	return st.StateFile
}

// loadedStats is what the state at path holds, as status reports it.
func loadedStats(t *testing.T, state string) sessions.Stats {
	t.Helper()
	got, err := sessiondb.ReadState(state)
	require.NoError(t, err)
	return sessions.Stats{Parents: got.Parents, Entries: len(got.Sessions), TrackedSessions: got.TrackedSessions, FrozenBlocks: got.FrozenBlocks}
}

// resumes reports the task id p puts in place of alias under parent, ""
// when it resolves nothing.
func (p *proc) resumes(parent, agent, alias string) string {
	p.t.Helper()
	patch := p.hookCall("tool.execute.before", fmt.Sprintf(
		`{"input":{"tool":"task","sessionID":%q,"callID":"probe_%d"},"output":{"args":{"subagent_type":%q,"description":"more","task_id":%q}}}`,
		parent, time.Now().UnixNano(), agent, alias))
	var ops []struct {
		Op    string `json:"op"`
		Value string `json:"value"`
	}
	require.NoError(p.t, json.Unmarshal([]byte(patch), &ops))
	if len(ops) == 1 && ops[0].Op == "replace" {
		return ops[0].Value
	}
	return ""
}

// TestFaultKill9DuringStateWrites: kill -9 at random moments while task
// calls are written, repeated, never leaves a database that does not open,
// and every task whose tool.execute.after was answered (committed) is
// there after the kill.
func TestFaultKill9DuringStateWrites(t *testing.T) {
	dir := t.TempDir()
	state := filepath.Join(dir, "state.db")
	seed := faultSeed(t)
	t.Logf("seed %d (HOOKWIRE_FAULT_SEED=%d replays the kill delays)", seed, seed)
	rng := rand.New(rand.NewPCG(1, seed))
	rounds := 12
	if testing.Short() {
		rounds = 4
	}
	committed := map[string]bool{} // task ids answered, over all rounds
	for round := range rounds {
		p := start(t, false, "--state", state)
		r := p.call("initialize", map[string]any{"protocolVersion": 1, "config": map[string]any{"maxParents": 100000}})
		require.Nil(t, r.Error)
		st := p.status()
		assert.True(t, strings.HasPrefix(st.State, "persistent"), "round %d: state %q", round, st.State)
		if round > 0 {
			assert.Equal(t, loadedStats(t, state), st.Store, "round %d: restarted with what the database holds", round)
		}
		p.orchestrate("ses_parent")

		// Task calls keep coming, each from its own orchestrator parent
		// (so no bound forgets one), while a reader notes each answered
		// tool.execute.after; the kill lands anywhere.
		var mu sync.Mutex
		answered := map[int]bool{}
		stop := make(chan struct{})
		drained := make(chan struct{})
		go func() {
			defer close(drained)
			sc := bufio.NewScanner(p.out)
			sc.Buffer(make([]byte, 1<<20), 1<<20)
			for sc.Scan() {
				var rep struct {
					ID    int             `json:"id"`
					Error json.RawMessage `json:"error"`
				}
				if json.Unmarshal(sc.Bytes(), &rep) == nil && rep.Error == nil && rep.ID > 0 && rep.ID%2 == 0 {
					mu.Lock()
					answered[rep.ID/2] = true
					mu.Unlock()
				}
			}
		}()
		go func() {
			for i := 1; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				parent, call := fmt.Sprintf("ses_r%dp%d", round, i), fmt.Sprintf("c%d", i)
				msgs := fmt.Sprintf(
					`{"jsonrpc":"2.0","id":0,"method":"chat.message","params":{"input":{"sessionID":%q,"agent":"orchestrator"},"output":{"message":{},"parts":[]}}}`+"\n", parent) + fmt.Sprintf(
					`{"jsonrpc":"2.0","id":%d,"method":"tool.execute.before","params":{"input":{"tool":"task","sessionID":%q,"callID":%q},"output":{"args":{"subagent_type":"explorer","description":"task %d"}}}}`+"\n"+
						`{"jsonrpc":"2.0","id":%d,"method":"tool.execute.after","params":{"input":{"tool":"task","sessionID":%q,"callID":%q},"output":{"output":"task_id: ses_r%dt%d"}}}`+"\n",
					2*i-1, parent, call, i, 2*i, parent, call, round, i)
				if _, err := io.WriteString(p.stdin, msgs); err != nil {
					return
				}
			}
		}()
		time.Sleep(time.Duration(150+rng.IntN(600)) * time.Millisecond)
		require.NoError(t, p.cmd.Process.Kill())
		close(stop)
		p.waitExit()
		<-drained

		got, err := sessiondb.ReadState(state)
		require.NoError(t, err, "round %d: the database does not open after kill -9", round)
		mu.Lock()
		for i := range answered {
			committed[fmt.Sprintf("ses_r%dt%d", round, i)] = true
		}
		t.Logf("round %d: %d task calls answered before the kill", round, len(answered))
		mu.Unlock()
		have := map[string]bool{}
		for _, e := range got.Sessions {
			have[e.TaskID] = true
		}
		for id := range committed {
			require.True(t, have[id], "round %d: committed task %s lost", round, id)
		}
		corrupt, _ := filepath.Glob(state + ".corrupt-*")
		require.Empty(t, corrupt, "round %d: the database was moved aside", round)
	}
	assert.NotEmpty(t, committed)
}

// TestFaultAliasSurvivesRestart: an alias handed out before a restart still
// resolves to its task session after it, however the first process ended.
func TestFaultAliasSurvivesRestart(t *testing.T) {
	for _, how := range []string{"shutdown", "SIGTERM", "EOF", "SIGKILL"} {
		t.Run(how, func(t *testing.T) {
			state := filepath.Join(t.TempDir(), "state.db")
			p := start(t, false, "--state", state)
			p.initialize()
			p.orchestrate("ses_parent")
			p.createTask("ses_parent", "call_1", "explorer", "ses_real_explorer_1")
			switch how {
			case "shutdown":
				require.Nil(t, p.call("shutdown", nil).Error)
				p.send("exit", nil, nil)
			case "SIGTERM":
				require.NoError(t, p.cmd.Process.Signal(syscall.SIGTERM))
			case "EOF":
				p.stdin.Close()
			case "SIGKILL":
				require.NoError(t, p.cmd.Process.Kill())
			}
			code := p.waitExit()
			if how != "SIGKILL" {
				require.Equal(t, 0, code, "log: %s", p.stderr.String())
			}

			q := start(t, false, "--state", state)
			q.initialize()
			assert.Equal(t, "ses_real_explorer_1", q.resumes("ses_parent", "explorer", "exp-1"),
				"exp-1 after the restart; log: %s", q.stderr.String())
		})
	}
}

// TestFaultTwoProcessesShareState: two `hookwire serve --project P` at
// once (issue 20's first "done when"): an alias made in either resolves in
// the other for the same parent, numbers never collide, and after both
// exit `hookwire sessions --project P --json` lists both's sessions.
func TestFaultTwoProcessesShareState(t *testing.T) {
	root := t.TempDir()
	t.Setenv("XDG_STATE_HOME", filepath.Join(root, "state"))
	project := filepath.Join(root, "proj")
	require.NoError(t, os.MkdirAll(project, 0o700))

	a := start(t, false, "--project", project)
	b := start(t, false, "--project", project)
	a.initialize()
	b.initialize()
	for _, p := range []*proc{a, b} {
		assert.Equal(t, "persistent", p.stateFile().Mode, "log: %s", p.stderr.String())
		p.orchestrate("ses_shared")
	}

	a.createTask("ses_shared", "call_a1", "explorer", "ses_from_a")
	assert.Equal(t, "ses_from_a", b.resumes("ses_shared", "explorer", "exp-1"), "b resolves a's alias")
	b.createTask("ses_shared", "call_b1", "explorer", "ses_from_b")
	assert.Equal(t, "ses_from_b", a.resumes("ses_shared", "explorer", "exp-2"), "b's task got exp-2, and a resolves it")
	assert.Equal(t, "ses_from_a", a.resumes("ses_shared", "explorer", "exp-1"))

	a.orchestrate("ses_only_a")
	a.createTask("ses_only_a", "call_a2", "oracle", "ses_oracle_a")
	b.orchestrate("ses_only_b")
	b.createTask("ses_only_b", "call_b2", "oracle", "ses_oracle_b")
	assert.Equal(t, "ses_oracle_b", a.resumes("ses_only_b", "oracle", "ora-1"))

	for _, p := range []*proc{a, b} {
		p.stdin.Close()
		require.Equal(t, 0, p.waitExit(), "log: %s", p.stderr.String())
	}
	out, err := exec.Command(binPath, "sessions", "--project", project, "--json").Output()
	require.NoError(t, err)
	var list sessionsList
	require.NoError(t, json.Unmarshal(out, &list))
	var got []string
	for _, e := range list.Sessions {
		got = append(got, e.Parent+" "+e.Alias+" "+e.TaskID)
	}
	assert.ElementsMatch(t, []string{
		"ses_shared exp-1 ses_from_a", "ses_shared exp-2 ses_from_b",
		"ses_only_a ora-1 ses_oracle_a", "ses_only_b ora-1 ses_oracle_b",
	}, got)
}

// runAsOther prepares cmd to run as another user when the test runs as
// root (who writes read-only files regardless), and returns a copy of the
// binary that user can run; as another user it returns binPath as is.
func runAsOther(t *testing.T) (bin string, prep func(*exec.Cmd), chown func(path string)) {
	t.Helper()
	if os.Geteuid() != 0 {
		return binPath, func(*exec.Cmd) {}, func(string) {}
	}
	const nobody = 65534
	dir, err := os.MkdirTemp("", "hookwire-ro-bin-*")
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(dir) })
	require.NoError(t, os.Chmod(dir, 0o755))
	data, err := os.ReadFile(binPath)
	require.NoError(t, err)
	bin = filepath.Join(dir, "hookwire")
	require.NoError(t, os.WriteFile(bin, data, 0o755))
	return bin, func(cmd *exec.Cmd) {
			cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: nobody, Gid: nobody}}
			cmd.Env = append(os.Environ(), "HOME="+dir)
		}, func(path string) {
			require.NoError(t, os.Lchown(path, nobody, nobody))
		}
}

// TestFaultReadOnlyStateDir: on a state directory that cannot be written,
// a new process resolves the aliases the database holds, keeps new ones in
// memory, says "read-only" in status with the reason and logs it once;
// the database is not changed.
func TestFaultReadOnlyStateDir(t *testing.T) {
	base, err := os.MkdirTemp("", "hookwire-ro-*")
	require.NoError(t, err)
	t.Cleanup(func() { os.Chmod(filepath.Join(base, "state"), 0o700); os.RemoveAll(base) })
	require.NoError(t, os.Chmod(base, 0o755))
	dir := filepath.Join(base, "state")
	state := filepath.Join(dir, "hookwire.db")

	p := start(t, false, "--state", state)
	p.initialize()
	p.orchestrate("ses_parent")
	p.createTask("ses_parent", "call_1", "explorer", "ses_t1")
	p.stdin.Close()
	require.Equal(t, 0, p.waitExit())
	before := loadedStats(t, state)

	bin, prep, chown := runAsOther(t)
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	for _, e := range entries {
		chown(filepath.Join(dir, e.Name()))
		require.NoError(t, os.Chmod(filepath.Join(dir, e.Name()), 0o400))
	}
	chown(dir)
	require.NoError(t, os.Chmod(dir, 0o500))

	cmd := exec.Command(bin, "serve", "--state", state)
	prep(cmd)
	q := startCmd(t, cmd, false)
	q.initialize()
	sf := q.stateFile()
	assert.Equal(t, "read-only", sf.Mode, "log: %s", q.stderr.String())
	assert.NotEmpty(t, sf.Reason)
	assert.Equal(t, "ses_t1", q.resumes("ses_parent", "explorer", "exp-1"), "an existing alias resolves")
	q.createTask("ses_parent", "call_2", "explorer", "ses_t2")
	assert.Equal(t, "ses_t2", q.resumes("ses_parent", "explorer", "exp-2"), "a new one lives in memory")
	q.stdin.Close()
	assert.Equal(t, 0, q.waitExit())
	assert.Equal(t, 1, strings.Count(q.stderr.String(), "state database is read-only"), "told once: %s", q.stderr.String())
	require.NoError(t, os.Chmod(dir, 0o700))
	assert.Equal(t, before, loadedStats(t, state), "the database is unchanged")
}

// TestFaultCorruptStateFile: a corrupt state file is moved aside to
// FILE.corrupt-<time>, kept as it was, and the sidecar starts empty (and
// persistent).
func TestFaultCorruptStateFile(t *testing.T) {
	for name, content := range map[string]string{
		"not JSON":        "{\"version\":1,\"parents\":[{\"id\":\"ses_",
		"binary":          "\x00\x01\x02\xff",
		"text":            strings.Repeat("not a database ", 200),
		"unknown version": `{"version":99,"parents":[]}`,
		"wrong types":     `{"version":1,"parents":"many"}`,
	} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			state := filepath.Join(dir, "state.db")
			require.NoError(t, os.WriteFile(state, []byte(content), 0o600))
			p := start(t, false, "--state", state)
			p.initialize()
			st := p.status()
			assert.True(t, strings.HasPrefix(st.State, "persistent"), "state %q", st.State)
			assert.Equal(t, sessions.Stats{}, st.Store, "starts empty")
			aside, _ := filepath.Glob(state + ".corrupt-*")
			require.Len(t, aside, 1, "moved aside")
			moved, err := os.ReadFile(aside[0])
			require.NoError(t, err)
			assert.Equal(t, content, string(moved), "the corrupt file is kept as it was")
			assert.Contains(t, p.stderr.String(), "corrupt")
			assert.NotEmpty(t, p.stateFile().Warnings, "status says so")

			p.orchestrate("ses_parent")
			p.createTask("ses_parent", "call_1", "explorer", "ses_t1")
			assert.Equal(t, 1, loadedStats(t, state).Entries)
		})
	}
}

// TestFaultForgetWhileRunning: hookwire forget works while a sidecar
// serves the database, which sees the change at its next request.
func TestFaultForgetWhileRunning(t *testing.T) {
	state := filepath.Join(t.TempDir(), "state.db")
	p := start(t, false, "--state", state)
	p.initialize()
	p.orchestrate("ses_a")
	p.createTask("ses_a", "call_1", "explorer", "ses_first")
	p.orchestrate("ses_b")
	p.createTask("ses_b", "call_2", "explorer", "ses_second")
	require.Equal(t, "ses_first", p.resumes("ses_a", "explorer", "exp-1"))

	out, err := exec.Command(binPath, "forget", "--state", state, "--parent", "ses_a").CombinedOutput()
	require.NoError(t, err, "%s", out)
	assert.Contains(t, string(out), "forgot 1 parent session, ")
	assert.Equal(t, "", p.resumes("ses_a", "explorer", "exp-1"), "the sidecar no longer resolves it")
	assert.Equal(t, "ses_second", p.resumes("ses_b", "explorer", "exp-1"))
	p.stdin.Close()
	require.Equal(t, 0, p.waitExit())
	assert.Equal(t, 1, loadedStats(t, state).Entries)

	// The usage says what this test shows (it once said forget was refused
	// while a sidecar held the file).
	help, err := exec.Command(binPath, "--help").Output()
	require.NoError(t, err)
	line := regexp.MustCompile(`(?m)^\s+forget remembered.*$`).FindString(string(help))
	assert.Contains(t, line, "works while a sidecar serves the file")
	assert.NotContains(t, line, "refused")
}

// writeManyAgentsState writes a JSON state file (an earlier release's)
// with agents agents under one parent, one entry each: the shape whose
// load was quadratic.
func writeManyAgentsState(t *testing.T, path string, agents int) []byte {
	t.Helper()
	var b bytes.Buffer
	b.WriteString(`{"version":1,"clock":` + fmt.Sprint(agents) + `,"parents":[{"id":"ses_parent","entries":[`)
	for i := range agents {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"agent":"agent %d","alias":"agent-%d-1","taskId":"ses_%08d","label":"a task for agent %d","lastUse":"2026-01-02T03:04:05Z","use":%d}`,
			i, i, i, i, i+1)
	}
	b.WriteString(`]}],"sessionAgents":[]}`)
	require.NoError(t, os.WriteFile(path, b.Bytes(), 0o600))
	return b.Bytes()
}

// TestFaultLargeStateLoads: a 9.4 MB JSON state file with 64k agents under
// one parent blocked initialize for minutes. It is imported within the
// reply deadline, keeping the newest agents.
func TestFaultLargeStateLoads(t *testing.T) {
	state := filepath.Join(t.TempDir(), "state.json")
	data := writeManyAgentsState(t, state, 64<<10)
	require.Greater(t, len(data), 9<<20, "as large as the file that blocked initialize")

	// Without -race: the bound is a process-level budget on the load's
	// time, which a quadratic load missed by minutes.
	p := startBin(t, buildPlain(t), false, "--state", state)
	began := time.Now()
	p.initialize() // recv's deadline: 10 s
	t.Logf("initialize with a %.1f MB state file answered in %v", float64(len(data))/(1<<20), time.Since(began))
	st := p.status()
	assert.True(t, strings.HasPrefix(st.State, "persistent"), "state %q", st.State)
	assert.Equal(t, sessions.MaxAgentsPerParent, st.Store.Entries)
	matches, _ := filepath.Glob(state + ".corrupt-*")
	assert.Empty(t, matches, "a valid file is never moved aside")
	kept, err := os.ReadFile(state + ".bak")
	require.NoError(t, err)
	assert.True(t, bytes.Equal(data, kept), "the JSON file is kept as FILE.bak")
}

// TestFaultStopDuringLoad: SIGTERM or EOF right after initialize, while a
// JSON state file is imported, ends the process promptly and cleanly; the
// JSON file is kept as it was (at FILE, or, once imported, at FILE.bak).
func TestFaultStopDuringLoad(t *testing.T) {
	for _, how := range []string{"SIGTERM", "EOF"} {
		t.Run(how, func(t *testing.T) {
			state := filepath.Join(t.TempDir(), "state.json")
			data := writeManyAgentsState(t, state, 64<<10)
			p := startBin(t, buildPlain(t), false, "--state", state)
			require.Eventually(t, func() bool { return strings.Contains(p.stderr.String(), "serving") },
				10*time.Second, 5*time.Millisecond, "log: %s", p.stderr.String())
			p.send("initialize", 1, map[string]any{"protocolVersion": 1})
			if how == "SIGTERM" {
				require.NoError(t, p.cmd.Process.Signal(syscall.SIGTERM))
			} else {
				p.stdin.Close()
			}
			assert.Equal(t, 0, p.waitExit(), "log: %s", p.stderr.String()) // waitExit's deadline: 10 s
			kept, err := os.ReadFile(state)
			require.NoError(t, err)
			if !bytes.Equal(data, kept) {
				bak, err := os.ReadFile(state + ".bak")
				require.NoError(t, err, "the state file changed and no copy was kept")
				assert.True(t, bytes.Equal(data, bak), "FILE.bak is not the JSON file")
				assert.Equal(t, sessions.MaxAgentsPerParent, loadedStats(t, state).Entries)
			}
			matches, _ := filepath.Glob(state + ".corrupt-*")
			assert.Empty(t, matches)
			leftovers, _ := filepath.Glob(state + ".migrating-*")
			assert.Empty(t, leftovers)
		})
	}
}

// TestFaultHostileStatePath: a FIFO or a symlink at the state path (issue
// 23): serve runs in memory at once and says why, sessions, forget and
// doctor refuse it within seconds, observe reports it and keeps serving;
// a link's target is untouched, a dangling one creates nothing.
func TestFaultHostileStatePath(t *testing.T) {
	for _, tt := range []struct {
		name  string
		plant func(t *testing.T, state, target string)
		why   string
	}{
		{"FIFO", func(t *testing.T, state, _ string) { require.NoError(t, syscall.Mkfifo(state, 0o600)) }, "not a regular file"},
		{"symlink", func(t *testing.T, state, target string) {
			require.NoError(t, os.WriteFile(target, []byte("precious"), 0o600))
			require.NoError(t, os.Symlink(target, state))
		}, "symbolic link"},
		{"dangling symlink", func(t *testing.T, state, target string) { require.NoError(t, os.Symlink(target, state)) }, "symbolic link"},
		{"symlink at -wal", func(t *testing.T, state, target string) {
			require.NoError(t, os.WriteFile(target, []byte("precious"), 0o600))
			require.NoError(t, os.Symlink(target, state+"-wal"))
		}, "symbolic link"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			state := filepath.Join(dir, "state.db")
			target := filepath.Join(t.TempDir(), "target")
			tt.plant(t, state, target)

			p := start(t, false, "--state", state)
			p.initialize()
			sf := p.stateFile()
			assert.Equal(t, "memory-only", sf.Mode)
			assert.Contains(t, sf.Reason, tt.why)
			p.orchestrate("ses_parent")
			p.createTask("ses_parent", "call_1", "explorer", "ses_t1")
			assert.Equal(t, "ses_t1", p.resumes("ses_parent", "explorer", "exp-1"), "served from memory")
			p.stdin.Close()
			assert.Equal(t, 0, p.waitExit())

			for _, args := range [][]string{
				{"sessions", "--state", state},
				{"forget", "--state", state, "--all"},
			} {
				cmd := exec.Command(binPath, args...)
				var stderr bytes.Buffer
				cmd.Stderr = &stderr
				done := make(chan error, 1)
				require.NoError(t, cmd.Start())
				go func() { done <- cmd.Wait() }()
				select {
				case err := <-done:
					var ee *exec.ExitError
					require.ErrorAs(t, err, &ee, "%v", args)
					assert.Equal(t, 1, ee.ExitCode(), "%v", args)
					assert.Contains(t, stderr.String(), tt.why, "%v", args)
				case <-time.After(5 * time.Second):
					cmd.Process.Kill()
					t.Fatalf("%v hangs on the %s", args, tt.name)
				}
			}

			o := startCommand(t, binPath, false, "observe", "--state", state)
			o.initialize()
			r := o.call("status", nil)
			require.Nil(t, r.Error)
			assert.Contains(t, string(r.Result), tt.why, "observe reports it")
			require.Nil(t, o.call("sessions.list", map[string]any{}).Error, "and keeps serving")
			o.stdin.Close()
			assert.Equal(t, 0, o.waitExit())

			data, err := os.ReadFile(target)
			if err == nil {
				assert.Equal(t, "precious", string(data), "the link's target is untouched")
			} else {
				assert.ErrorIs(t, err, os.ErrNotExist, "a dangling link's target is not created")
			}
		})
	}
}

// TestDoctorFIFOStatePath: doctor on a project whose state database path is
// a FIFO says so within seconds (issue 23) instead of hanging on it.
func TestDoctorFIFOStatePath(t *testing.T) {
	root := t.TempDir()
	project := filepath.Join(root, "proj")
	require.NoError(t, os.MkdirAll(project, 0o700))
	env := append(os.Environ(), "XDG_STATE_HOME="+filepath.Join(root, "state"), "HOME="+filepath.Join(root, "home"),
		"XDG_CONFIG_HOME="+filepath.Join(root, "config"), "XDG_CACHE_HOME="+filepath.Join(root, "cache"))
	t.Setenv("XDG_STATE_HOME", filepath.Join(root, "state"))
	state, err := sessiondb.ProjectStatePath(project)
	require.NoError(t, err)
	require.NoError(t, os.MkdirAll(filepath.Dir(state), 0o700))
	require.NoError(t, syscall.Mkfifo(state, 0o600))

	cmd := exec.Command(binPath, "doctor", "--project", project)
	cmd.Env = env
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	require.NoError(t, cmd.Start())
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		cmd.Process.Kill()
		t.Fatal("doctor hangs on a FIFO at the state path")
	}
	assert.Regexp(t, `(?m)^FAIL +state file +.*not a regular file`, out.String())
}
