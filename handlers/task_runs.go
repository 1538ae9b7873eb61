package handlers

// failThrownTasks marks the runs of task calls that OpenCode's native task
// tool ended by throwing: tool.execute.after never came for them, and the
// error shows only as an errored task part in the history (PROTOCOL.md
// 4.1, 5 sessions.list). The part's callID names the pending call; once
// taken, the same part seen in later histories finds nothing.
func (s *Server) failThrownTasks(msgs []wireMessage) {
	if !s.cfg.TaskSessions.Enabled {
		return
	}
	for _, m := range msgs {
		for _, p := range m.Parts {
			if p.Type != "tool" || p.CallID == "" || p.State == nil || p.State.Status != "error" || !s.cfg.isTaskTool(p.Tool) {
				continue
			}
			text, _ := p.State.Error.(string)
			s.store.FailCall(p.CallID, text)
		}
	}
}
