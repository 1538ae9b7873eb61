package sessiondb

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/hookwire/hookwire/core"

	"github.com/hookwire/hookwire/sessions"
)

// The store driven the way the handlers drive it (as sessions' tests do),
// through its exported API.

// epoch is the wall clock of every test store: ordering must come from the
// logical clock alone, even when every use shares one instant.
var epoch = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

func newTestStore(cfg sessions.Config) *sessions.Store {
	if cfg.Now == nil {
		cfg.Now = func() time.Time { return epoch }
	}
	return sessions.New(cfg)
}

// harness drives a store the way the handlers do, numbering call ids.
type harness struct {
	t *testing.T
	s *sessions.Store
	n int
}

func newHarness(t *testing.T, cfg sessions.Config) *harness {
	return &harness{t: t, s: newTestStore(cfg)}
}

func (h *harness) callID() string { h.n++; return "call_" + strconv.Itoa(h.n) }

// task runs one complete task call that returns id and is not a resume.
func (h *harness) task(parent, agent, label, id string) {
	h.t.Helper()
	c := h.callID()
	act, _ := h.s.Tasks().BeginCall(context.Background(), c, parent, agent, label, "")
	require.Equal(h.t, sessions.TaskIDLeave, act)
	h.s.Tasks().CompleteCall(context.Background(), c, out(id))
}

// resume runs a task call asking for requested, whose output says out. It
// returns what BeginCall answered.
func (h *harness) resume(parent, agent, label, requested string, out core.TaskOutcome) (sessions.TaskIDAction, string) {
	h.t.Helper()
	c := h.callID()
	act, id := h.s.Tasks().BeginCall(context.Background(), c, parent, agent, label, requested)
	h.s.Tasks().CompleteCall(context.Background(), c, out)
	return act, id
}

// resolve asks BeginCall about requested without completing the call.
func (h *harness) resolve(parent, agent, requested string) (sessions.TaskIDAction, string) {
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
