package sessions

import "github.com/hookwire/hookwire/internal/lru"

// The pending task calls: a tool.execute.before waiting for its
// tool.execute.after. They live in memory only: a restarted process never
// gets the outcome of a call its predecessor began.

type pendingCall struct {
	callID, parent, agent, prefix, label string
	resumes                              string // task id this call resumes, "" if none
}

// pendingCalls is the pending calls, newest first: pure, no lock and no IO.
// bytes is what they count against the byte budget.
type pendingCalls struct {
	list  *lru.List[string, *pendingCall] // by call id
	bytes int
}

func newPendingCalls() pendingCalls { return pendingCalls{list: lru.New[string, *pendingCall]()} }

// add records pc as the newest pending call, replacing one with the same
// call id, and forgets the oldest beyond max.
func (b *pendingCalls) add(pc *pendingCall, max int) {
	b.remove(pc.callID)
	b.list.PushFront(pc.callID, pc)
	b.bytes += pendingCost(pc)
	for b.list.Len() > max {
		oldest, _, _ := b.list.Back()
		b.remove(oldest)
	}
}

// setResumes records the task id pc resumes, counting its bytes if pc is
// pending.
func (b *pendingCalls) setResumes(pc *pendingCall, taskID string) {
	if cur, _ := b.list.Get(pc.callID); cur == pc {
		b.bytes += len(taskID) - len(pc.resumes)
	}
	pc.resumes = taskID
}

// remove takes the pending call callID; nil when there is none.
func (b *pendingCalls) remove(callID string) *pendingCall {
	pc, ok := b.list.Remove(callID)
	if !ok {
		return nil
	}
	b.bytes -= pendingCost(pc)
	return pc
}
