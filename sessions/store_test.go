package sessions

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hookwire/hookwire/core"
)

// epoch is the wall clock of every test store: ordering must come from the
// logical clock alone, even when every use shares one instant.
var epoch = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

func newTestStore(cfg Config) *Store {
	cfg.Now = func() time.Time { return epoch }
	return New(cfg)
}

// harness drives a store the way the handlers do, numbering call ids.
type harness struct {
	t *testing.T
	s *Store
	n int
}

func newHarness(t *testing.T, cfg Config) *harness {
	return &harness{t: t, s: newTestStore(cfg)}
}

func (h *harness) callID() string { h.n++; return "call_" + strconv.Itoa(h.n) }

// task runs one complete task call that returns id and is not a resume.
func (h *harness) task(parent, agent, label, id string) {
	h.t.Helper()
	c := h.callID()
	act, _ := h.s.Tasks().BeginCall(context.Background(), c, parent, agent, label, "")
	require.Equal(h.t, TaskIDLeave, act)
	h.s.Tasks().CompleteCall(context.Background(), c, out(id))
}

// resume runs a task call asking for requested, whose output says out. It
// returns what BeginCall answered.
func (h *harness) resume(parent, agent, label, requested string, out core.TaskOutcome) (TaskIDAction, string) {
	h.t.Helper()
	c := h.callID()
	act, id := h.s.Tasks().BeginCall(context.Background(), c, parent, agent, label, requested)
	h.s.Tasks().CompleteCall(context.Background(), c, out)
	return act, id
}

// resolve asks BeginCall about requested without completing the call.
func (h *harness) resolve(parent, agent, requested string) (TaskIDAction, string) {
	h.t.Helper()
	return h.s.Tasks().BeginCall(context.Background(), h.callID(), parent, agent, "probe", requested)
}

// aliases lists parent's entries as "alias=taskID label", newest first.
func (h *harness) aliases(parent string) []string {
	var out []string
	for _, e := range h.s.Tasks().List(parent) {
		out = append(out, e.Alias+"="+e.TaskID+" "+e.Label)
	}
	return out
}

// sessionGone is what a task output saying the resumed session is not
// found says.
var sessionGone = core.TaskOutcome{SessionNotFound: true}

// out is what a task output naming id says.
func out(id string) core.TaskOutcome { return core.TaskOutcome{TaskID: id} }

func TestBeginCallResolution(t *testing.T) {
	tests := []struct {
		name      string
		parent    string
		agent     string
		requested string
		action    TaskIDAction
		id        string
	}{
		{"absent task_id is left", "p1", "explorer", "", TaskIDLeave, ""},
		{"blank task_id is left", "p1", "explorer", " \t\n", TaskIDLeave, ""},
		{"by alias", "p1", "explorer", "exp-1", TaskIDReplace, "ses_a"},
		{"by alias, trimmed", "p1", "explorer", "  exp-2\n", TaskIDReplace, "ses_b"},
		{"by real id", "p1", "explorer", "ses_a", TaskIDReplace, "ses_a"},
		{"by real id, trimmed", "p1", "explorer", " ses_b ", TaskIDReplace, "ses_b"},
		{"unknown ses id kept trimmed", "p1", "explorer", "  ses_zzz  ", TaskIDReplace, "ses_zzz"},
		{"unknown alias removed", "p1", "explorer", "exp-9", TaskIDRemove, ""},
		{"garbage removed", "p1", "explorer", "the explorer one", TaskIDRemove, ""},
		{"other parent's alias not resolved", "p2", "explorer", "exp-1", TaskIDRemove, ""},
		{"other parent's real id kept as an unknown ses id", "p2", "explorer", "ses_a", TaskIDReplace, "ses_a"},
		{"other agent's alias not resolved", "p1", "oracle", "exp-1", TaskIDRemove, ""},
		{"own alias of the other agent", "p1", "oracle", "ora-1", TaskIDReplace, "ses_o"},
		{"agent names are case-sensitive", "p1", "Explorer", "exp-1", TaskIDRemove, ""},
		{"alias lookup is case-sensitive", "p1", "explorer", "EXP-1", TaskIDRemove, ""},
		{"agent taking no part leaves task_id", "p1", "", "exp-1", TaskIDLeave, ""},
		{"agent whose prefix is empty leaves task_id", "p1", "!!!", "ses_a", TaskIDLeave, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, Config{})
			h.task("p1", "explorer", "find the parser", "ses_a")
			h.task("p1", "explorer", "find the lexer", "ses_b")
			h.task("p1", "oracle", "review", "ses_o")
			pendingBefore := h.s.Stats().PendingCalls

			act, id := h.resolve(tt.parent, tt.agent, tt.requested)
			assert.Equal(t, tt.action, act)
			assert.Equal(t, tt.id, id)
			if core.AliasPrefix(tt.agent, nil) == "" {
				assert.Equal(t, pendingBefore, h.s.Stats().PendingCalls, "a non-participating agent records no call")
			} else {
				assert.Equal(t, pendingBefore+1, h.s.Stats().PendingCalls)
			}
		})
	}
}

