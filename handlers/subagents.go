package handlers

import (
	"context"
	"encoding/json"
	"sync"
	"time"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/rs/zerolog"

	"github.com/hookwire/hookwire/contract"
	"github.com/hookwire/hookwire/rpc"
	"github.com/hookwire/hookwire/sessions"
	"github.com/hookwire/hookwire/subagents"
)

// SubagentRecords is what a Persistence may also give: the subagents'
// records beside the store (PROTOCOL.md 4.10).
type SubagentRecords interface {
	SubagentService() subagents.Service
}

// subagentRecords is the subagents' part of the server: OpenCode's events
// in, one intent of the records each, and subagents.changed out.
type subagentRecords struct {
	svc   subagents.Service // nil: none (subagents.list answers empty pages)
	log   zerolog.Logger
	notes chan<- rpc.Notification
	clock func() time.Time

	mu      sync.Mutex
	pending []string // parents to name in the next subagents.changed
	timer   *time.Timer
	lastErr string // the failure last logged at warn level
}

// changedEvery is the least time between two subagents.changed.
const changedEvery = 100 * time.Millisecond

// told takes an intent's outcome: a failure is logged (the records are a
// view; the hook goes on), the parents it changed are named in the next
// subagents.changed, sent at most once every changedEvery.
func (r *subagentRecords) told(what string, ch subagents.Changed, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if err != nil {
		// Once at warn level while it fails the same way (a database a
		// newer hookwire migrated fails every event), then at debug.
		ev := r.log.Debug()
		if err.Error() != r.lastErr {
			ev, r.lastErr = r.log.Warn(), err.Error()
		}
		ev.Err(err).Str("intent", what).Msg("subagents' records not written")
		return
	}
	r.lastErr = ""
	if len(ch.Parents) == 0 || r.notes == nil {
		return
	}
	for _, p := range ch.Parents {
		if !containsString(r.pending, p) {
			r.pending = append(r.pending, p)
		}
	}
	if r.timer == nil {
		r.timer = time.AfterFunc(changedEvery, r.flush)
	}
}

// flush sends the parents gathered; a client that far behind misses it
// (its queue full), and reads subagents.list when it next draws.
func (r *subagentRecords) flush() {
	r.mu.Lock()
	parents := r.pending
	r.pending, r.timer = nil, nil
	r.mu.Unlock()
	if len(parents) == 0 {
		return
	}
	select {
	case r.notes <- rpc.Notification{Method: contract.MethodSubagentsChanged, Params: subagents.Changed{Parents: parents}}:
	default:
	}
}

