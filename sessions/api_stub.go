package sessions

import (
	"time"

	"github.com/hookwire/hookwire/core"
)

// Config bounds the store (PROTOCOL.md 4.2, 7).
type Config struct {
	MaxSessionsPerAgent int               // default 2
	MaxPendingCalls     int               // default 100
	MaxParents          int               // default 1000
	MaxTrackedSessions  int               // default 10000
	AliasOverrides      map[string]string // config.taskSessions.agents
}

// Entry is one remembered task session, as sessions.list reports it.
type Entry struct {
	Parent  string    `json:"parent"`
	Agent   string    `json:"agent"`
	Alias   string    `json:"alias"`
	TaskID  string    `json:"taskId"`
	Label   string    `json:"label"`
	LastUse time.Time `json:"lastUse"`
}

// Stats is what status reports about the store.
type Stats struct {
	Parents         int `json:"parents"`
	Entries         int `json:"entries"`
	PendingCalls    int `json:"pendingCalls"`
	TrackedSessions int `json:"trackedSessions"`
	FrozenBlocks    int `json:"frozenBlocks"`
}

// TaskIDAction says what tool.execute.before does with args.task_id.
type TaskIDAction int

const (
	TaskIDLeave   TaskIDAction = iota // no task_id given: leave args alone
	TaskIDReplace                     // set args.task_id to the returned id
	TaskIDRemove                      // remove args.task_id: start fresh
)

// Store is the session store.
type Store struct{}

// New returns an empty store; zero Config fields take their defaults.
func New(cfg Config) *Store { panic("todo") }

// BeginCall records a pending task call (tool.execute.before) and resolves
// requestedID (args.task_id, "" when absent or not a string) among parent's
// remembered sessions for agent. It returns what to do with args.task_id
// and, for TaskIDReplace, the id to put there.
func (s *Store) BeginCall(callID, parent, agent, label, requestedID string) (TaskIDAction, string) {
	panic("todo")
}

// CompleteCall takes the pending call callID (tool.execute.after) and
// updates the remembered entries from the task output.
func (s *Store) CompleteCall(callID, output string) { panic("todo") }

// Block returns parent's remembered entries grouped by agent, newest first,
// ready for core.ResumableSessionsBlock.
func (s *Store) Block(parent string) []core.BlockAgent { panic("todo") }

// SetAgent records which agent session runs; Agent reads it ("" unknown).
func (s *Store) SetAgent(session, agent string) { panic("todo") }
func (s *Store) Agent(session string) string    { panic("todo") }

// FrozenBlock returns the block frozen for (session, messageID), computing
// and storing it with compute on first sight (cache-stable mode, 4.4).
func (s *Store) FrozenBlock(session, messageID string, compute func() string) string {
	panic("todo")
}

// DeleteSession forgets everything about session id (session.deleted).
func (s *Store) DeleteSession(id string) { panic("todo") }

// List returns remembered entries, newest first; parent "" lists all.
func (s *Store) List(parent string) []Entry { panic("todo") }

// Stats reports sizes.
func (s *Store) Stats() Stats { panic("todo") }
