package handlers

import (
	"context"
	"time"

	"github.com/hookwire/hookwire/core"
	"github.com/hookwire/hookwire/sessions"
)

// Store is what the handlers need of the session store, declared here
// where it is used (a *sessions.Store is the one initialize makes), in the
// parts each area of the protocol uses. The methods that take a context
// may write; their transaction runs under it (the request's).
type Store interface {
	Tasks() sessions.Tasks
	Frozen() sessions.Frozen
	DeleteSession(ctx context.Context, id string)
	Tracked() sessions.Tracked
	ProviderHealth() sessions.ProviderHealth
	PromptCache() sessions.PromptCache
	Stats() sessions.Stats
	// RecordModels is one intent on the models' records (4.7, 4.8: a
	// failed model call; a session seen on a model, moved off one that
	// cools): what record reads and changes, in one write transaction.
	RecordModels(ctx context.Context, record func(*sessions.ModelRecords)) error
}

// The store's methods for each part, each a type of package sessions, and what the
// handlers use of each.

// taskStore: the task calls and their aliases (4.2), sessions.list.
type taskStore interface {
	BeginCall(ctx context.Context, callID, parent, agent, label, requestedID string) (sessions.TaskIDAction, string)
	CompleteCall(ctx context.Context, callID string, out core.TaskOutcome)
	FailCall(ctx context.Context, callID, message string)
	List(parent string) []sessions.Entry
	Page(ctx context.Context, parent, cursor string, limit int) (sessions.EntryPage, error)
	ResumableSessions(parent string) []core.BlockAgent
	ResumeName(parent, taskID string) (name, agent string)
}

// frozenStore: the frozen cache-stable blocks (4.4).
type frozenStore interface {
	Block(ctx context.Context, session, messageID string, compute func() string) string
	Retain(ctx context.Context, session string, inHistory func(messageID string) bool)
}

// sessionStore: what is kept of a session (4.7, 4.8): its agent, parent,
// running model, model decision and switches.
type sessionStore interface {
	SetAgent(ctx context.Context, session, agent string)
	Agent(session string) string
	SetParent(ctx context.Context, session, parent string)
	Parent(session string) string
	SetRunning(ctx context.Context, session, model string)
	Running(session string) string
	SetModelDecision(ctx context.Context, session string, d sessions.ModelDecision)
	AddSwitch(ctx context.Context, session string, sw sessions.Switch)
	Switches(session string) []sessions.Switch
}

// healthStore: the models' health (4.8).
type healthStore interface {
	Of(model string) (core.ModelHealth, bool)
	Cooling(model string, now time.Time) bool
	List() []sessions.Health
}

// cacheStore: the prompt-cache figures (4.9).
type cacheStore interface {
	Prompt(session string, p *core.PromptPrint)
	System(session string, system, block uint64)
	Usage(ctx context.Context, u sessions.Usage) (bust *sessions.CacheBust, inARow bool)
	List() []sessions.CacheSession
	Of(session string) (sessions.CacheSession, bool)
}

var (
	_ Store        = (*sessions.Store)(nil)
	_ taskStore    = sessions.Tasks{}
	_ frozenStore  = sessions.Frozen{}
	_ cacheStore   = sessions.PromptCache{}
	_ healthStore  = sessions.ProviderHealth{}
	_ sessionStore = sessions.Tracked{}
)
