package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hookwire/hookwire/sessions"
)

// observer is a running `hookwire observe` with a Content-Length client,
// as editors speak it. Its frames are split as they arrive: replies, and
// the notifications the observer sends on its own.
type observer struct {
	*proc
	replies chan reply
	notes   chan note
}

type note struct {
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
	at     time.Time
}

func startObserver(t *testing.T, args ...string) *observer {
	t.Helper()
	p := startCommand(t, binPath, true, append([]string{"observe"}, args...)...)
	o := &observer{proc: p, replies: make(chan reply, 16), notes: make(chan note, 64)}
	go func() {
		for {
			body, err := p.readFrame()
			if err != nil {
				close(o.replies)
				return
			}
			var n note
			if json.Unmarshal(body, &n) == nil && n.Method != "" {
				n.at = time.Now()
				o.notes <- n
				continue
			}
			var r reply
			if json.Unmarshal(body, &r) == nil {
				o.replies <- r
			}
		}
	}()
	return o
}

func (o *observer) call(method string, params any) reply {
	o.t.Helper()
	o.send(method, 1, params)
	select {
	case r, ok := <-o.replies:
		require.True(o.t, ok, "observer output ended; log: %s", o.stderr.String())
		return r
	case <-time.After(10 * time.Second):
		o.t.Fatalf("no reply within 10s; log: %s", o.stderr.String())
	}
	return reply{}
}

func (o *observer) result(method string, params any, v any) {
	o.t.Helper()
	r := o.call(method, params)
	require.Nil(o.t, r.Error, "%s: %+v", method, r.Error)
	require.NoError(o.t, json.Unmarshal(r.Result, v), "%s result %s", method, r.Result)
}

func (o *observer) list() []sessions.Entry {
	o.t.Helper()
	var es []sessions.Entry
	o.result("sessions.list", nil, &es)
	return es
}

func (o *observer) lastLoad() string {
	o.t.Helper()
	var st struct {
		Observer struct {
			LastLoad string `json:"lastLoad"`
		} `json:"observer"`
	}
	o.result("status", nil, &st)
	return st.Observer.LastLoad
}

// nextNote waits for a notification.
func (o *observer) nextNote(within time.Duration) note {
	o.t.Helper()
	select {
	case n := <-o.notes:
		return n
	case <-time.After(within):
		o.t.Fatalf("no notification within %s; log: %s", within, o.stderr.String())
	}
	return note{}
}

func aliasesOf(es []sessions.Entry) []string {
	var out []string
	for _, e := range es {
		out = append(out, e.Alias)
	}
	sort.Strings(out)
	return out
}