func containsString(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// eventTime is an epoch-milliseconds time of OpenCode's (zero when raw is
// none).
func eventTime(raw jsontext.Value) time.Time {
	ms, ok := rawNumber(raw)
	if !ok || ms <= 0 {
		return time.Time{}
	}
	return time.UnixMilli(int64(ms)).UTC()
}

// messageTokens are OpenCode's tokens {input, output, reasoning, cache
// {read, write}}.
type messageTokens struct {
	Input     float64 `json:"input"`
	Output    float64 `json:"output"`
	Reasoning float64 `json:"reasoning"`
	Cache     struct {
		Read  float64 `json:"read"`
		Write float64 `json:"write"`
	} `json:"cache"`
}

func (t messageTokens) tokens() subagents.Tokens {
	return subagents.Tokens{Input: int64(t.Input), Output: int64(t.Output), Reasoning: int64(t.Reasoning), CacheRead: int64(t.Cache.Read), CacheWrite: int64(t.Cache.Write)}
}

// eventError is OpenCode's error object: {name, data: {message,
// statusCode?}}.
type eventError struct {
	Name string `json:"name"`
	Data struct {
		Message    string  `json:"message"`
		StatusCode float64 `json:"statusCode"`
	} `json:"data"`
}

func decodeError(raw jsontext.Value) (eventError, bool) {
	var e eventError
	if raw.Kind() != '{' || json.Unmarshal(raw, &e) != nil {
		return eventError{}, false
	}
	return e, e.Name != "" || e.Data.Message != ""
}

// subagentEvent records what OpenCode's event says of a session's
// subagents (4.10); every member is read leniently (a bad one is ignored).
func (s *Server) subagentEvent(ctx context.Context, p *eventParams) {
	r := &s.subs
	if r.svc == nil {
		return
	}
	ev := p.Input.Event
	props := ev.Properties
	info := props.Info
	now := r.clock()
	session := rawString(props.SessionID)
	switch ev.Type {
	case contract.EventSessionCreated:
		id := rawString(info.ID)
		if id == "" {
			id = session
		}
		parent := rawString(info.ParentID)
		if parent == "" {
			return
		}
		var times struct {
			Created float64 `json:"created"`
		}
		at := now
		if info.Time.Kind() == '{' && json.Unmarshal(info.Time, &times) == nil && times.Created > 0 {
			at = time.UnixMilli(int64(times.Created)).UTC()
		}
		label, agent, _ := subagents.ParseTitle(rawString(info.Title))
		if agent == "" {
			agent = rawString(info.Agent)
		}
		ch, err := r.svc.SubagentStarted(ctx, subagents.Started{Session: id, Parent: parent, Label: label, Agent: agent, At: at})
		r.told("started", ch, err)
	case contract.EventSessionStatus:
		var st struct {
			Type    string  `json:"type"`
			Attempt float64 `json:"attempt"`
			Message string  `json:"message"`
			Next    float64 `json:"next"`
		}
		if props.Status.Kind() != '{' || json.Unmarshal(props.Status, &st) != nil {
			return
		}
		switch st.Type {
		case "busy":
			ch, err := r.svc.SubagentStatus(ctx, session, subagents.Busy, nil, now)
			r.told("busy", ch, err)
		case "retry":
			retry := &subagents.Retry{Attempt: int(st.Attempt), Message: st.Message}
			if st.Next > 0 {
				t := time.UnixMilli(int64(st.Next)).UTC()
				retry.Next = &t
			}
			ch, err := r.svc.SubagentStatus(ctx, session, subagents.RetryScheduled, retry, now)
			r.told("retry", ch, err)
		case "idle":
			ch, err := r.svc.SubagentEnded(ctx, session, subagents.Idle, "", now)
			r.told("idle", ch, err)
		}
	case contract.EventSessionIdle:
		ch, err := r.svc.SubagentEnded(ctx, session, subagents.Idle, "", now)
		r.told("idle", ch, err)
	case contract.EventSessionError:
		e, ok := decodeError(props.Error)
		if !ok || session == "" {
			return
		}
		r.ended(ctx, session, e, now)
	case contract.EventMessageUpdated:
		if rawString(info.Role) != "assistant" {
			return
		}
		id, sess := rawString(info.ID), rawString(info.SessionID)
		if sess == "" {
			sess = session
		}
		var tok messageTokens
		if info.Tokens.Kind() == '{' {
			_ = json.Unmarshal(info.Tokens, &tok)
		}
		cost, _ := rawNumber(info.Cost)
		var times struct {
			Completed float64 `json:"completed"`
		}
		if info.Time.Kind() == '{' {
			_ = json.Unmarshal(info.Time, &times)
		}
		model := ""
		if p, m := rawString(info.ProviderID), rawString(info.ModelID); m != "" {
			model = m
			if p != "" {
				model = p + "/" + m
			}
		}
		e, failed := decodeError(info.Error)
		ch, err := r.svc.SubagentMessage(ctx, subagents.Message{Session: sess, ID: id, Model: model, Tokens: tok.tokens(), Cost: cost,
			Done: times.Completed > 0 || failed, At: now, ErrName: e.Name, ErrText: e.Data.Message})
		r.told("message", ch, err)
		if failed {
			r.ended(ctx, sess, e, now)
		}
	case contract.EventSessionDeleted:
		id := rawString(info.ID)
		if id == "" {
			id = session
		}
		ch, err := r.svc.Forget(ctx, id)
		r.told("forget", ch, err)
	}
}

// ended records a session's error: an interrupt cancels it, any other
// error fails it with its reason in a user's words.
func (r *subagentRecords) ended(ctx context.Context, session string, e eventError, now time.Time) {
	ev, reason := subagents.Errored, subagents.Reason(e.Name, e.Data.Message, int(e.Data.StatusCode))
	if subagents.IsAbort(e.Name) {
		ev, reason = subagents.Aborted, ""
	}
	ch, err := r.svc.SubagentEnded(ctx, session, ev, reason, now)
	r.told("ended", ch, err)
}

// subagentTask records what a finished task call says of its child: the
// alias it got, its agent and label (from the parent's entries). On
// OpenCode 2 (v2, the subagent tool), a child the records do not know yet
// (no session.created reached them) is recorded from the call: started,
// and ended with the call unless the call left it running in the
// background. (On 1.x session.created always comes first, and the shim
// catches up after a late start.)
func (s *Server) subagentTask(ctx context.Context, parent, child string, v2, failed bool, output string) {
	if s.subs.svc == nil || child == "" {
		return
	}
	now := s.subs.clock()
	t := subagents.Task{Session: child, Parent: parent, At: now}
	running := false
	for _, e := range s.store.Tasks().List(parent) {
		if e.TaskID == child {
			t.Alias, t.Agent, t.Label = e.Alias, e.Agent, e.Label
			running = e.Run.State == sessions.RunRunning
			break
		}
	}
	if !v2 && !running {
		// On 1.x a task call returns once its child stopped.
		t.Ended, t.Failed = true, failed
		if failed {
			t.Reason = subagents.Reason("", output, 0)
		}
	}
	ch, err := s.subs.svc.SubagentTask(ctx, t)
	s.subs.told("task", ch, err)
	if err != nil || len(ch.Parents) > 0 || !v2 {
		return
	}
	page, err := s.subs.svc.SubagentsOf(ctx, child, "", 1)
	if err != nil || page.Parent.Own != (subagents.Figures{}) || page.Parent.Subagents > 0 {
		return // known (as a parent of its own): nothing to add
	}
	ch, err = s.subs.svc.SubagentStarted(ctx, subagents.Started{Session: child, Parent: parent, Label: t.Label, Agent: t.Agent, At: now})
	s.subs.told("started", ch, err)
	if err != nil || len(ch.Parents) == 0 {
		return
	}
	ch, err = s.subs.svc.SubagentTask(ctx, t)
	s.subs.told("task", ch, err)
	switch {
	case running:
	case failed:
		ch, err = s.subs.svc.SubagentEnded(ctx, child, subagents.Errored, subagents.Reason("", output, 0), now)
		s.subs.told("ended", ch, err)
	default:
		ch, err = s.subs.svc.SubagentEnded(ctx, child, subagents.Idle, "", now)
		s.subs.told("ended", ch, err)
	}
}
