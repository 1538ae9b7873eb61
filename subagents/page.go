package subagents

import "time"

// The wire shape of subagents.list (PROTOCOL.md 9, contract.json's
// SubagentsPage): what a client draws, every string raw data.

// Page is one page of a parent's subagents.
type Page struct {
	Parent    Parent `json:"parent"`
	Subagents []Row  `json:"subagents"`
	// Next is the cursor of the following page, "" on the last.
	Next string `json:"next,omitempty"`
}

// Parent is the parent session's figures: its own assistant messages,
// and those plus every descendant's.
type Parent struct {
	SessionID string  `json:"sessionID"`
	Own       Figures `json:"own"`
	Total     Figures `json:"total"`
	// Subagents is how many descendants are recorded; Running how many of
	// them run or wait to retry now.
	Subagents int `json:"subagents"`
	Running   int `json:"running"`
}

// Figures are tokens and cost summed over assistant messages.
type Figures struct {
	Tokens Tokens  `json:"tokens"`
	Cost   float64 `json:"cost"`
}

// Tokens are an assistant message's token counts as OpenCode reports them
// (tokens.cache.read and .write flattened).
type Tokens struct {
	Input      int64 `json:"input"`
	Output     int64 `json:"output"`
	Reasoning  int64 `json:"reasoning"`
	CacheRead  int64 `json:"cacheRead"`
	CacheWrite int64 `json:"cacheWrite"`
}

// Row is one subagent (a child session, at any depth).
type Row struct {
	SessionID string `json:"sessionID"`
	ParentID  string `json:"parentID"`
	Depth     int    `json:"depth"`
	Alias     string `json:"alias,omitempty"`
	// Resumable: the model's Resumable Sessions list still names the
	// alias (false without one).
	Resumable bool       `json:"resumable"`
	Agent     string     `json:"agent,omitempty"`
	Label     string     `json:"label,omitempty"`
	State     State      `json:"state"`
	StartedAt time.Time  `json:"startedAt"`
	EndedAt   *time.Time `json:"endedAt,omitempty"`
	Retry     *Retry     `json:"retry,omitempty"`
	Error     string     `json:"error,omitempty"`
	Model     string     `json:"model,omitempty"`
	Tokens    Tokens     `json:"tokens"`
	Cost      float64    `json:"cost"`
	Context   *Context   `json:"context,omitempty"`
	// CacheShare is cacheRead over all input tokens (input + cacheRead +
	// cacheWrite); absent before any.
	CacheShare *float64 `json:"cacheShare,omitempty"`
	Switches   []Switch `json:"switches,omitempty"`
}

// Retry is a subagent waiting to retry (OpenCode's session.status retry).
type Retry struct {
	Attempt int        `json:"attempt"`
	Next    *time.Time `json:"next,omitempty"`
	Message string     `json:"message"`
}

// Context is the context the latest assistant message used, against the
// model's window where it is known (Limit 0: unknown, left out).
type Context struct {
	Used  int64 `json:"used"`
	Limit int64 `json:"limit,omitempty"`
}

// Switch is one model fallback of a subagent: one per failure, with the
// failure's class.
type Switch struct {
	From  string    `json:"from"`
	To    string    `json:"to"`
	Class string    `json:"class"`
	At    time.Time `json:"at"`
	// Pending: asked for, not yet seen applied (PROTOCOL.md 4.8): the
	// subagent is not said to run on To.
	Pending bool `json:"pending,omitempty"`
}

// Changed is subagents.changed's params: the parents whose rows or
// figures changed.
type Changed struct {
	Parents []string `json:"parents"`
}

// The page sizes of subagents.list.
const (
	DefaultLimit = 24
	MaxLimit     = 200
)