// TestObserveFollowsServe: a real serve writes a real state file while a
// real observer watches it; the alias reaches the observer's list, with a
// sessions.changed notification within 1 s of the file changing.
func TestObserveFollowsServe(t *testing.T) {
	state := filepath.Join(t.TempDir(), "state.json")
	o := startObserver(t, "--state", state)
	var init struct {
		Observer     bool `json:"observer"`
		Capabilities struct {
			Hooks         []string `json:"hooks"`
			Methods       []string `json:"methods"`
			Notifications []string `json:"notifications"`
		} `json:"capabilities"`
	}
	o.result("initialize", map[string]any{"protocolVersion": 1, "clientInfo": map[string]any{"name": "test"}}, &init)
	assert.True(t, init.Observer)
	assert.Empty(t, init.Capabilities.Hooks)
	assert.Equal(t, []string{"sessions.list", "sessions.page", "subagents.list", "status", "delegate.resolveModel", "delegate.detectError"}, init.Capabilities.Methods)
	assert.Equal(t, []string{"sessions.changed", "subagents.changed"}, init.Capabilities.Notifications)
	assert.Empty(t, o.list(), "no file yet")
	assert.Equal(t, "missing", o.lastLoad())

	r := o.call("tool.execute.before", map[string]any{"input": map[string]any{}, "output": map[string]any{"args": map[string]any{}}})
	require.NotNil(t, r.Error)
	assert.Equal(t, int64(-32004), r.Error.Code)
	assert.Equal(t, "this process is a read-only observer: hooks are served by `hookwire serve`", r.Error.Message)

	srv := start(t, true, "--state", state)
	srv.initialize()
	// The serving sidecar creates FILE empty to lock it: still no entries.
	srv.orchestrate("ses_parent")
	drain(o.notes)
	srv.createTask("ses_parent", "call_1", "explorer", "ses_child_1")
	n := o.nextNote(5 * time.Second)
	assert.Equal(t, "sessions.changed", n.Method)
	assert.JSONEq(t, `{"count":1}`, string(n.Params))
	fi, err := os.Stat(state)
	require.NoError(t, err)
	lag := n.at.Sub(fi.ModTime())
	t.Logf("notification %s after the file changed", lag)
	assert.Less(t, lag, time.Second, "sessions.changed within 1 s of the file changing")

	es := o.list()
	require.Len(t, es, 1)
	assert.Equal(t, "exp-1", es[0].Alias)
	assert.Equal(t, "ses_parent", es[0].Parent)
	assert.Equal(t, "ses_child_1", es[0].TaskID)
	assert.Equal(t, sessions.Run{State: sessions.RunCompleted}, es[0].Run)

	// A later one arrives the same way.
	srv.createTask("ses_parent", "call_2", "oracle", "ses_child_2")
	n = o.nextNote(5 * time.Second)
	assert.JSONEq(t, `{"count":2}`, string(n.Params))
	assert.Equal(t, []string{"exp-1", "ora-1"}, aliasesOf(o.list()))

	// A subagent the serving sidecar records from OpenCode's events: the
	// observer names its parent and lists it (issue 51).
	drain(o.notes)
	srv.send("event", nil, map[string]any{"input": map[string]any{"event": map[string]any{"type": "session.created",
		"properties": map[string]any{"sessionID": "ses_child_3", "info": map[string]any{"id": "ses_child_3", "parentID": "ses_parent",
			"title": "Slow audit (@general subagent)", "time": map[string]any{"created": 1795993563894}}}}}})
	for n = o.nextNote(5 * time.Second); n.Method != "subagents.changed"; n = o.nextNote(5 * time.Second) {
	}
	assert.JSONEq(t, `{"parents":["ses_parent"]}`, string(n.Params))
	var page struct {
		Parent struct {
			Running int `json:"running"`
		} `json:"parent"`
		Subagents []struct {
			SessionID, State, Label, Agent string
		} `json:"subagents"`
	}
	o.result("subagents.list", map[string]any{"sessionID": "ses_parent"}, &page)
	require.Len(t, page.Subagents, 1)
	assert.Equal(t, "ses_child_3", page.Subagents[0].SessionID)
	assert.Equal(t, "running", page.Subagents[0].State, "its writer is alive")
	assert.Equal(t, "Slow audit", page.Subagents[0].Label)
	assert.Equal(t, 1, page.Parent.Running)
}

func drain(ch chan note) {
	for {
		select {
		case <-ch:
		default:
			return
		}
	}
}

