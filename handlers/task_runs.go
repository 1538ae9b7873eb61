package handlers

import "context"

// failThrownTasks marks the runs of task calls that OpenCode's native task
// tool ended by throwing: tool.execute.after never came for them, and the
// error shows only as an errored task part in the history (PROTOCOL.md
// 4.1, 5 sessions.list). The part's callID names the pending call; once
// taken, the same part seen in later histories finds nothing.
func (t *transformState) failThrownTasks(ctx context.Context, history []entry) {
	if !t.cfg.TaskSessions.Enabled {
		return
	}
	for i := range history {
		if m := &history[i]; m.Local.flags&flagThrown != 0 {
			for _, c := range m.Derived.thrown {
				t.store.Tasks().FailCall(ctx, c.callID, c.text)
			}
		}
	}
}
