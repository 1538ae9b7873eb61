package sessiondb

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/hookwire/hookwire/sessions"
)

// Two processes answering one failure of a child at once (the same
// attempt, or none given) each record its switch: one record (issue 49),
// whichever read the other's first. Another attempt is another switch.
func TestOneSwitchPerFailureAcrossProcesses(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.db")
	a, _ := dbHarness(t, path, sessions.Config{})
	b, _ := dbHarness(t, path, sessions.Config{})
	ctx := context.Background()
	at := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	a.s.Tracked().SetAgent(ctx, "ses_c", "explore")
	b.s.Tracked().Agent("ses_c") // b has read the child before a's switch
	for _, attempt := range []int{0, 2} {
		sw := sessions.Switch{From: "fake/m1", To: "fake/m2", Reason: "rate-limit", At: at, Attempt: attempt, Pending: true}
		a.s.Tracked().AddSwitch(ctx, "ses_c", sw)
		b.s.Tracked().AddSwitch(ctx, "ses_c", sw)
		for name, h := range map[string]*harness{"a": a, "b": b} {
			var got []int
			for _, w := range h.s.Tracked().Switches("ses_c") {
				got = append(got, w.Attempt)
			}
			assert.Equal(t, attemptsUpTo(attempt), got, "%s after attempt %d", name, attempt)
		}
	}
}

// attemptsUpTo lists the switch records expected after the attempts up to n.
func attemptsUpTo(n int) []int {
	if n == 0 {
		return []int{0}
	}
	return []int{0, n}
}
