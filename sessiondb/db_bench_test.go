package sessiondb

import (
	"context"
	"fmt"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/rs/zerolog"

	"github.com/hookwire/hookwire/sessions"
)

// benchDB makes a database holding n task sessions (n/10 parents, each
// with five agents' two newest) and n tracked sessions.
func benchDB(b *testing.B, n int) string {
	b.Helper()
	path := filepath.Join(b.TempDir(), "state.db")
	s := sessions.New(sessions.Config{MaxParents: n/10 + 1, MaxTrackedSessions: n + 1})
	d, err := OpenDatabase(b.Context(), path, s, zerolog.Nop())
	if err != nil {
		b.Fatal(err)
	}
	for i := range n {
		parent := "ses_parent_" + strconv.Itoa(i/10)
		c := "call_" + strconv.Itoa(i)
		s.Tasks().BeginCall(context.Background(), c, parent, "agent"+strconv.Itoa(i%5), "a task label of some length", "")
		s.Tasks().CompleteCall(context.Background(), c, out("ses_task_"+strconv.Itoa(i)))
		s.Tracked().SetAgent(context.Background(), "ses_task_"+strconv.Itoa(i), "explorer")
	}
	if st := s.Stats(); st.Entries != n || st.TrackedSessions != n {
		b.Fatalf("built %+v, want %d entries and tracked sessions", st, n)
	}
	if err := d.Close(); err != nil {
		b.Fatal(err)
	}
	return path
}

// BenchmarkOpenDatabase is what initialize does with --state: open the
// database (WAL on again, the schema checked) and serve the first
// request's read of a parent, on an empty database and on one holding 10k
// task sessions; the ratio of the two, in one run, is the cost of size.
func BenchmarkOpenDatabase(b *testing.B) {
	for _, n := range []int{0, 10000} {
		path := benchDB(b, n)
		b.Run(fmt.Sprintf("sessions=%d", n), func(b *testing.B) {
			for b.Loop() {
				s := sessions.New(sessions.Config{})
				d, err := OpenDatabase(b.Context(), path, s, zerolog.Nop())
				if err != nil {
					b.Fatal(err)
				}
				s.Tasks().ResumableSessions("ses_parent_7")
				if err := d.Close(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkStoreCall is one task call's store work (tool.execute.before,
// then its tool.execute.after committed) in memory and with the database,
// in one run.
func BenchmarkStoreCall(b *testing.B) {
	for _, withDB := range []bool{false, true} {
		b.Run(fmt.Sprintf("database=%v", withDB), func(b *testing.B) {
			s := sessions.New(sessions.Config{})
			if withDB {
				d, err := OpenDatabase(b.Context(), filepath.Join(b.TempDir(), "state.db"), s, zerolog.Nop())
				if err != nil {
					b.Fatal(err)
				}
				b.Cleanup(func() { d.Close() })
			}
			i := 0
			for b.Loop() {
				i++
				c := "call_" + strconv.Itoa(i)
				s.Tasks().BeginCall(context.Background(), c, "ses_parent", "explorer", "label", "")
				s.Tasks().CompleteCall(context.Background(), c, out("ses_task_"+strconv.Itoa(i)))
			}
		})
	}
}
