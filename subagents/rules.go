package subagents

import (
	"encoding/base64"
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/hookwire/hookwire/core"
)

// Event is what OpenCode reported of a session that changes its state.
type Event int

// The events of the state machine (Next).
const (
	// Busy: session.status busy, or an assistant message still growing.
	Busy Event = iota
	// RetryScheduled: session.status retry.
	RetryScheduled
	// Idle: session.idle, or session.status idle.
	Idle
	// Errored: session.error, or an assistant message with an error.
	Errored
	// Aborted: session.error MessageAbortedError (an interrupt).
	Aborted
)

// Next is the state after ev. Busy and RetryScheduled make any state
// running or retrying again (a resumed child runs again); Idle ends a
// running, retrying or interrupted child as done but keeps a failure or a
// cancel (OpenCode reports idle after both); an error fails a child that
// was not cancelled, an abort cancels it.
func Next(cur State, ev Event) State {
	switch ev {
	case Busy:
		return Running
	case RetryScheduled:
		return Retrying
	case Idle:
		if cur == Failed || cur == Cancelled {
			return cur
		}
		return Done
	case Errored:
		if cur == Cancelled {
			return cur
		}
		return Failed
	case Aborted:
		return Cancelled
	}
	return cur
}

// Active reports whether s is a child at work: listed first, counted in
// Parent.Running.
func Active(s State) bool { return s == Running || s == Retrying }

// Shown is the state a reader reports for a row recorded as s by a writer
// that is alive or not: an active row whose writer is gone is
// interrupted (PROTOCOL.md 4.10), as nobody is left to see OpenCode report
// its end.
func Shown(s State, writerAlive bool) State {
	if Active(s) && !writerAlive {
		return Interrupted
	}
	return s
}

// ParseTitle reads a child session's title as OpenCode's task tool makes
// it, "<description> (@<agent> subagent)": ok false for any other title.
func ParseTitle(title string) (label, agent string, ok bool) {
	rest, found := strings.CutSuffix(strings.TrimSpace(title), " subagent)")
	if !found {
		return "", "", false
	}
	i := strings.LastIndex(rest, " (@")
	if i < 0 {
		return "", "", false
	}
	agent = rest[i+3:]
	if agent == "" || strings.ContainsAny(agent, " ()") {
		return "", "", false
	}
	return strings.TrimSpace(rest[:i]), agent, true
}

// MaxTextBytes bounds a label, an error and a retry message as recorded.
const MaxTextBytes = 256

// Cut shortens s to at most MaxTextBytes, splitting no character a user
// sees as one (core.ClusterStart).
func Cut(s string) string {
	if len(s) <= MaxTextBytes {
		return s
	}
	cut := MaxTextBytes
	for cut > 0 && !isRuneStart(s[cut]) {
		cut--
	}
	return s[:core.ClusterStart(s, cut)]
}

func isRuneStart(b byte) bool { return b&0xC0 != 0x80 }

// Reason is a failure in a user's words: "<class>: <message>" where the
// class says what kind of failure it is (rate limit, overloaded, …), the
// message alone when nothing is known of its kind.
func Reason(name, message string, statusCode int) string {
	message = strings.TrimSpace(message)
	class, _ := core.ClassifyFailure(core.ProviderFailure{StatusCode: statusCode, Name: name, Message: message})
	words := map[string]string{
		core.FailureRateLimit:     "rate limit",
		core.FailureQuota:         "quota",
		core.FailureOverloaded:    "overloaded",
		core.FailureServer:        "server error",
		core.FailureModelNotFound: "model not found",
		core.FailureBadRequest:    "bad request",
		core.FailureContextLength: "context too long",
		core.FailureContentFilter: "content filter",
		core.FailureAborted:       "cancelled",
	}[class]
	switch {
	case words == "" && message == "":
		if name != "" {
			return Cut(name)
		}
		return "failed"
	case words == "":
		return Cut(message)
	case message == "":
		return words
	}
	return Cut(words + ": " + message)
}

// IsAbort reports whether an error named name is an interrupt
// (MessageAbortedError on 1.x).
func IsAbort(name string) bool { return name == "MessageAbortedError" }

// Add returns t plus u.
func (t Tokens) Add(u Tokens) Tokens {
	return Tokens{t.Input + u.Input, t.Output + u.Output, t.Reasoning + u.Reasoning, t.CacheRead + u.CacheRead, t.CacheWrite + u.CacheWrite}
}

// Sub returns t less u.
func (t Tokens) Sub(u Tokens) Tokens {
	return Tokens{t.Input - u.Input, t.Output - u.Output, t.Reasoning - u.Reasoning, t.CacheRead - u.CacheRead, t.CacheWrite - u.CacheWrite}
}

