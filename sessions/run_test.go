package sessions

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestRunState drives calls the way the handlers do and checks the run
// state sessions.list reports for the entry exp-1 (ses_a under p1).
func TestRunState(t *testing.T) {
	long := strings.Repeat("é", MaxRunErrorBytes) // 2 bytes each: twice the cap
	tests := []struct {
		name string
		run  func(h *harness)
		want Run
	}{
		{
			name: "a fresh task is remembered completed",
			run:  func(h *harness) { h.task("p1", "explorer", "one", "ses_a") },
			want: Run{State: RunCompleted},
		},
		{
			name: "a resume runs until its outcome",
			run: func(h *harness) {
				h.task("p1", "explorer", "one", "ses_a")
				act, _ := h.s.Tasks().BeginCall(context.Background(), "c-resume", "p1", "explorer", "again", "exp-1")
				require.Equal(h.t, TaskIDReplace, act)
			},
			want: Run{State: RunRunning},
		},
		{
			name: "a resume that names the session completes it",
			run: func(h *harness) {
				h.task("p1", "explorer", "one", "ses_a")
				h.resume("p1", "explorer", "again", "exp-1", out("ses_a"))
			},
			want: Run{State: RunCompleted},
		},
		{
			name: "a resume whose output names no session failed",
			run: func(h *harness) {
				h.task("p1", "explorer", "one", "ses_a")
				h.resume("p1", "explorer", "again", "exp-1", out(""))
			},
			want: Run{State: RunError},
		},
		{
			name: "a thrown resume (errored part) failed, with its error cut",
			run: func(h *harness) {
				h.task("p1", "explorer", "one", "ses_a")
				h.s.Tasks().BeginCall(context.Background(), "c-resume", "p1", "explorer", "again", "exp-1")
				h.s.Tasks().FailCall(context.Background(), "c-resume", long)
			},
			want: Run{State: RunError, Error: long[:MaxRunErrorBytes]},
		},
		{
			name: "an errored part seen again changes nothing: the call is gone",
			run: func(h *harness) {
				h.task("p1", "explorer", "one", "ses_a")
				h.s.Tasks().BeginCall(context.Background(), "c-resume", "p1", "explorer", "again", "exp-1")
				h.s.Tasks().FailCall(context.Background(), "c-resume", "boom")
				h.resume("p1", "explorer", "again", "exp-1", out("ses_a"))
				h.s.Tasks().FailCall(context.Background(), "c-resume", "boom")
			},
			want: Run{State: RunCompleted},
		},
		{
			name: "a thrown fresh call marks no entry",
			run: func(h *harness) {
				h.task("p1", "explorer", "one", "ses_a")
				h.s.Tasks().BeginCall(context.Background(), "c-fresh", "p1", "explorer", "new", "")
				h.s.Tasks().FailCall(context.Background(), "c-fresh", "Unknown agent type")
			},
			want: Run{State: RunCompleted},
		},
		{
			name: "a resume without callID has no outcome, so it is not marked running",
			run: func(h *harness) {
				h.task("p1", "explorer", "one", "ses_a")
				h.s.Tasks().BeginCall(context.Background(), "", "p1", "explorer", "again", "exp-1")
			},
			want: Run{State: RunCompleted},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, Config{})
			tt.run(h)
			got := h.s.Tasks().List("p1")
			require.Len(t, got, 1)
			assert.Equal(t, "exp-1", got[0].Alias)
			assert.Equal(t, tt.want, got[0].Run)
			assertBytesCounted(t, h.s)

			// The state file keeps it.
			data, err := h.s.Snapshot()
			require.NoError(t, err)
			if tt.want == (Run{State: RunCompleted}) {
				assert.NotContains(t, string(data), `"run"`, "a plain completed run takes no bytes in the file")
			} else {
				assert.Contains(t, string(data), `"run":{"state":"`+tt.want.State+`"`)
			}
			r := newTestStore(Config{})
			require.NoError(t, r.Restore(data))
			assert.Equal(t, got, r.Tasks().List("p1"))
			assertBytesCounted(t, r)
		})
	}
}

func TestRunStateFromFile(t *testing.T) {
	tests := []struct {
		name  string
		entry string
		want  Run
	}{
		{"written before runs were kept", `{}`, Run{State: RunCompleted}},
		{"running", `{"run":{"state":"running"}}`, Run{State: RunRunning}},
		{"error with text", `{"run":{"state":"error","error":"boom"}}`, Run{State: RunError, Error: "boom"}},
		{"an error text without error is dropped", `{"run":{"state":"completed","error":"boom"}}`, Run{State: RunCompleted}},
		{"an unknown state reads completed", `{"run":{"state":"paused"}}`, Run{State: RunCompleted}},
		{"null reads completed", `{"run":null}`, Run{State: RunCompleted}},
		{"an error text over the cap is cut", `{"run":{"state":"error","error":"` + strings.Repeat("x", MaxRunErrorBytes+9) + `"}}`,
			Run{State: RunError, Error: strings.Repeat("x", MaxRunErrorBytes)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			extra := strings.TrimSuffix(strings.TrimPrefix(tt.entry, "{"), "}")
			if extra != "" {
				extra = "," + extra
			}
			doc := `{"version":1,"clock":1,"parents":[{"id":"p1","counters":{"exp":1},"entries":[` +
				`{"agent":"explorer","alias":"exp-1","taskId":"ses_a","label":"one","lastUse":"2026-01-02T03:04:05Z","use":1` + extra + `}]}],"sessionAgents":[]}`
			s := newTestStore(Config{})
			require.NoError(t, s.Restore([]byte(doc)))
			got := s.Tasks().List("p1")
			require.Len(t, got, 1)
			assert.Equal(t, tt.want, got[0].Run)
			assertBytesCounted(t, s)
		})
	}
}