func TestCompleteCall(t *testing.T) {
	tests := []struct {
		name string
		cfg  Config
		run  func(h *harness)
		want map[string][]string // parent → aliases(parent)
	}{
		{
			name: "new ids get aliases counting from 1, newest first",
			run: func(h *harness) {
				h.task("p1", "explorer", "one", "ses_a")
				h.task("p1", "explorer", "two", "ses_b")
			},
			want: map[string][]string{"p1": {"exp-2=ses_b two", "exp-1=ses_a one"}},
		},
		{
			name: "OpenCode 1.18 task tag is parsed",
			run: func(h *harness) {
				c := h.callID()
				h.s.Tasks().BeginCall(context.Background(), c, "p1", "explorer", "one", "")
				h.s.Tasks().CompleteCall(context.Background(), c, core.ParseTaskOutput("<task id=\"ses_x\" state=\"completed\">\nfound it\n</task>"))
			},
			want: map[string][]string{"p1": {"exp-1=ses_x one"}},
		},
		{
			name: "output without an id remembers nothing",
			run: func(h *harness) {
				c := h.callID()
				h.s.Tasks().BeginCall(context.Background(), c, "p1", "explorer", "one", "")
				h.s.Tasks().CompleteCall(context.Background(), c, core.ParseTaskOutput("[ERROR] Invalid arguments"))
			},
			want: map[string][]string{"p1": nil},
		},
		{
			name: "completion without a pending call does nothing",
			run: func(h *harness) {
				h.s.Tasks().CompleteCall(context.Background(), "never-begun", out("ses_a"))
			},
			want: map[string][]string{"": nil},
		},
		{
			name: "a call completes once",
			run: func(h *harness) {
				h.s.Tasks().BeginCall(context.Background(), "c", "p1", "explorer", "one", "")
				h.s.Tasks().CompleteCall(context.Background(), "c", out("ses_a"))
				h.s.Tasks().CompleteCall(context.Background(), "c", out("ses_b"))
			},
			want: map[string][]string{"p1": {"exp-1=ses_a one"}},
		},
		{
			name: "same id again keeps its alias, takes the new label",
			run: func(h *harness) {
				h.task("p1", "explorer", "one", "ses_a")
				h.task("p1", "explorer", "two", "ses_b")
				h.task("p1", "explorer", "one again", "ses_a")
			},
			want: map[string][]string{"p1": {"exp-1=ses_a one", "exp-2=ses_b two"}},
		},
		{
			name: "resume by alias returning the same id keeps the label of the call that made it",
			run: func(h *harness) {
				h.task("p1", "explorer", "one", "ses_a")
				h.task("p1", "explorer", "two", "ses_b")
				h.resume("p1", "explorer", "one more", "exp-1", out("ses_a"))
			},
			want: map[string][]string{"p1": {"exp-1=ses_a one", "exp-2=ses_b two"}},
		},
		{
			name: "resume returning a new id keeps the alias and takes the resuming call's label (the new child does what it says)",
			run: func(h *harness) {
				h.task("p1", "explorer", "one", "ses_a")
				h.task("p1", "explorer", "two", "ses_b")
				h.resume("p1", "explorer", "continued", "exp-1", out("ses_c"))
			},
			want: map[string][]string{"p1": {"exp-1=ses_c continued", "exp-2=ses_b two"}},
		},
		{
			name: "resume by real id returning a new id keeps the alias, with the resuming call's label",
			run: func(h *harness) {
				h.task("p1", "explorer", "one", "ses_a")
				h.resume("p1", "explorer", "continued", "ses_a", out("ses_c"))
			},
			want: map[string][]string{"p1": {"exp-1=ses_c continued"}},
		},
		{
			name: "resume returning an id already remembered forgets the predecessor",
			run: func(h *harness) {
				h.task("p1", "explorer", "one", "ses_a")
				h.task("p1", "explorer", "two", "ses_b")
				h.task("p1", "oracle", "three", "ses_o")
				h.resume("p1", "explorer", "merged", "exp-1", out("ses_b"))
			},
			want: map[string][]string{"p1": {"exp-2=ses_b two", "ora-1=ses_o three"}},
		},
		{
			name: "resume returning an id remembered only under another agent gets a new entry",
			run: func(h *harness) {
				h.task("p1", "explorer", "one", "ses_a")
				h.task("p1", "oracle", "two", "ses_o")
				h.resume("p1", "explorer", "moved", "exp-1", out("ses_o"))
			},
			want: map[string][]string{"p1": {"exp-1=ses_o moved", "ora-1=ses_o two"}},
		},
		{
			name: "session not found forgets the resumed entry",
			run: func(h *harness) {
				h.task("p1", "explorer", "one", "ses_a")
				h.task("p1", "explorer", "two", "ses_b")
				h.resume("p1", "explorer", "retry", "exp-1", sessionGone)
			},
			want: map[string][]string{"p1": {"exp-2=ses_b two"}},
		},
		{
			name: "no session forgets the resumed entry",
			run: func(h *harness) {
				h.task("p1", "explorer", "one", "ses_a")
				h.resume("p1", "explorer", "retry", "ses_a", sessionGone)
			},
			want: map[string][]string{"p1": nil},
		},
		{
			name: "another error on resume keeps the entry",
			run: func(h *harness) {
				h.task("p1", "explorer", "one", "ses_a")
				h.resume("p1", "explorer", "retry", "exp-1", core.TaskOutcome{})
			},
			want: map[string][]string{"p1": {"exp-1=ses_a one"}},
		},
		{
			name: "session not found without a resume forgets nothing",
			run: func(h *harness) {
				h.task("p1", "explorer", "one", "ses_a")
				h.resume("p1", "explorer", "fresh", "", sessionGone)
			},
			want: map[string][]string{"p1": {"exp-1=ses_a one"}},
		},
		{
			name: "resume of an unknown ses id remembers the result as new",
			run: func(h *harness) {
				h.task("p1", "explorer", "one", "ses_a")
				h.resume("p1", "explorer", "old one", "ses_before_restart", out("ses_before_restart"))
			},
			want: map[string][]string{"p1": {"exp-2=ses_before_restart old one", "exp-1=ses_a one"}},
		},
		{
			name: "maxSessionsPerAgent keeps the most recently used",
			run: func(h *harness) {
				h.task("p1", "explorer", "one", "ses_a")
				h.task("p1", "explorer", "two", "ses_b")
				h.resume("p1", "explorer", "one again", "exp-1", out("ses_a"))
				h.task("p1", "explorer", "three", "ses_c")
				h.task("p1", "oracle", "four", "ses_o")
			},
			want: map[string][]string{"p1": {"ora-1=ses_o four", "exp-3=ses_c three", "exp-1=ses_a one"}},
		},
		{
			name: "maxSessionsPerAgent from config",
			cfg:  Config{MaxSessionsPerAgent: 3},
			run: func(h *harness) {
				for i := 1; i <= 5; i++ {
					h.task("p1", "explorer", "t"+strconv.Itoa(i), "ses_"+strconv.Itoa(i))
				}
			},
			want: map[string][]string{"p1": {"exp-5=ses_5 t5", "exp-4=ses_4 t4", "exp-3=ses_3 t3"}},
		},
		{
			name: "alias never reused within a parent after eviction or forgetting",
			run: func(h *harness) {
				h.task("p1", "explorer", "one", "ses_a")
				h.task("p1", "explorer", "two", "ses_b")
				h.task("p1", "explorer", "three", "ses_c") // evicts exp-1
				h.resume("p1", "explorer", "gone", "exp-3", sessionGone)
				h.s.DeleteSession(context.Background(), "ses_b") // forgets exp-2 as a child id
				h.task("p1", "explorer", "four", "ses_d")
				h.task("p2", "explorer", "elsewhere", "ses_e")
			},
			want: map[string][]string{
				"p1": {"exp-4=ses_d four"},
				"p2": {"exp-1=ses_e elsewhere"},
			},
		},
		{
			name: "agents with one prefix share the parent's counter",
			run: func(h *harness) {
				h.task("p1", "code reviewer", "one", "ses_a")
				h.task("p1", "Code-Reviewer", "two", "ses_b")
				h.task("p1", "code reviewer", "three", "ses_c")
			},
			want: map[string][]string{"p1": {"code-reviewer-3=ses_c three", "code-reviewer-2=ses_b two", "code-reviewer-1=ses_a one"}},
		},
		{
			name: "case-sensitive agents are remembered apart",
			run: func(h *harness) {
				h.task("p1", "explorer", "lower", "ses_a")
				h.task("p1", "Explorer", "upper", "ses_b")
				h.task("p1", "Explorer", "upper2", "ses_c")
				h.task("p1", "Explorer", "upper3", "ses_d")
			},
			want: map[string][]string{"p1": {"explorer-3=ses_d upper3", "explorer-2=ses_c upper2", "exp-1=ses_a lower"}},
		},
		{
			name: "alias overrides",
			cfg:  Config{AliasOverrides: map[string]string{"explorer": "scout", "qa": "qa"}},
			run: func(h *harness) {
				h.task("p1", "explorer", "one", "ses_a")
				h.task("p1", "qa", "two", "ses_b")
			},
			want: map[string][]string{"p1": {"qa-1=ses_b two", "scout-1=ses_a one"}},
		},
		{
			name: "a callID begun again is replaced",
			run: func(h *harness) {
				h.s.Tasks().BeginCall(context.Background(), "c", "p1", "explorer", "first", "")
				h.s.Tasks().BeginCall(context.Background(), "c", "p1", "oracle", "second", "")
				assert.Equal(h.t, 1, h.s.Stats().PendingCalls)
				h.s.Tasks().CompleteCall(context.Background(), "c", out("ses_a"))
			},
			want: map[string][]string{"p1": {"ora-1=ses_a second"}},
		},
		{
			name: "pending calls are capped, oldest evicted",
			cfg:  Config{MaxPendingCalls: 2},
			run: func(h *harness) {
				h.s.Tasks().BeginCall(context.Background(), "c1", "p1", "explorer", "one", "")
				h.s.Tasks().BeginCall(context.Background(), "c2", "p1", "explorer", "two", "")
				h.s.Tasks().BeginCall(context.Background(), "c3", "p1", "explorer", "three", "")
				assert.Equal(h.t, 2, h.s.Stats().PendingCalls)
				h.s.Tasks().CompleteCall(context.Background(), "c1", out("ses_a"))
				h.s.Tasks().CompleteCall(context.Background(), "c3", out("ses_c"))
				h.s.Tasks().CompleteCall(context.Background(), "c2", out("ses_b"))
				assert.Equal(h.t, 0, h.s.Stats().PendingCalls)
			},
			want: map[string][]string{"p1": {"exp-2=ses_b two", "exp-1=ses_c three"}},
		},
		{
			name: "maxParents forgets the least recently active parent with its counters",
			cfg:  Config{MaxParents: 2},
			run: func(h *harness) {
				h.task("p1", "explorer", "one", "ses_a")
				h.task("p2", "explorer", "two", "ses_b")
				h.task("p2", "explorer", "three", "ses_c")
				h.resolve("p1", "explorer", "exp-1") // p1 is active again
				h.task("p3", "explorer", "four", "ses_d")
				assert.Equal(h.t, 2, h.s.Stats().Parents)
				h.task("p2", "explorer", "five", "ses_e") // p2 was evicted: counts from 1
			},
			want: map[string][]string{
				"p1": nil, // evicted by p2's return
				"p2": {"exp-1=ses_e five"},
				"p3": {"exp-1=ses_d four"},
			},
		},
		{
			name: "DeleteSession of a parent forgets entries, counters and pending calls",
			run: func(h *harness) {
				h.task("p1", "explorer", "one", "ses_a")
				h.task("p1", "explorer", "two", "ses_b")
				h.task("p2", "explorer", "other", "ses_x")
				h.s.Tasks().BeginCall(context.Background(), "late", "p1", "explorer", "late", "")
				h.s.Tasks().BeginCall(context.Background(), "other", "p2", "explorer", "kept", "")
				h.s.DeleteSession(context.Background(), "p1")
				h.s.Tasks().CompleteCall(context.Background(), "late", out("ses_late"))
				h.s.Tasks().CompleteCall(context.Background(), "other", out("ses_y"))
				h.task("p1", "explorer", "new life", "ses_c")
			},
			want: map[string][]string{
				"p1": {"exp-1=ses_c new life"},
				"p2": {"exp-2=ses_y kept", "exp-1=ses_x other"},
			},
		},
		{
			name: "DeleteSession of a child id forgets it under every parent",
			run: func(h *harness) {
				h.task("p1", "explorer", "one", "ses_a")
				h.task("p1", "explorer", "two", "ses_shared")
				h.task("p2", "oracle", "three", "ses_shared")
				h.task("p2", "oracle", "four", "ses_b")
				h.s.DeleteSession(context.Background(), "ses_shared")
			},
			want: map[string][]string{
				"p1": {"exp-1=ses_a one"},
				"p2": {"ora-2=ses_b four"},
			},
		},
		{
			name: "DeleteSession of an unknown id changes nothing",
			run: func(h *harness) {
				h.task("p1", "explorer", "one", "ses_a")
				h.s.DeleteSession(context.Background(), "nobody")
			},
			want: map[string][]string{"p1": {"exp-1=ses_a one"}},
		},
		{
			name: "DeleteSession after a child continued under a new id",
			run: func(h *harness) {
				h.task("p1", "explorer", "one", "ses_a")
				h.resume("p1", "explorer", "continued", "exp-1", out("ses_c"))
				h.s.DeleteSession(context.Background(), "ses_a") // the old id is no longer held
				h.task("p1", "oracle", "two", "ses_o")
				h.s.DeleteSession(context.Background(), "ses_o")
			},
			want: map[string][]string{"p1": {"exp-1=ses_c continued"}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, tt.cfg)
			tt.run(h)
			for parent, want := range tt.want {
				assert.Equal(t, want, h.aliases(parent), "parent %q", parent)
			}
			st := h.s.Stats()
			assert.Equal(t, len(h.s.Tasks().List("")), st.Entries, "Stats.Entries matches List")
		})
	}
}

