// Package seeddb makes large state databases for tests and benchmarks of
// listing (issue 30 item 13): a database made through a store would take
// a write transaction per parent, minutes for 100,000 of them.
package seeddb

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/rs/zerolog"
	_ "modernc.org/sqlite" // the driver the store uses

	"github.com/hookwire/hookwire/sessiondb"
	"github.com/hookwire/hookwire/sessions"
)

// Seed makes the database at path (the schema as a sidecar makes it)
// holding parents parent sessions ses_p<i>, each with one entry (agent
// explorer, alias explorer-1, task session ses_t<i>, its run completed)
// whose task session is tracked with a model decision, in one
// transaction. Parent i is the i-th most recent: ses_p0 is the newest.
func Seed(path string, parents int) error {
	st := sessions.New(sessions.Config{})
	d, err := sessiondb.OpenDatabase(context.Background(), path, st, zerolog.Nop())
	if err != nil {
		return err
	}
	if err := d.Close(); err != nil {
		return err
	}
	db, err := sql.Open("sqlite", "file:"+path+"?mode=rw")
	if err != nil {
		return err
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	tx, err := db.Begin()
	if err != nil {
		return err
	}
	defer tx.Rollback()
	ins := func(q string) (*sql.Stmt, error) { return tx.Prepare(q) }
	pst, err := ins("INSERT INTO parents(pid,id,rev,bytes) VALUES(?,?,?,?)")
	if err != nil {
		return err
	}
	est, err := ins("INSERT INTO entries(pid,alias,agent,task_id,label,last_use,tick,run_state,run_error) VALUES(?,?,?,?,?,?,?,?,?)")
	if err != nil {
		return err
	}
	cst, err := ins("INSERT INTO counters(pid,prefix,n) VALUES(?,?,?)")
	if err != nil {
		return err
	}
	tst, err := ins("INSERT INTO tracked(session,agent,model,rev,bytes) VALUES(?,?,?,?,?)")
	if err != nil {
		return err
	}
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := range parents {
		pid, rev := int64(i+1), int64(parents-i) // ses_p0: the highest revision and tick
		parent, task := fmt.Sprintf("ses_p%d", i), fmt.Sprintf("ses_t%d", i)
		if _, err := pst.Exec(pid, parent, rev, 300); err != nil {
			return err
		}
		if _, err := est.Exec(pid, "explorer-1", "explorer", task, "a task with a label", base.Add(time.Duration(rev)*time.Second).UnixNano(), rev, sessions.RunCompleted, ""); err != nil {
			return err
		}
		if _, err := cst.Exec(pid, "explorer", 1); err != nil {
			return err
		}
		model := fmt.Sprintf(`{"model":"fake/m%d","rung":"agent","parent":%q}`, i%7, parent)
		if _, err := tst.Exec(task, "explorer", model, rev, 200); err != nil {
			return err
		}
	}
	n := int64(parents + 1)
	if _, err := tx.Exec("INSERT INTO meta(key,value) VALUES('seq',?),('clock',?) ON CONFLICT(key) DO UPDATE SET value=excluded.value", n, n); err != nil {
		return err
	}
	return tx.Commit()
}
