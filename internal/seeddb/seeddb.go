// Package seeddb makes large state databases for tests and benchmarks of
// listing (issue 30 item 13): a database made through a store would take
// a write transaction per parent, minutes for 100,000 of them. It writes
// through sessiondb.Import, so the schema has one owner.
package seeddb

import (
	"context"
	"fmt"
	"time"

	"github.com/hookwire/hookwire/sessiondb"
	"github.com/hookwire/hookwire/sessions"
)

// Seed makes the database at path (the schema as a sidecar makes it)
// holding parents parent sessions ses_p<i>, each with one entry (agent
// explorer, alias explorer-1, task session ses_t<i>, its run completed)
// whose task session is tracked with a model decision, in one
// transaction. Parent i is the i-th most recent: ses_p0 is the newest.
func Seed(path string, parents int) error {
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	return sessiondb.Import(context.Background(), path, func(w *sessiondb.Writer) error {
		for i := range parents {
			rev := int64(parents - i) // ses_p0: the highest revision and tick
			parent, task := fmt.Sprintf("ses_p%d", i), fmt.Sprintf("ses_t%d", i)
			if err := w.Parent(sessions.ParentRecord{ID: parent, Rev: rev, Bytes: 300,
				Entries: []sessions.EntryRecord{{Agent: "explorer", Alias: "explorer-1", TaskID: task, Label: "a task with a label",
					LastUse: base.Add(time.Duration(rev) * time.Second), Tick: rev, Run: sessions.Run{State: sessions.RunCompleted}}},
				Counters: map[string]int64{"explorer": 1}}); err != nil {
				return err
			}
			if err := w.Tracked(sessions.TrackedRecord{Session: task, Agent: "explorer", Rev: rev, Bytes: 200, Parent: parent,
				Model: &sessions.ModelDecision{Model: fmt.Sprintf("fake/m%d", i%7), Rung: "agent"}}); err != nil {
				return err
			}
		}
		return nil
	})
}