func TestResumeAfterContinuation(t *testing.T) {
	h := newHarness(t, Config{})
	h.task("p1", "explorer", "one", "ses_a")
	h.resume("p1", "explorer", "continued", "exp-1", out("ses_c"))

	act, id := h.resolve("p1", "explorer", "exp-1")
	assert.Equal(t, TaskIDReplace, act)
	assert.Equal(t, "ses_c", id, "the alias now holds the new id")

	act, id = h.resolve("p1", "explorer", "ses_c")
	assert.Equal(t, TaskIDReplace, act)
	assert.Equal(t, "ses_c", id)

	// The old id is unknown now, but it starts with ses: left as it is.
	act, id = h.resolve("p1", "explorer", "ses_a")
	assert.Equal(t, TaskIDReplace, act)
	assert.Equal(t, "ses_a", id)
	assert.Len(t, h.s.Tasks().List("p1"), 1)
}

func TestBeginCallMarksUse(t *testing.T) {
	h := newHarness(t, Config{})
	h.task("p1", "explorer", "one", "ses_a")
	h.task("p1", "explorer", "two", "ses_b")
	h.resolve("p1", "explorer", "exp-1") // never completed: still a use
	h.task("p1", "explorer", "three", "ses_c")
	assert.Equal(t, []string{"exp-3=ses_c three", "exp-1=ses_a one"}, h.aliases("p1"))
}