// Context is the context a message with these tokens used: what the
// model read (input, cache read and write) and wrote.
func (t Tokens) Context() int64 { return t.Input + t.CacheRead + t.CacheWrite + t.Output }

// CacheShare is the share of the prompt read from the cache; ok false
// before any prompt token.
func (t Tokens) CacheShare() (float64, bool) {
	prompt := t.Input + t.CacheRead + t.CacheWrite
	if prompt <= 0 {
		return 0, false
	}
	return float64(t.CacheRead) / float64(prompt), true
}

// Add returns f plus g.
func (f Figures) Add(g Figures) Figures { return Figures{f.Tokens.Add(g.Tokens), f.Cost + g.Cost} }

// Sub returns f less g.
func (f Figures) Sub(g Figures) Figures { return Figures{f.Tokens.Sub(g.Tokens), f.Cost - g.Cost} }

// Cursor is a position in subagents.list's order: active rows first,
// then the rest, each newest start first, the session id breaking ties
// (descending).
type Cursor struct {
	Active    bool
	StartedNs int64
	Session   string
}

// ErrBadCursor is a cursor that no page gave.
var ErrBadCursor = errors.New("not a cursor subagents.list gave")

// Encode is c as subagents.list's next.
func (c Cursor) Encode() string {
	a := "0"
	if c.Active {
		a = "1"
	}
	return base64.RawURLEncoding.EncodeToString([]byte(a + ":" + strconv.FormatInt(c.StartedNs, 10) + ":" + c.Session))
}

// DecodeCursor reads a cursor Encode made.
func DecodeCursor(s string) (Cursor, error) {
	raw, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return Cursor{}, ErrBadCursor
	}
	parts := strings.SplitN(string(raw), ":", 3)
	if len(parts) != 3 || (parts[0] != "0" && parts[0] != "1") || parts[2] == "" {
		return Cursor{}, ErrBadCursor
	}
	ns, err := strconv.ParseInt(parts[1], 10, 64)
	if err != nil {
		return Cursor{}, ErrBadCursor
	}
	return Cursor{Active: parts[0] == "1", StartedNs: ns, Session: parts[2]}, nil
}

// Before reports whether a row at a is listed before one at b.
func (a Cursor) Before(b Cursor) bool {
	if a.Active != b.Active {
		return a.Active
	}
	if a.StartedNs != b.StartedNs {
		return a.StartedNs > b.StartedNs
	}
	return a.Session > b.Session
}

// coolingPrefix begins the reason of the switch chat.message makes while
// the failed model cools down (PROTOCOL.md 4.8).
const coolingPrefix = "cooling until "

// Switches are a session's model switches as subagents.list shows them:
// one per failure, each with its failure's class. A switch made because
// the model cools down ("cooling until T (<class>: …)") for the same
// from and to as the one before it is the same failure, not a second
// row; one for another pair is kept, with the class it names.
func Switches(list []SwitchRecord) []Switch {
	var out []Switch
	for _, sw := range list {
		cooling := strings.HasPrefix(sw.Reason, coolingPrefix)
		if cooling && len(out) > 0 && out[len(out)-1].From == sw.From && out[len(out)-1].To == sw.To {
			continue
		}
		out = append(out, Switch{From: sw.From, To: sw.To, Class: switchClass(sw.Reason), At: sw.At})
	}
	return out
}

// SwitchRecord is a switch as the model fallback records it (sessions.Switch).
type SwitchRecord struct {
	From, To, Reason string
	At               time.Time
}

// switchClass is the class a switch's reason names: "<class>: <message>"
// or "cooling until T (<class>: <message>)"; a reason in other words is
// classed by its words (core.ClassifyFailure).
func switchClass(reason string) string {
	if rest, ok := strings.CutPrefix(reason, coolingPrefix); ok {
		if i := strings.Index(rest, " ("); i >= 0 {
			reason = strings.TrimSuffix(rest[i+2:], ")")
		}
	}
	class, _, _ := strings.Cut(reason, ":")
	class = strings.TrimSpace(class)
	if knownClasses[class] {
		return class
	}
	class, _ = core.ClassifyFailure(core.ProviderFailure{Message: reason})
	return class
}

// knownClasses are the failure classes a switch's reason may begin with.
var knownClasses = map[string]bool{
	core.FailureRateLimit: true, core.FailureQuota: true, core.FailureOverloaded: true, core.FailureServer: true,
	core.FailureModelNotFound: true, core.FailureBadRequest: true, core.FailureContextLength: true,
	core.FailureContentFilter: true, core.FailureAborted: true, core.FailureUnknown: true,
}