// TestObserveFileEventsReadOnly: the observer follows a file through
// missing, appearing, rename-replace and corruption, and never writes the
// file nor takes its lock: another process can lock it throughout, no
// lock file appears, and the file it reads is left exactly as it was.
func TestObserveFileEventsReadOnly(t *testing.T) {
	dir := t.TempDir()
	state := filepath.Join(dir, "state.json")
	o := startObserver(t, "--state", state, "--log-level", "debug")
	o.result("initialize", map[string]any{"protocolVersion": 1}, new(json.RawMessage))
	assert.Empty(t, o.list())
	assert.Equal(t, "missing", o.lastLoad())

	// It appears (a writer's rename).
	put := func(data []byte) {
		t.Helper()
		tmp := filepath.Join(dir, ".state.json.tmp-test")
		require.NoError(t, os.WriteFile(tmp, data, 0o600))
		require.NoError(t, os.Rename(tmp, state))
	}
	put(stateFileWith(t, map[string]string{"exp-1": "ses_1"}))
	n := o.nextNote(5 * time.Second)
	assert.JSONEq(t, `{"count":1}`, string(n.Params))
	assert.Equal(t, []string{"exp-1"}, aliasesOf(o.list()))

	// Replaced by rename.
	put(stateFileWith(t, map[string]string{"exp-1": "ses_1", "exp-2": "ses_2"}))
	n = o.nextNote(5 * time.Second)
	assert.JSONEq(t, `{"count":2}`, string(n.Params))
	assert.Equal(t, []string{"exp-1", "exp-2"}, aliasesOf(o.list()))

	// Corrupt: the last good entries stay, and status says so.
	put([]byte(`{"version":1,"parents":[{"id":`))
	require.Eventually(t, func() bool { return strings.HasPrefix(o.lastLoad(), "corrupt: ") }, 5*time.Second, 20*time.Millisecond)
	assert.Equal(t, []string{"exp-1", "exp-2"}, aliasesOf(o.list()))

	// Good again; then the observer only reads it for a while.
	good := stateFileWith(t, map[string]string{"exp-3": "ses_3"})
	put(good)
	o.nextNote(5 * time.Second)

	f, err := os.Open(state)
	require.NoError(t, err)
	defer f.Close()
	require.NoError(t, syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB), "another process can lock FILE while the observer runs")
	for range 5 {
		assert.Equal(t, []string{"exp-3"}, aliasesOf(o.list()))
		assert.Equal(t, "ok", o.lastLoad())
	}
	// A change made while we hold the lock (as a serving sidecar would) is
	// still seen: the observer reads without the lock. Its reads leave the
	// file as written: same inode, size, time and bytes.
	last := stateFileWith(t, map[string]string{"exp-3": "ses_3", "exp-4": "ses_4"})
	put(last)
	written := mustStat(t, state)
	o.nextNote(5 * time.Second)
	assert.Equal(t, []string{"exp-3", "exp-4"}, aliasesOf(o.list()))
	require.NoError(t, syscall.Flock(int(f.Fd()), syscall.LOCK_UN))
	read := mustStat(t, state)
	assert.True(t, os.SameFile(written, read), "the same file (inode)")
	assert.Equal(t, written.ModTime(), read.ModTime(), "the observer never wrote FILE")
	assert.Equal(t, written.Size(), read.Size())
	data, err := os.ReadFile(state)
	require.NoError(t, err)
	assert.Equal(t, last, data)
	assert.NoFileExists(t, state+".lock", "the observer never took the lock")
	names, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.Len(t, names, 1, "nothing but FILE in its directory: %v", names)
	assert.NotContains(t, o.stderr.String(), `"level":"error"`)
}

func mustStat(t *testing.T, path string) os.FileInfo {
	t.Helper()
	fi, err := os.Stat(path)
	require.NoError(t, err)
	return fi
}

// stateFileWith is a state file holding the given aliases (explorer
// entries under ses_parent), as a sidecar writes it.
func stateFileWith(t *testing.T, aliases map[string]string) []byte {
	t.Helper()
	var entries []map[string]any
	names := make([]string, 0, len(aliases))
	for a := range aliases {
		names = append(names, a)
	}
	sort.Strings(names)
	for i, a := range names {
		entries = append(entries, map[string]any{"agent": "explorer", "alias": a, "taskId": aliases[a], "label": "task " + a,
			"lastUse": time.Date(2026, 1, 2, 3, 4, i, 0, time.UTC), "use": i + 1})
	}
	doc := map[string]any{"version": 1, "clock": len(names), "sessionAgents": []any{},
		"parents": []any{map[string]any{"id": "ses_parent", "counters": map[string]int{"exp": 9}, "entries": entries}}}
	b, err := json.Marshal(doc)
	require.NoError(t, err)
	return b
}

// Quiet at rest (issue 51): with serve holding the database open and
// nothing changing, the observer does not read it again. Its own read of a
// WAL database touches FILE-wal's attributes (an inotify IN_ATTRIB, a
// Chmod event): taken for a change, each read caused the next, about 15
// reopens a second with nothing written.
func TestObserveQuietAtRest(t *testing.T) {
	state := filepath.Join(t.TempDir(), "state.db")
	o := startObserver(t, "--state", state)
	var init struct{}
	o.result("initialize", map[string]any{"protocolVersion": 1, "clientInfo": map[string]any{"name": "test"}}, &init)
	srv := start(t, true, "--state", state)
	srv.initialize()
	srv.orchestrate("ses_parent")
	srv.createTask("ses_parent", "call_1", "explorer", "ses_child_1")
	require.Eventually(t, func() bool { return len(o.list()) == 1 }, 5*time.Second, 20*time.Millisecond)
	loads := func() int {
		var st struct {
			Observer struct {
				Loads int `json:"loads"`
			} `json:"observer"`
		}
		o.result("status", nil, &st)
		return st.Observer.Loads
	}
	time.Sleep(500 * time.Millisecond) // what the task's writes set off settles
	before := loads()
	time.Sleep(1500 * time.Millisecond)
	assert.Equal(t, before, loads(), "no read of the database while nothing is written")
}