func TestResumableSessions(t *testing.T) {
	tests := []struct {
		name string
		run  func(h *harness)
		want []core.BlockAgent
	}{
		{
			name: "nothing remembered is nil",
			run:  func(h *harness) {},
			want: nil,
		},
		{
			name: "parent with everything forgotten is nil",
			run: func(h *harness) {
				h.task("p1", "explorer", "one", "ses_a")
				h.s.DeleteSession(context.Background(), "ses_a")
			},
			want: nil,
		},
		{
			name: "agents and entries newest first",
			run: func(h *harness) {
				h.task("p1", "explorer", "one", "ses_a")
				h.task("p1", "oracle", "two", "ses_o")
				h.task("p1", "explorer", "three", "ses_b")
				h.task("p2", "librarian", "elsewhere", "ses_l")
			},
			want: []core.BlockAgent{
				{Agent: "explorer", Entries: []core.BlockEntry{{Alias: "exp-2", Label: "three"}, {Alias: "exp-1", Label: "one"}}},
				{Agent: "oracle", Entries: []core.BlockEntry{{Alias: "ora-1", Label: "two"}}},
			},
		},
		{
			name: "a resume moves its agent and entry first, each keeping its first label",
			run: func(h *harness) {
				h.task("p1", "explorer", "one", "ses_a")
				h.task("p1", "oracle", "two", "ses_o")
				h.task("p1", "explorer", "three", "ses_b")
				h.resume("p1", "oracle", "two more", "ora-1", out("ses_o"))
				h.resume("p1", "explorer", "one more", "exp-1", out("ses_a"))
				h.resolve("p1", "oracle", "ora-1")
			},
			want: []core.BlockAgent{
				{Agent: "oracle", Entries: []core.BlockEntry{{Alias: "ora-1", Label: "two"}}},
				{Agent: "explorer", Entries: []core.BlockEntry{{Alias: "exp-1", Label: "one"}, {Alias: "exp-2", Label: "three"}}},
			},
		},
		{
			name: "forgetting an agent's newest entry moves the agent back",
			run: func(h *harness) {
				h.task("p1", "explorer", "one", "ses_a")
				h.task("p1", "oracle", "two", "ses_o")
				h.task("p1", "explorer", "three", "ses_b")
				h.s.DeleteSession(context.Background(), "ses_b")
			},
			want: []core.BlockAgent{
				{Agent: "oracle", Entries: []core.BlockEntry{{Alias: "ora-1", Label: "two"}}},
				{Agent: "explorer", Entries: []core.BlockEntry{{Alias: "exp-1", Label: "one"}}},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, Config{})
			tt.run(h)
			assert.Equal(t, tt.want, h.s.Tasks().ResumableSessions("p1"))
		})
	}
}

