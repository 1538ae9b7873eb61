package sessiondb

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"time"

	"github.com/hookwire/hookwire/sessions"
)

// The models' health and the tracked sessions' model column in the state
// database (health.go is the store's side).

func healthFromRow(model string, until, strikes, last int64, class, message string) sessions.Health {
	return sessions.Health{Model: model, Until: time.Unix(0, until).UTC(), Strikes: int(strikes), Last: time.Unix(0, last).UTC(), Class: class, Message: message}
}

// ReadHealth reads one model's row.
func (d healthRows) Read(ctx context.Context, model string) (sessions.Health, bool, error) {
	var until, strikes, last int64
	var class, message string
	err := d.c.queryRow(ctx, "SELECT until_ns, strikes, last_ns, class, message FROM health WHERE model=?", model).Scan(&until, &strikes, &last, &class, &message)
	if errors.Is(err, sql.ErrNoRows) {
		return sessions.Health{}, false, nil
	}
	if err != nil {
		return sessions.Health{}, false, classify(err)
	}
	return healthFromRow(model, until, strikes, last, class, message), true, nil
}

// ReadHealthAll reads every row, the latest failure first.
func (d healthRows) ReadAll(ctx context.Context) ([]sessions.Health, error) {
	rows, err := d.c.query(ctx, "SELECT model, until_ns, strikes, last_ns, class, message FROM health")
	if err != nil {
		return nil, classify(err)
	}
	defer rows.Close()
	out := []sessions.Health{}
	for rows.Next() {
		var model, class, message string
		var until, strikes, last int64
		if err := rows.Scan(&model, &until, &strikes, &last, &class, &message); err != nil {
			return nil, classify(err)
		}
		out = append(out, healthFromRow(model, until, strikes, last, class, message))
	}
	if err := rows.Err(); err != nil {
		return nil, classify(err)
	}
	sessions.SortHealth(out)
	return out, nil
}

// WriteHealth writes one model's row in the open transaction and keeps
// the table within MaxHealthModels (the oldest failure goes first).
func (d healthRows) Write(ctx context.Context, h sessions.Health) error {
	if err := d.c.exec(ctx, `INSERT INTO health(model,until_ns,strikes,last_ns,class,message) VALUES(?,?,?,?,?,?)
		ON CONFLICT(model) DO UPDATE SET until_ns=excluded.until_ns, strikes=excluded.strikes, last_ns=excluded.last_ns,
		class=excluded.class, message=excluded.message`,
		h.Model, h.Until.UnixNano(), h.Strikes, h.Last.UnixNano(), h.Class, h.Message); err != nil {
		return classify(err)
	}
	return classify(d.c.exec(ctx, "DELETE FROM health WHERE model NOT IN (SELECT model FROM health ORDER BY last_ns DESC, model LIMIT ?)", sessions.MaxHealthModels))
}

// trackedRow is a tracked session's model column: the model decision's
// members and, beside them, the session's parent, running model and
// switches (an earlier build reads only the decision's).
type trackedRow struct {
	Model    string            `json:"model,omitempty"`
	Variant  string            `json:"variant,omitempty"`
	Rung     string            `json:"rung,omitempty"`
	Changed  bool              `json:"changed,omitempty"`
	Parent   string            `json:"parent,omitempty"`
	Running  string            `json:"running,omitempty"`
	Switches []sessions.Switch `json:"switches,omitempty"`
}

// trackedModelColumn is t's model column; nil (NULL) when it has nothing.
func trackedModelColumn(t sessions.TrackedRecord) (any, error) {
	if t.Model == nil && t.Parent == "" && t.Running == "" && len(t.Switches) == 0 {
		return nil, nil
	}
	row := trackedRow{Parent: t.Parent, Running: t.Running, Switches: t.Switches}
	if m := t.Model; m != nil {
		row.Model, row.Variant, row.Rung, row.Changed = m.Model, m.Variant, m.Rung, m.Changed
	}
	b, err := json.Marshal(row)
	if err != nil {
		return nil, err
	}
	return string(b), nil
}

// restoreTrackedColumn fills t from its model column as it is (a
// column that does not decode gives nothing); TrackedRecord.Bounded
// applies the caps.
func restoreTrackedColumn(t *sessions.TrackedRecord, column string) {
	var row trackedRow
	if json.Unmarshal([]byte(column), &row) != nil {
		return
	}
	t.Model = &sessions.ModelDecision{Model: row.Model, Variant: row.Variant, Rung: row.Rung, Changed: row.Changed}
	t.Parent, t.Running, t.Switches = row.Parent, row.Running, row.Switches
}
