package sessions

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// The store reads the clock Config.Now gives it, not the wall clock: an
// entry's last use is that clock's.
func TestConfigNowIsTheStoresClock(t *testing.T) {
	at := time.Date(2031, 5, 6, 7, 8, 9, 0, time.UTC)
	s := New(Config{Now: func() time.Time { return at }})
	act, _ := s.Tasks().BeginCall(context.Background(), "call_1", "ses_parent", "explorer", "a label", "")
	require.Equal(t, TaskIDLeave, act)
	s.Tasks().CompleteCall(context.Background(), "call_1", out("ses_child"))
	list := s.Tasks().List("ses_parent")
	require.Len(t, list, 1)
	require.True(t, list[0].LastUse.Equal(at), "last use %v, want the store's clock %v", list[0].LastUse, at)
}