func TestList(t *testing.T) {
	h := newHarness(t, Config{})
	h.task("p1", "explorer", "one", "ses_a")
	h.task("p2", "oracle", "two", "ses_o")
	h.task("p1", "explorer", "three", "ses_b")

	all := h.s.Tasks().List("")
	require.Len(t, all, 3)
	assert.Equal(t, Entry{Parent: "p1", Agent: "explorer", Alias: "exp-2", TaskID: "ses_b", Label: "three", LastUse: epoch, Run: Run{State: RunCompleted}}, all[0])
	assert.Equal(t, "ses_o", all[1].TaskID)
	assert.Equal(t, "ses_a", all[2].TaskID)

	assert.Len(t, h.s.Tasks().List("p2"), 1)
	assert.Empty(t, h.s.Tasks().List("nobody"))
}

func TestLastUseIsWallClock(t *testing.T) {
	s := New(Config{})
	before := time.Now()
	s.Tasks().BeginCall(context.Background(), "c", "p1", "explorer", "one", "")
	s.Tasks().CompleteCall(context.Background(), "c", out("ses_a"))
	got := s.Tasks().List("p1")
	require.Len(t, got, 1)
	assert.False(t, got[0].LastUse.Before(before))
	assert.False(t, got[0].LastUse.After(time.Now()))
}

func TestSessionAgents(t *testing.T) {
	tests := []struct {
		name string
		run  func(s *Store)
		want map[string]string
	}{
		{
			name: "set and read",
			run: func(s *Store) {
				s.Tracked().SetAgent(context.Background(), "s1", "orchestrator")
				s.Tracked().SetAgent(context.Background(), "s2", "explorer")
				s.Tracked().SetAgent(context.Background(), "s1", "oracle")
			},
			want: map[string]string{"s1": "oracle", "s2": "explorer", "s3": ""},
		},
		{
			name: "maxTrackedSessions forgets the least recently active",
			run: func(s *Store) {
				s.Tracked().SetAgent(context.Background(), "s1", "a")
				s.Tracked().SetAgent(context.Background(), "s2", "b")
				s.Tracked().SetAgent(context.Background(), "s3", "c")
				s.Tracked().Agent("s1") // reading is activity
				s.Tracked().SetAgent(context.Background(), "s4", "d")
				s.Tracked().SetAgent(context.Background(), "s3", "c") // setting again is activity
				s.Tracked().SetAgent(context.Background(), "s5", "e")
			},
			want: map[string]string{"s1": "", "s2": "", "s3": "c", "s4": "", "s5": "e"},
		},
		{
			name: "DeleteSession forgets the agent",
			run: func(s *Store) {
				s.Tracked().SetAgent(context.Background(), "s1", "orchestrator")
				s.Tracked().SetAgent(context.Background(), "s2", "explorer")
				s.DeleteSession(context.Background(), "s1")
			},
			want: map[string]string{"s1": "", "s2": "explorer"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newTestStore(Config{MaxTrackedSessions: 2})
			tt.run(s)
			got := make(map[string]string)
			for session := range tt.want {
				got[session] = s.Tracked().Agent(session)
			}
			assert.Equal(t, tt.want, got)
			assert.LessOrEqual(t, s.Stats().TrackedSessions, 2)
		})
	}
}

