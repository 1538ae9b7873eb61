package sessions

// The pending task calls: a tool.execute.before waiting for its
// tool.execute.after. They live in memory only: a restarted process never
// gets the outcome of a call its predecessor began.

type pendingCall struct {
	callID, parent, agent, prefix, label string
	resumes                              string // task id this call resumes, "" if none
}

// addPending records pc as the newest pending call, replacing one with the
// same call id, and forgets the oldest beyond MaxPendingCalls.
func (s *Store) addPending(pc *pendingCall) {
	s.removePending(pc.callID)
	s.pending.PushFront(pc.callID, pc)
	s.pendingBytes += pendingCost(pc)
	for s.pending.Len() > s.cfg.MaxPendingCalls {
		oldest, _, _ := s.pending.Back()
		s.removePending(oldest)
	}
}

// setResumes records the task id pc resumes, counting its bytes if pc is
// pending.
func (s *Store) setResumes(pc *pendingCall, taskID string) {
	if cur, _ := s.pending.Get(pc.callID); cur == pc {
		s.pendingBytes += len(taskID) - len(pc.resumes)
	}
	pc.resumes = taskID
}

// removePending takes the pending call callID; nil when there is none.
func (s *Store) removePending(callID string) *pendingCall {
	pc, ok := s.pending.Remove(callID)
	if !ok {
		return nil
	}
	s.pendingBytes -= pendingCost(pc)
	return pc
}
