package subagents

import (
	"context"
	"time"
)

// Service is the durable record of subagents, one method per thing that
// happens to one (benbjohnson/wtf's shape): each method is one
// transaction in the implementation (sessiondb), reading and writing all
// its intent needs, so two processes doing the same at once give one
// after the other. Every write returns the top-level parents whose rows
// or figures it changed (for subagents.changed); none when it changed
// nothing. Methods are safe for concurrent use.
type Service interface {
	// SubagentStarted records a child session of parent (session.created).
	SubagentStarted(ctx context.Context, s Started) (Changed, error)
	// SubagentStatus records that session is at work (Busy) or waits to
	// retry (RetryScheduled, with retry).
	SubagentStatus(ctx context.Context, session string, ev Event, retry *Retry, at time.Time) (Changed, error)
	// SubagentMessage records an assistant message's figures, kept per
	// message id: a message reported again replaces its figures.
	SubagentMessage(ctx context.Context, m Message) (Changed, error)
	// SubagentEnded records that session went idle (Idle), failed
	// (Errored, with reason) or was interrupted (Aborted).
	SubagentEnded(ctx context.Context, session string, ev Event, reason string, at time.Time) (Changed, error)
	// SubagentTask records what a task call says of its child: label,
	// agent and the alias it got.
	SubagentTask(ctx context.Context, t Task) (Changed, error)
	// Forget drops a deleted session's records, its descendants' too.
	Forget(ctx context.Context, session string) (Changed, error)
	// SubagentsOf is one page of parent's subagents (subagents.list),
	// reading the page's rows and no more.
	SubagentsOf(ctx context.Context, parent, cursor string, limit int) (Page, error)
	// ParentFigures are parent's figures without its rows.
	ParentFigures(ctx context.Context, parent string) (Parent, error)
}

// Started is a child session's creation.
type Started struct {
	Session, Parent string
	Label, Agent    string
	At              time.Time
}

// Message is one assistant message's figures as OpenCode reports them.
type Message struct {
	Session, ID string
	// Model is "provider/model", the model the step ran on.
	Model   string
	Tokens  Tokens
	Cost    float64
	Done    bool // time.completed is set
	At      time.Time
	ErrName string // info.error.name, "" when none
	ErrText string
}

// Task is what a task call says of its child session.
type Task struct {
	Session, Parent     string
	Label, Agent, Alias string
	At                  time.Time
	// Ended: the call ended with its child stopped (false when it left
	// the child running), Failed with Reason in a user's words. A child
	// still recorded at work is then done, or failed: a session.idle that
	// never reached the records does not leave it running.
	Ended, Failed bool
	Reason        string
}