func TestFrozenBlock(t *testing.T) {
	t.Run("first compute is kept byte-identical", func(t *testing.T) {
		s := newTestStore(Config{})
		calls := 0
		compute := func(text string) func() string {
			return func() string { calls++; return text }
		}
		first := s.Frozen().Block(context.Background(), "p1", "m1", compute("### Resumable Sessions\n- explorer: exp-1 é\u00a0x"))
		again := s.Frozen().Block(context.Background(), "p1", "m1", compute("something else"))
		assert.Equal(t, first, again)
		assert.Equal(t, 1, calls)

		assert.Equal(t, "other", s.Frozen().Block(context.Background(), "p1", "m2", compute("other")))
		assert.Equal(t, "elsewhere", s.Frozen().Block(context.Background(), "p2", "m1", compute("elsewhere")))
		assert.Equal(t, 3, calls)
		assert.Equal(t, 3, s.Stats().FrozenBlocks)
	})

	t.Run("an empty block is frozen too", func(t *testing.T) {
		s := newTestStore(Config{})
		assert.Equal(t, "", s.Frozen().Block(context.Background(), "p1", "m1", func() string { return "" }))
		assert.Equal(t, "", s.Frozen().Block(context.Background(), "p1", "m1", func() string {
			t.Fatal("compute called again")
			return "x"
		}))
	})

	t.Run("compute may read the store", func(t *testing.T) {
		h := newHarness(t, Config{})
		h.task("p1", "explorer", "one", "ses_a")
		got := h.s.Frozen().Block(context.Background(), "p1", "m1", func() string {
			return fmt.Sprint(h.s.Tasks().ResumableSessions("p1"))
		})
		assert.Equal(t, "[{explorer [{exp-1 one}]}]", got)
		h.task("p1", "explorer", "two", "ses_b")
		assert.Equal(t, got, h.s.Frozen().Block(context.Background(), "p1", "m1", func() string { return "changed" }))
	})

	t.Run("cleared on delete", func(t *testing.T) {
		s := newTestStore(Config{})
		s.Frozen().Block(context.Background(), "p1", "m1", func() string { return "old" })
		s.Frozen().Block(context.Background(), "p2", "m1", func() string { return "kept" })
		s.DeleteSession(context.Background(), "p1")
		assert.Equal(t, 1, s.Stats().FrozenBlocks)
		assert.Equal(t, "new", s.Frozen().Block(context.Background(), "p1", "m1", func() string { return "new" }))
		assert.Equal(t, "kept", s.Frozen().Block(context.Background(), "p2", "m1", func() string { return "x" }))
	})

	t.Run("a full session freezes no more and keeps every earlier block", func(t *testing.T) {
		s := newTestStore(Config{})
		for i := 0; i < MaxFrozenBlocksPerSession; i++ {
			s.Frozen().Block(context.Background(), "p1", "m"+strconv.Itoa(i), func() string { return "b" + strconv.Itoa(i) })
		}
		over := "m" + strconv.Itoa(MaxFrozenBlocksPerSession)
		assert.Equal(t, "", s.Frozen().Block(context.Background(), "p1", over, func() string { return "new" }), "beyond the bound: no block")
		assert.Equal(t, "", s.Frozen().Block(context.Background(), "p1", over, func() string { return "new" }), "and none next time either")
		assert.Equal(t, MaxFrozenBlocksPerSession, s.Stats().FrozenBlocks)
		assert.Equal(t, "b0", s.Frozen().Block(context.Background(), "p1", "m0", func() string { return "x" }), "the first message keeps its bytes")
		assert.Equal(t, "b255", s.Frozen().Block(context.Background(), "p1", "m255", func() string { return "x" }))
	})

	t.Run("RetainFrozen drops blocks of messages that left the history", func(t *testing.T) {
		s := newTestStore(Config{})
		for i := 0; i < MaxFrozenBlocksPerSession; i++ {
			s.Frozen().Block(context.Background(), "p1", "m"+strconv.Itoa(i), func() string { return "b" + strconv.Itoa(i) })
		}
		s.Frozen().Block(context.Background(), "p2", "m0", func() string { return "other session" })
		c := changeCount(s)
		// A compaction: only m200 and later are still in p1's history.
		s.Frozen().Retain(context.Background(), "p1", func(id string) bool { n, _ := strconv.Atoi(id[1:]); return n >= 200 })
		assert.Equal(t, 56+1, s.Stats().FrozenBlocks)
		assert.Greater(t, changeCount(s), c, "the state file must learn of it")
		assert.Equal(t, "b200", s.Frozen().Block(context.Background(), "p1", "m200", func() string { return "x" }))
		assert.Equal(t, "fresh", s.Frozen().Block(context.Background(), "p1", "m999", func() string { return "fresh" }), "room again")
		assert.Equal(t, "other session", s.Frozen().Block(context.Background(), "p2", "m0", func() string { return "x" }))
		s.Frozen().Retain(context.Background(), "nobody", func(string) bool { return false }) // unknown session: nothing happens
		s.Frozen().Retain(context.Background(), "p2", func(string) bool { return false })     // below the bound: nothing happens
		assert.Equal(t, 56+2, s.Stats().FrozenBlocks)
	})

	t.Run("a block frozen while computing wins over the computed one", func(t *testing.T) {
		// Another request freezes the same key while this one computes:
		// the block frozen first is the one every later request sends, so
		// the late value is dropped and no second block is stored.
		s := newTestStore(Config{})
		got := s.Frozen().Block(context.Background(), "p1", "m1", func() string {
			assert.Equal(t, "first", s.Frozen().Block(context.Background(), "p1", "m1", func() string { return "first" }))
			return "second"
		})
		assert.Equal(t, "first", got)
		assert.Equal(t, "first", s.Frozen().Block(context.Background(), "p1", "m1", func() string { return "third" }))
		assert.Equal(t, 1, s.Stats().FrozenBlocks)
		s.mu.Lock()
		p1, _ := s.parents.list.Get("p1")
		assert.Equal(t, 1, p1.frozen.Len(), "one block for the key")
		s.mu.Unlock()
		assertBytesCounted(t, s)
	})

	t.Run("go with the parent's eviction", func(t *testing.T) {
		s := newTestStore(Config{MaxParents: 2})
		s.Frozen().Block(context.Background(), "p1", "m1", func() string { return "one" })
		s.Frozen().Block(context.Background(), "p2", "m1", func() string { return "two" })
		s.Frozen().Block(context.Background(), "p3", "m1", func() string { return "three" })
		assert.Equal(t, 2, s.Stats().Parents)
		assert.Equal(t, 2, s.Stats().FrozenBlocks)
		assert.Equal(t, "again", s.Frozen().Block(context.Background(), "p1", "m1", func() string { return "again" }))
	})
}

// TestDeleteSessionIsAChange: each kind of thing session.deleted forgets
// is a change the state file must learn of, on its own.
func TestDeleteSessionIsAChange(t *testing.T) {
	tests := []struct {
		name  string
		setup func(h *harness)
		id    string
	}{
		{"a parent with entries", func(h *harness) { h.task("p1", "explorer", "one", "ses_a") }, "p1"},
		{"a parent with only a frozen block", func(h *harness) { h.s.Frozen().Block(context.Background(), "p1", "m1", func() string { return "b" }) }, "p1"},
		{"a child's task session", func(h *harness) { h.task("p1", "explorer", "one", "ses_a") }, "ses_a"},
		{"a tracked session", func(h *harness) { h.s.Tracked().SetAgent(context.Background(), "s1", "orchestrator") }, "s1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, Config{})
			tt.setup(h)
			before, err := h.s.Snapshot()
			require.NoError(t, err)
			c := changeCount(h.s)
			h.s.DeleteSession(context.Background(), tt.id)
			assert.Greater(t, changeCount(h.s), c, "recorded as a change")
			after, err := h.s.Snapshot()
			require.NoError(t, err)
			assert.NotEqual(t, string(before), string(after), "and the state file differs")
		})
	}
}

func TestChanges(t *testing.T) {
	h := newHarness(t, Config{})
	c0 := changeCount(h.s)
	h.s.Tasks().ResumableSessions("p1")
	h.s.Tasks().List("")
	h.s.Stats()
	h.s.Tracked().Agent("s1")
	h.s.DeleteSession(context.Background(), "nobody")
	assert.Equal(t, c0, changeCount(h.s), "reads and no-ops change nothing")

	steps := []struct {
		name string
		do   func()
	}{
		{"task remembered", func() { h.task("p1", "explorer", "one", "ses_a") }},
		{"resume marks use", func() { h.resolve("p1", "explorer", "exp-1") }},
		{"agent set", func() { h.s.Tracked().SetAgent(context.Background(), "s1", "orchestrator") }},
		{"block frozen", func() { h.s.Frozen().Block(context.Background(), "p1", "m1", func() string { return "b" }) }},
		{"session deleted", func() { h.s.DeleteSession(context.Background(), "p1") }},
	}
	for _, st := range steps {
		before := changeCount(h.s)
		st.do()
		assert.Greater(t, changeCount(h.s), before, st.name)
	}
}

func TestBoundsStayFlat(t *testing.T) {
	cfg := Config{MaxParents: 50, MaxTrackedSessions: 80, MaxPendingCalls: 10}
	h := newHarness(t, cfg)
	for i := 0; i < 20000; i++ {
		parent := "p" + strconv.Itoa(i%700)
		agent := []string{"explorer", "oracle", "fixer"}[i%3]
		c := h.callID()
		h.s.Tasks().BeginCall(context.Background(), c, parent, agent, "l", "")
		if i%4 != 0 { // some calls never complete
			h.s.Tasks().CompleteCall(context.Background(), c, out("ses_"+strconv.Itoa(i)))
		}
		h.s.Tracked().SetAgent(context.Background(), parent, "orchestrator")
		h.s.Frozen().Block(context.Background(), parent, "m"+strconv.Itoa(i), func() string { return "b" })
	}
	st := h.s.Stats()
	assert.LessOrEqual(t, st.Parents, 50)
	assert.LessOrEqual(t, st.Entries, 50*3*DefaultMaxSessionsPerAgent)
	assert.LessOrEqual(t, st.PendingCalls, 10)
	assert.LessOrEqual(t, st.TrackedSessions, 80)
	assert.LessOrEqual(t, st.FrozenBlocks, 50*MaxFrozenBlocksPerSession)
	assert.Equal(t, st.Entries, len(h.s.Tasks().List("")))
	h.s.mu.Lock()
	defer h.s.mu.Unlock()
	n := 0
	for _, set := range h.s.parents.byTaskID {
		n += len(set)
	}
	assert.Equal(t, st.Entries, n, "the task-id index holds exactly the live entries")
}

func TestAgentsPerParentBounded(t *testing.T) {
	h := newHarness(t, Config{})
	for i := 0; i < MaxAgentsPerParent+10; i++ {
		h.task("p1", "agent"+strconv.Itoa(i), "l", "ses_"+strconv.Itoa(i))
	}
	block := h.s.Tasks().ResumableSessions("p1")
	assert.Len(t, block, MaxAgentsPerParent)
	assert.Equal(t, "agent"+strconv.Itoa(MaxAgentsPerParent+9), block[0].Agent)
	// The forgotten agent's counter stays: its next alias is new.
	h.task("p1", "agent0", "l", "ses_new")
	assert.Equal(t, "agent0-2", h.s.Tasks().List("p1")[0].Alias)
}

func TestAliasPrefixesPerParentBounded(t *testing.T) {
	h := newHarness(t, Config{})
	for i := 0; i < MaxAliasPrefixesPerParent+5; i++ {
		h.task("p1", "agent"+strconv.Itoa(i), "l", "ses_"+strconv.Itoa(i))
	}
	h.s.mu.Lock()
	p1, _ := h.s.parents.list.Get("p1")
	assert.Len(t, p1.counters, MaxAliasPrefixesPerParent)
	h.s.mu.Unlock()
	// A known prefix still gets new aliases.
	h.task("p1", "agent1", "l", "ses_x")
	assert.Equal(t, "agent1-2", h.s.Tasks().List("p1")[0].Alias)
}

func TestConcurrentUse(t *testing.T) {
	s := New(Config{MaxParents: 20, MaxPendingCalls: 50, MaxTrackedSessions: 30})
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for i := 0; i < 2000; i++ {
				parent := "p" + strconv.Itoa((g*7+i)%40)
				c := fmt.Sprintf("c%d_%d", g, i)
				s.Tasks().BeginCall(context.Background(), c, parent, "explorer", "l", "exp-1")
				s.Tasks().CompleteCall(context.Background(), c, out(fmt.Sprintf("ses_%d_%d", g, i%5)))
				s.Tracked().SetAgent(context.Background(), parent, "orchestrator")
				s.Tracked().Agent(parent)
				s.Frozen().Block(context.Background(), parent, "m"+strconv.Itoa(i%3), func() string { return fmt.Sprint(s.Tasks().ResumableSessions(parent)) })
				if i%50 == 0 {
					s.DeleteSession(context.Background(), parent)
				}
				s.Tasks().List("")
				s.Stats()
			}
		}(g)
	}
	wg.Wait()
	st := s.Stats()
	assert.LessOrEqual(t, st.Parents, 20)
	assert.Equal(t, st.Entries, len(s.Tasks().List("")))
}

// BenchmarkStoreMixed creates, resumes and deletes task sessions across
// 10,000 parents with the default bounds.
func BenchmarkStoreMixed(b *testing.B) {
	const parents = 10000
	s := New(Config{})
	agents := []string{"explorer", "oracle", "librarian", "fixer"}
	names := make([]string, parents)
	for i := range names {
		names[i] = "ses_parent_" + strconv.Itoa(i)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		parent := names[(i*7919)%parents]
		agent := agents[i%len(agents)]
		c := "call_" + strconv.Itoa(i)
		switch i % 10 {
		case 0, 1, 2, 3: // fresh task
			s.Tasks().BeginCall(context.Background(), c, parent, agent, "label", "")
			s.Tasks().CompleteCall(context.Background(), c, out("ses_child_"+strconv.Itoa(i)))
		case 4, 5, 6: // resume by alias
			if act, id := s.Tasks().BeginCall(context.Background(), c, parent, agent, "label", "exp-1"); act == TaskIDReplace {
				s.Tasks().CompleteCall(context.Background(), c, out(id))
			} else {
				s.Tasks().CompleteCall(context.Background(), c, out("ses_child_"+strconv.Itoa(i)))
			}
		case 7:
			s.Tasks().ResumableSessions(parent)
		case 8:
			s.Tracked().SetAgent(context.Background(), parent, "orchestrator")
		case 9:
			if i%100 == 9 {
				s.DeleteSession(context.Background(), parent)
			} else {
				s.DeleteSession(context.Background(), "ses_child_"+strconv.Itoa(i-5))
			}
		}
	}
}

// changeCount counts the mutations of the state Snapshot saves (the
// tests' check that each one is seen as a change). Marking a parent or
// session as active without changing what it holds does not count.
func changeCount(s *Store) uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.changes + s.parents.changes + s.cache.changes
}
