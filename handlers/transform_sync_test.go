package handlers

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hookwire/hookwire/incremental"
	"github.com/hookwire/hookwire/rpc"
)

// syncCall dispatches chat.messages.transform and returns the result as a
// client reads it, or the error.
func syncCall(t testing.TB, s *Server, params any) (patch []any, base string, err error) {
	t.Helper()
	r, err := syncReply(t, s, params)
	return r.Patch, r.Base, err
}

// transformReply is a reply as a client reads it.
type transformReply struct {
	Patch   []any
	Reapply []incremental.Run
	Base    string
}

func syncReply(t testing.TB, s *Server, params any) (transformReply, error) {
	t.Helper()
	res, err := s.Dispatch(context.Background(), rpc.Request{Method: "chat.messages.transform", Params: mustJSON(t, params)})
	if err != nil {
		return transformReply{}, err
	}
	var out struct {
		Patch   []any `json:"patch"`
		Reapply []struct {
			At, Keep, Count *int
		} `json:"reapply"`
		Base *string `json:"base"`
	}
	require.NoError(t, json.Unmarshal(mustJSON(t, res), &out))
	require.NotNil(t, out.Patch)
	r := transformReply{Patch: out.Patch}
	for _, run := range out.Reapply {
		require.True(t, run.At != nil && run.Keep != nil && run.Count != nil, "a run has at, keep and count")
		r.Reapply = append(r.Reapply, incremental.Run{At: *run.At, Keep: *run.Keep, Count: *run.Count})
	}
	if out.Base != nil {
		require.NotEmpty(t, *out.Base, "a base, when given, is never empty")
		r.Base = *out.Base
	}
	return r, nil
}

func rpcCode(err error) int64 {
	var e *rpc.Error
	if errors.As(err, &e) {
		return e.Code
	}
	return 0
}

func textPart(text string) incremental.Part { return incremental.Part{Type: "text", Text: &text} }

func taskPart(callID, status, errText string) incremental.Part {
	p := incremental.Part{Type: "tool", Tool: "task", CallID: callID}
	p.State = &incremental.State{Status: status}
	if errText != "" {
		p.State.Error = errText
	}
	return p
}

func msg(id, role, session string, parts ...incremental.Part) incremental.Message {
	m := incremental.Message{Info: incremental.Info{ID: id, Role: role, SessionID: session}, Parts: parts}
	if role == "user" {
		m.Info.Agent = "orchestrator"
	}
	if m.Parts == nil {
		m.Parts = []incremental.Part{}
	}
	return m
}

func full(session string, msgs []incremental.Message) map[string]any {
	p := map[string]any{"input": map[string]any{}, "output": map[string]any{"messages": msgs}}
	if session != "" {
		p["sync"] = map[string]any{"session": session}
	}
	return p
}

func incrementalForm(session, base string, items ...any) map[string]any {
	if items == nil {
		items = []any{}
	}
	return map[string]any{"input": map[string]any{}, "sync": map[string]any{"session": session, "base": base, "messages": items}}
}

func TestTransformSyncExchange(t *testing.T) {
	s := newServer(t, nil)
	unknown := "Unknown agent type: foo is not a valid agent type"
	h := []incremental.Message{
		msg("m1", "user", "ses_1", textPart("hello")),
		msg("m2", "assistant", "ses_1", taskPart("c1", "running", "")),
	}
	p1, base1, err := syncCall(t, s, full("ses_1", h))
	require.NoError(t, err)
	require.NotEmpty(t, base1)
	_, again, err := syncCall(t, s, full("ses_1", h))
	require.NoError(t, err)
	assert.Equal(t, base1, again, "the base id is a function of the history")
	_, other, err := syncCall(t, s, full("ses_2", h))
	require.NoError(t, err)
	assert.NotEqual(t, base1, other, "and of the session")

	// Part 0 of message 1 errs; a user message is appended.
	p2, base2, err := syncCall(t, s, incrementalForm("ses_1", base1,
		map[string]any{"keep": 0, "count": 1},
		map[string]any{"edit": 1, "parts": []any{map[string]any{"part": taskPart("c1", "error", unknown)}}},
		map[string]any{"message": msg("m3", "user", "ses_1", textPart("again"))}))
	require.NoError(t, err)
	assert.NotEqual(t, base1, base2)
	h2 := []incremental.Message{h[0], msg("m2", "assistant", "ses_1", taskPart("c1", "error", unknown)), msg("m3", "user", "ses_1", textPart("again"))}
	want, wantBase, err := syncCall(t, newServer(t, nil), full("ses_1", h2))
	require.NoError(t, err)
	assert.Equal(t, want, p2)
	assert.Equal(t, wantBase, base2, "the same history, the same base in another process")
	assert.Len(t, p1, 1, "the reminder on m1")
	assert.Len(t, p2, 3, "reminders on m1 and m3, guidance on the errored task part")

	// The old base is gone: the session holds one.
	_, _, err = syncCall(t, s, incrementalForm("ses_1", base1))
	assert.Equal(t, CodeUnknownBase, rpcCode(err))
	// Compaction: m1 and m2 replaced by a summary; nothing more to say.
	p3, base3, err := syncCall(t, s, incrementalForm("ses_1", base2,
		map[string]any{"message": msg("m9", "assistant", "ses_1", textPart("summary"))},
		map[string]any{"keep": 2, "count": 1}))
	require.NoError(t, err)
	want, wantBase, err = syncCall(t, newServer(t, nil), full("ses_1", []incremental.Message{msg("m9", "assistant", "ses_1", textPart("summary")), h2[2]}))
	require.NoError(t, err)
	assert.Equal(t, want, p3)
	assert.Equal(t, wantBase, base3)
	// An empty history is one too.
	p4, base4, err := syncCall(t, s, incrementalForm("ses_1", base3))
	require.NoError(t, err)
	assert.Empty(t, p4)
	assert.NotEmpty(t, base4)

	// The full form without sync keeps nothing and answers no base.
	res, err := s.Dispatch(context.Background(), rpc.Request{Method: "chat.messages.transform", Params: mustJSON(t, full("", h))})
	require.NoError(t, err)
	assert.NotContains(t, string(mustJSON(t, res)), "base")
}

func TestTransformSyncErrors(t *testing.T) {
	h := []incremental.Message{
		msg("m1", "user", "ses_1", textPart("hello")),
		msg("m2", "assistant", "ses_1", taskPart("c1", "running", ""), textPart("x")),
	}
	tests := []struct {
		name   string
		params func(base string) any
		code   int64
		msg    string
	}{
		{"unknown session", func(b string) any { return incrementalForm("ses_9", b) }, CodeUnknownBase, "unknown base"},
		{"unknown base", func(b string) any { return incrementalForm("ses_1", b+"0") }, CodeUnknownBase, "unknown base"},
		{"output and base", func(b string) any {
			p := incrementalForm("ses_1", b)
			p["output"] = map[string]any{"messages": []any{}}
			return p
		}, rpc.CodeInvalidParams, "output and sync.base do not go together"},
		{"no messages", func(b string) any {
			return map[string]any{"input": map[string]any{}, "sync": map[string]any{"session": "ses_1", "base": b}}
		}, rpc.CodeInvalidParams, `missing field "sync.messages"`},
		{"no input", func(b string) any {
			return map[string]any{"sync": map[string]any{"session": "ses_1", "base": b, "messages": []any{}}}
		}, rpc.CodeInvalidParams, `missing field "input"`},
		{"no output, no base", func(string) any {
			return map[string]any{"input": map[string]any{}, "sync": map[string]any{"session": "ses_1"}}
		}, rpc.CodeInvalidParams, `missing field "output"`},
		{"keep beyond", func(b string) any { return incrementalForm("ses_1", b, map[string]any{"keep": 1, "count": 2}) },
			rpc.CodeInvalidParams, "sync.messages[0]: keep 1 count 2 is not within the base's 2"},
		{"keep negative", func(b string) any { return incrementalForm("ses_1", b, map[string]any{"keep": -1, "count": 1}) },
			rpc.CodeInvalidParams, "keep -1 count 1"},
		{"keep no count", func(b string) any { return incrementalForm("ses_1", b, map[string]any{"keep": 0}) },
			rpc.CodeInvalidParams, "keep needs a count"},
		{"keep count 0", func(b string) any { return incrementalForm("ses_1", b, map[string]any{"keep": 0, "count": 0}) },
			rpc.CodeInvalidParams, "keep 0 count 0"},
		{"edit beyond", func(b string) any {
			return incrementalForm("ses_1", b, map[string]any{"keep": 0, "count": 1}, map[string]any{"edit": 2})
		}, rpc.CodeInvalidParams, "sync.messages[1]: edit 2 is not a message of the base (it has 2)"},
		{"two kinds", func(b string) any {
			return incrementalForm("ses_1", b, map[string]any{"keep": 0, "count": 1, "message": h[0]})
		}, rpc.CodeInvalidParams, "exactly one of"},
		{"empty item", func(b string) any { return incrementalForm("ses_1", b, map[string]any{}) },
			rpc.CodeInvalidParams, "exactly one of"},
		{"part keep beyond", func(b string) any {
			return incrementalForm("ses_1", b, map[string]any{"edit": 1, "parts": []any{map[string]any{"keep": 1, "count": 2}}})
		}, rpc.CodeInvalidParams, "sync.messages[0]: parts[0]: keep 1 count 2 is not within the base's 2"},
		{"part two kinds", func(b string) any {
			return incrementalForm("ses_1", b, map[string]any{"edit": 1, "parts": []any{map[string]any{"keep": 0, "count": 1, "part": textPart("y")}}})
		}, rpc.CodeInvalidParams, "parts[0]: a part item is exactly one of"},
		{"count not an integer", func(b string) any { return incrementalForm("ses_1", b, map[string]any{"keep": 0, "count": 1.5}) },
			rpc.CodeInvalidParams, "count"},
		{"messages not a list", func(b string) any {
			return map[string]any{"input": map[string]any{}, "sync": map[string]any{"session": "ses_1", "base": b, "messages": "x"}}
		}, rpc.CodeInvalidParams, "messages"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newServer(t, nil)
			_, base, err := syncCall(t, s, full("ses_1", h))
			require.NoError(t, err)
			_, _, err = syncCall(t, s, tt.params(base))
			require.Error(t, err)
			assert.Equal(t, tt.code, rpcCode(err))
			assert.Contains(t, err.Error(), tt.msg)
			// A refused request changes nothing: the base still serves.
			_, again, err := syncCall(t, s, incrementalForm("ses_1", base, map[string]any{"keep": 0, "count": 2}))
			require.NoError(t, err)
			assert.Equal(t, base, again)
		})
	}
}

func TestTransformSyncBounds(t *testing.T) {
	h := []incremental.Message{msg("m1", "user", "ses_1", textPart(strings.Repeat("x", 1000)))}
	// The message's strings, and the one op it gets (the reminder).
	oneBytes := int64(incremental.MessageOverhead + incremental.PartOverhead + len("m1user") + len("orchestrator") + len("ses_1") + len("text") + 1000 + incremental.OpOverhead)

	t.Run("session key", func(t *testing.T) {
		s := newServer(t, nil)
		_, base, err := syncCall(t, s, full(strings.Repeat("s", incremental.MaxKeyBytes+1), h))
		require.NoError(t, err)
		assert.Empty(t, base, "a key over the cap is served, nothing kept")
		_, base, err = syncCall(t, s, full(strings.Repeat("s", incremental.MaxKeyBytes), h))
		require.NoError(t, err)
		assert.NotEmpty(t, base)
	})
	t.Run("bytes", func(t *testing.T) {
		s := newServer(t, nil)
		s.transform.bases = incremental.NewStore[local, derived](2*oneBytes + oneBytes/2)
		var bases []string
		for i := range 3 {
			_, b, err := syncCall(t, s, full(fmt.Sprint("ses_", i), h))
			require.NoError(t, err)
			bases = append(bases, b)
		}
		n, bytes := s.transform.bases.Sessions(), s.transform.bases.Bytes()
		assert.Equal(t, 2, n)
		assert.Equal(t, 2*oneBytes, bytes)
		_, _, err := syncCall(t, s, incrementalForm("ses_0", bases[0]))
		assert.Equal(t, CodeUnknownBase, rpcCode(err), "the least recently used went first")
		_, _, err = syncCall(t, s, incrementalForm("ses_1", bases[1], map[string]any{"keep": 0, "count": 1}))
		require.NoError(t, err)
		// A history over the budget on its own is not kept, and the
		// session's earlier one goes.
		_, b, err := syncCall(t, s, full("ses_1", []incremental.Message{h[0], h[0], h[0]}))
		require.NoError(t, err)
		assert.Empty(t, b)
		_, _, err = syncCall(t, s, incrementalForm("ses_1", bases[1]))
		assert.Equal(t, CodeUnknownBase, rpcCode(err))
		n, bytes = s.transform.bases.Sessions(), s.transform.bases.Bytes()
		assert.Equal(t, 1, n)
		assert.Equal(t, oneBytes, bytes)
	})
	t.Run("sessions", func(t *testing.T) {
		s := newServer(t, nil)
		first := ""
		for i := range incremental.MaxSessions + 1 {
			_, b, err := syncCall(t, s, full(fmt.Sprint("ses_", i), h))
			require.NoError(t, err)
			if i == 0 {
				first = b
			}
		}
		assert.Equal(t, incremental.MaxSessions, s.transform.bases.Sessions())
		_, _, err := syncCall(t, s, incrementalForm("ses_0", first))
		assert.Equal(t, CodeUnknownBase, rpcCode(err))
	})
}

// TestTransformSyncProperty plays random histories, as OpenCode edits them
// (messages appended, a tool part's status changed, a text edited,
// compaction, revert, messages reordered, a duplicate id), with task calls
// between requests, on two servers: one gets every history in full, the
// other incrementally through a client that keeps a base per session, and
// that now and then loses its bases (a restart) or runs out of budget. Both
// must give the same patch to every request, and hold the same state.
func TestTransformSyncProperty(t *testing.T) {
	overBudget := 0 // requests refused as over the budget, over all seeds
	for seed := range uint64(60) {
		t.Run(fmt.Sprint("seed=", seed), func(t *testing.T) {
			rnd := rand.New(rand.NewPCG(seed, 14))
			config := map[string]any{"subagents": []any{"explorer", "oracle"}}
			if seed%3 == 0 {
				config["cacheStable"] = false
			}
			fullSrv, incSrv := newServer(t, config), newServer(t, config)
			c := &syncClient{rnd: rnd, base: map[string]string{}, sent: map[string][]incremental.Message{}, ops: map[string][][]map[string]any{}}
			g := &historyGen{rnd: rnd, hist: map[string][]incremental.Message{}}
			sessions := []string{"ses_a", "ses_b"}
			for step := range 80 {
				session := sessions[rnd.IntN(len(sessions))]
				switch r := rnd.IntN(20); {
				case r == 0:
					incSrv.transform.bases = nil // the sidecar restarted
				case r == 1:
					incSrv.transform.bases = incremental.NewStore[local, derived](int64(rnd.IntN(4000)))
				case r == 2:
					c.loseReply = true // the client gave up on the next reply (its deadline)
				case r <= 4:
					g.delegate(t, []*Server{fullSrv, incSrv}, session)
				default:
					g.edit(session)
				}
				h := g.hist[session]
				want, _, err := syncCall(t, fullSrv, full("", h))
				require.NoError(t, err)
				got, reapplied := c.send(t, incSrv, session, h)
				if reapplied {
					c.reapplied++
					want, got = byMessage(t, want), byMessage(t, got)
				}
				// The base the client holds stands for the history it sent.
				if id, held := incSrv.transform.bases.Held(session); id != "" && id == c.base[session] {
					rebuilt := append([]incremental.Message{}, held...)
					viaJSON := []incremental.Message{}
					require.NoError(t, json.Unmarshal(mustJSON(t, append([]incremental.Message{}, h...)), &viaJSON))
					require.Equal(t, string(mustJSON(t, viaJSON)), string(mustJSON(t, rebuilt)), "step %d", step)
				}
				require.Equal(t, string(mustJSON(t, want)), string(mustJSON(t, got)), "step %d, session %s, %d messages", step, session, len(h))
				for _, m := range []string{"sessions.list", "status"} {
					a := callResult(t, fullSrv, m)
					b := callResult(t, incSrv, m)
					if m == "status" {
						a, b = a.(map[string]any)["store"], b.(map[string]any)["store"]
					} else {
						// The two servers' clocks differ; the order of entries says it.
						for _, e := range append(a.([]any), b.([]any)...) {
							delete(e.(map[string]any), "lastUse")
						}
					}
					require.Equal(t, a, b, "step %d: %s", step, m)
				}
			}
			assert.Positive(t, c.incremental, "some requests went incrementally")
			assert.Positive(t, c.resent, "some bases were lost and resent")
			assert.Positive(t, c.reapplied, "some replies came with runs asked for")
			overBudget += c.overBudget
		})
	}
	assert.Positive(t, overBudget, "some incremental requests were over the budget, and resent")
}

func callResult(t *testing.T, s *Server, method string) any {
	res, err := s.Dispatch(context.Background(), rpc.Request{Method: method, Params: json.RawMessage(`{}`)})
	require.NoError(t, err)
	var v any
	require.NoError(t, json.Unmarshal(mustJSON(t, res), &v))
	return v
}

// syncClient is a client of the incremental form: it holds the base the
// sidecar acknowledged per session and the history that base stands for.
// Its deltas are random among the valid ones (a message kept may be sent
// in full, runs are split or not), so apply meets every item kind.
// It holds, as the shim does, each message's ops (paths relative to the
// message) from the reply that made the base, and asks for reapply runs
// now and then; send returns the patch with the runs expanded.
type syncClient struct {
	rnd                 *rand.Rand
	base                map[string]string
	sent                map[string][]incremental.Message
	ops                 map[string][][]map[string]any
	incremental, resent int
	reapplied           int
	overBudget          int
	loseReply           bool
}

// send returns the patch the client applies, and whether reapply runs were
// asked for (its ops are then grouped by message, see byMessage).
func (c *syncClient) send(t *testing.T, s *Server, session string, h []incremental.Message) ([]any, bool) {
	if base, ok := c.base[session]; ok {
		params := incrementalForm(session, base, c.delta(c.sent[session], h)...)
		reapply := c.rnd.IntN(4) != 0
		if reapply {
			params["sync"].(map[string]any)["reapply"] = true
		}
		r, err := syncReply(t, s, params)
		if err == nil {
			if !reapply {
				require.Empty(t, r.Reapply, "runs only for a client that asks")
			}
			c.incremental++
			patch := c.expand(t, session, len(h), r)
			c.keep(session, h, r.Base, patch)
			return patch, reapply
		}
		if rpcCode(err) == rpc.CodeInvalidParams {
			// Only a history or reply over the budget is refused: the
			// client resends in full, as the shim does.
			require.Contains(t, err.Error(), "budget", "%v", err)
			c.overBudget++
		} else {
			require.Equal(t, CodeUnknownBase, rpcCode(err), "%v", err)
		}
		c.resent++
	}
	r, err := syncReply(t, s, full(session, h))
	require.NoError(t, err)
	require.Empty(t, r.Reapply, "no runs for the full form")
	c.keep(session, h, r.Base, r.Patch)
	return r.Patch, false
}

// expand turns a reply into the patch a client applies: per message of the
// new history, the ops its base message got (a run) or those the reply
// names for it.
func (c *syncClient) expand(t *testing.T, session string, n int, r transformReply) []any {
	if len(r.Reapply) == 0 {
		return r.Patch
	}
	held := c.ops[session]
	per := make([][]any, n)
	covered := make([]bool, n)
	for _, run := range r.Reapply {
		require.True(t, run.Count >= 1 && run.At >= 0 && run.At+run.Count <= n && run.Keep >= 0 && run.Keep+run.Count <= len(held), "run %+v in range", run)
		for j := range run.Count {
			covered[run.At+j] = true
			for _, o := range held[run.Keep+j] {
				abs := maps.Clone(o)
				abs["path"] = fmt.Sprintf("/messages/%d%s", run.At+j, o["path"])
				per[run.At+j] = append(per[run.At+j], abs)
			}
		}
	}
	for _, o := range r.Patch {
		i, _ := splitMessagePath(t, o.(map[string]any)["path"].(string))
		require.False(t, covered[i], "an op of message %d, which a run covers", i)
		per[i] = append(per[i], o)
	}
	patch := []any{}
	for _, ops := range per {
		patch = append(patch, ops...)
	}
	return patch
}

// splitMessagePath splits /messages/I/REST into I and /REST.
func splitMessagePath(t *testing.T, path string) (int, string) {
	rest, ok := strings.CutPrefix(path, "/messages/")
	require.True(t, ok, "op path %q is under /messages/", path)
	num, tail, _ := strings.Cut(rest, "/")
	i, err := strconv.Atoi(num)
	require.NoError(t, err)
	return i, "/" + tail
}

// byMessage orders a patch message by message, each message's ops in
// their order: a patch with runs expanded is in that order, and it leaves
// a history as the full form's patch does.
func byMessage(t *testing.T, patch []any) []any {
	out := slices.Clone(patch)
	slices.SortStableFunc(out, func(a, b any) int {
		i, _ := splitMessagePath(t, a.(map[string]any)["path"].(string))
		j, _ := splitMessagePath(t, b.(map[string]any)["path"].(string))
		return i - j
	})
	return out
}

func (c *syncClient) keep(session string, h []incremental.Message, base string, patch []any) {
	if c.loseReply {
		c.loseReply = false
		return
	}
	if base == "" {
		delete(c.base, session)
		return
	}
	c.base[session], c.sent[session] = base, h
	ops := make([][]map[string]any, len(h))
	for _, o := range patch {
		abs := o.(map[string]any)
		rest, _ := strings.CutPrefix(abs["path"].(string), "/messages/")
		num, tail, _ := strings.Cut(rest, "/")
		i, _ := strconv.Atoi(num)
		rel := maps.Clone(abs)
		rel["path"] = "/" + tail
		ops[i] = append(ops[i], rel)
	}
	c.ops[session] = ops
}

func (c *syncClient) delta(old, h []incremental.Message) []any {
	at := map[string]int{}
	for k := len(old) - 1; k >= 0; k-- {
		at[old[k].Info.ID] = k
	}
	var items []any
	var run map[string]any // the keep item being extended
	for _, m := range h {
		k, found := at[m.Info.ID]
		switch {
		case !found || c.rnd.IntN(10) == 0 || (m.Parts == nil) != (old[k].Parts == nil):
			items, run = append(items, map[string]any{"message": m}), nil
		case reflect.DeepEqual(m, old[k]):
			if run != nil && run["keep"].(int)+run["count"].(int) == k && c.rnd.IntN(4) != 0 {
				run["count"] = run["count"].(int) + 1
				continue
			}
			run = map[string]any{"keep": k, "count": 1}
			items = append(items, run)
		default:
			edit := map[string]any{"edit": k}
			if !reflect.DeepEqual(m.Info, old[k].Info) || c.rnd.IntN(3) == 0 {
				edit["info"] = m.Info
			}
			// Parts nil on both sides: leaving parts out keeps them nil.
			if m.Parts != nil && (!reflect.DeepEqual(m.Parts, old[k].Parts) || c.rnd.IntN(3) == 0) {
				parts := []any{}
				for j, p := range m.Parts {
					if j < len(old[k].Parts) && reflect.DeepEqual(p, old[k].Parts[j]) {
						parts = append(parts, map[string]any{"keep": j, "count": 1})
					} else {
						parts = append(parts, map[string]any{"part": p})
					}
				}
				edit["parts"] = parts
			}
			items, run = append(items, edit), nil
		}
	}
	return items
}

// historyGen edits histories the ways OpenCode does.
type historyGen struct {
	rnd  *rand.Rand
	hist map[string][]incremental.Message
	n    int
	// calls are task calls started (tool.execute.before) whose parts are
	// not in a history yet.
	calls []string
}

var syncErrors = []string{
	"Unknown agent type: foo is not a valid agent type",
	`Expected a string starting with "ses", got "exp-1"`,
	"Error: Unknown agent: x. Allowed agents: explorer, oracle",
	"something else went wrong",
}

func (g *historyGen) id(prefix string) string {
	g.n++
	return fmt.Sprintf("%s_%04d", prefix, g.n)
}

func (g *historyGen) part() incremental.Part {
	switch g.rnd.IntN(4) {
	case 0:
		return textPart("words " + g.id("t"))
	case 1:
		p := taskPart(g.id("call"), "completed", "")
		if len(g.calls) > 0 && g.rnd.IntN(2) == 0 {
			p.CallID, g.calls = g.calls[0], g.calls[1:]
			p.State.Status, p.State.Error = "error", syncErrors[g.rnd.IntN(len(syncErrors))]
		}
		return p
	case 2:
		p := taskPart(g.id("call"), "running", "")
		p.Tool = "read"
		return p
	}
	return incremental.Part{Type: "step-start"}
}

func (g *historyGen) edit(session string) {
	h := cloneHistory(g.hist[session])
	switch r := g.rnd.IntN(12); {
	case r <= 3 || len(h) == 0:
		agent := []any{"orchestrator", "orchestrator", "explorer", nil}[g.rnd.IntN(4)]
		m := msg(g.id("msg"), "user", session, textPart("please "+g.id("do")))
		m.Info.Agent = agent
		h = append(h, m)
	case r <= 6:
		m := msg(g.id("msg"), "assistant", session)
		for range 1 + g.rnd.IntN(3) {
			m.Parts = append(m.Parts, g.part())
		}
		h = append(h, m)
	case r == 7: // a tool part's status changes
		for range 5 {
			m := &h[g.rnd.IntN(len(h))]
			if len(m.Parts) == 0 {
				continue
			}
			p := &m.Parts[g.rnd.IntN(len(m.Parts))]
			if p.State == nil {
				*p = g.part()
				break
			}
			p.State.Status = []string{"running", "completed", "error"}[g.rnd.IntN(3)]
			p.State.Error = nil
			if p.State.Status == "error" {
				p.State.Error = syncErrors[g.rnd.IntN(len(syncErrors))]
			}
			break
		}
	case r == 8: // compaction: a run of messages becomes one summary
		a := g.rnd.IntN(len(h))
		b := a + 1 + g.rnd.IntN(len(h)-a)
		summary := msg(g.id("msg"), "assistant", session, textPart("summary"))
		h = append(h[:a:a], append([]incremental.Message{summary}, h[b:]...)...)
	case r == 9: // revert
		h = h[:g.rnd.IntN(len(h))]
	case r == 10: // reorder
		i, j := g.rnd.IntN(len(h)), g.rnd.IntN(len(h))
		h[i], h[j] = h[j], h[i]
	default: // a duplicate id, a text edited, parts gone, or the agent changed
		m := &h[g.rnd.IntN(len(h))]
		switch g.rnd.IntN(4) {
		case 3:
			m.Info.Agent = []any{"orchestrator", "explorer", nil, 7}[g.rnd.IntN(4)]
			m.Info.Role = []string{"user", "assistant"}[g.rnd.IntN(2)]
		case 0:
			h = append(h, cloneHistory([]incremental.Message{*m})...)
		case 1:
			m.Parts = append(m.Parts, textPart("<internal_reminder>"))
		default:
			m.Parts = nil
		}
	}
	g.hist[session] = h
}

// delegate runs a task call: before, and (mostly) after with a session id,
// or leaves it pending so that a later errored part fails it.
func (g *historyGen) delegate(t *testing.T, servers []*Server, session string) {
	callID := g.id("call")
	agent := []string{"explorer", "oracle"}[g.rnd.IntN(2)]
	args := map[string]any{"description": "work " + callID, "prompt": "p", "subagent_type": agent}
	if g.rnd.IntN(3) == 0 {
		args["task_id"] = "exp-1"
	}
	child := g.id("ses_child")
	for _, s := range servers {
		call(t, s, "tool.execute.before", map[string]any{"input": map[string]any{"tool": "task", "sessionID": session, "callID": callID},
			"output": map[string]any{"args": args}})
	}
	if g.rnd.IntN(3) == 0 {
		g.calls = append(g.calls, callID)
		return
	}
	for _, s := range servers {
		call(t, s, "tool.execute.after", map[string]any{"input": map[string]any{"tool": "task", "sessionID": session, "callID": callID},
			"output": map[string]any{"output": `<task id="` + child + `" state="completed">` + "\nok\n</task>"}})
	}
}

// cloneHistory copies a history deep enough that editing the copy leaves
// the original (which a client still holds as sent) as it was.
func cloneHistory(h []incremental.Message) []incremental.Message {
	out := make([]incremental.Message, len(h))
	for i, m := range h {
		out[i] = m
		if m.Parts != nil {
			out[i].Parts = make([]incremental.Part, len(m.Parts))
			for j, p := range m.Parts {
				if p.State != nil {
					st := *p.State
					p.State = &st
				}
				out[i].Parts[j] = p
			}
		}
	}
	return out
}

// TestTransformSyncReapply: a client that asks for runs gets, for the
// messages whose ops are those their base message got, a run instead of
// the ops; and a base whose answer changed while its history did not has
// another id, so a client that missed that reply cannot reapply the ops of
// the answer before.
func TestTransformSyncReapply(t *testing.T) {
	s := newServer(t, nil)
	m1 := msg("m1", "user", "ses_1", textPart("hello"))
	m1.Info.Agent = nil // its agent is the session's, not known yet: no reminder
	m2 := msg("m2", "user", "ses_1", textPart("more"))
	first, err := syncReply(t, s, full("ses_1", []incremental.Message{m1}))
	require.NoError(t, err)
	assert.Empty(t, first.Patch)

	// The session's agent is learned: the same history now gets a reminder
	// on m1. The client misses this reply.
	call(t, s, "chat.message", map[string]any{"input": map[string]any{"sessionID": "ses_1", "agent": "orchestrator"}})
	withReapply := func(p map[string]any) map[string]any {
		p["sync"].(map[string]any)["reapply"] = true
		return p
	}
	lost, err := syncReply(t, s, withReapply(incrementalForm("ses_1", first.Base, map[string]any{"keep": 0, "count": 1})))
	require.NoError(t, err)
	require.Len(t, lost.Patch, 1, "the reminder on m1, in full: its base message got none")
	assert.Empty(t, lost.Reapply)
	assert.NotEqual(t, first.Base, lost.Base, "the same history with another answer is another base")
	_, err = syncReply(t, s, withReapply(incrementalForm("ses_1", first.Base, map[string]any{"keep": 0, "count": 1})))
	assert.Equal(t, CodeUnknownBase, rpcCode(err), "the base the client names is not the one held")

	// From the base it holds, m1 keeps its reminder as a run; m2 gets its own.
	grown, err := syncReply(t, s, withReapply(incrementalForm("ses_1", lost.Base,
		map[string]any{"keep": 0, "count": 1}, map[string]any{"message": m2})))
	require.NoError(t, err)
	assert.Equal(t, []incremental.Run{{At: 0, Keep: 0, Count: 1}}, grown.Reapply)
	require.Len(t, grown.Patch, 1)
	assert.Equal(t, "/messages/1/parts/-", grown.Patch[0].(map[string]any)["path"])
	// Without asking, the same request gets every op.
	again, err := syncReply(t, s, incrementalForm("ses_1", grown.Base, map[string]any{"keep": 0, "count": 2}))
	require.NoError(t, err)
	assert.Empty(t, again.Reapply)
	assert.Len(t, again.Patch, 2)
	assert.Equal(t, grown.Base, again.Base, "the same history and answer, the same base")
}

// TestProtocolExampleReapply is the worked example of PROTOCOL.md 4.6.
func TestProtocolExampleReapply(t *testing.T) {
	s := newServer(t, nil)
	unknown := "Unknown agent type: foo is not a valid agent type"
	base, err := syncReply(t, s, full("ses_1", []incremental.Message{
		msg("m1", "user", "ses_1", textPart("find the bug")),
		msg("m2", "assistant", "ses_1", taskPart("c1", "running", ""), textPart("delegating")),
		msg("m3", "assistant", "ses_1", textPart("waiting")),
	}))
	require.NoError(t, err)
	require.Len(t, base.Patch, 1, "the reminder on m1")
	r, err := syncReply(t, s, map[string]any{"input": map[string]any{}, "sync": map[string]any{"session": "ses_1", "base": base.Base, "reapply": true, "messages": []any{
		map[string]any{"keep": 0, "count": 1},
		map[string]any{"edit": 1, "parts": []any{map[string]any{"part": taskPart("c1", "error", unknown)}, map[string]any{"keep": 1, "count": 1}}},
		map[string]any{"keep": 2, "count": 1},
		map[string]any{"message": msg("m4", "user", "ses_1", textPart("go on"))},
	}}})
	require.NoError(t, err)
	assert.Equal(t, []incremental.Run{{At: 0, Keep: 0, Count: 1}, {At: 2, Keep: 2, Count: 1}}, r.Reapply)
	var paths []string
	for _, o := range r.Patch {
		paths = append(paths, o.(map[string]any)["path"].(string))
	}
	assert.Equal(t, []string{"/messages/1/parts/0/state/error", "/messages/3/parts/-"}, paths)
	assert.Contains(t, r.Patch[0].(map[string]any)["value"], "[hookwire retry guidance]")
}

// TestTransformSyncKeptMessagesFollowState: what a base holds of a message
// (its derived ops, flags, its ops' array) must not outlive the state it
// was worked out under. Each row handles a history in full on one server
// and with sync on another, changes the state on both between requests,
// then sends the same history grown by a message, in full to the first and
// as "keep all, add one" to the second: the patches and the state must be
// the same, and the row's check says the change did show.
func TestTransformSyncKeptMessagesFollowState(t *testing.T) {
	unknown := "Unknown agent type: foo is not a valid agent type"
	noAgent := msg("m1", "user", "ses_1", textPart("find the bug"))
	noAgent.Info.Agent = nil
	errored := msg("m2", "assistant", "ses_1", taskPart("c1", "error", unknown), textPart("delegating"))
	withAgent := msg("m1", "user", "ses_1", textPart("find the bug"))
	build := msg("m1", "user", "ses_1", textPart("find the bug"))
	build.Info.Agent = "build"
	next := msg("m9", "user", "ses_1", textPart("go on"))
	texts := func(patch []any) string { return string(mustJSON(t, patch)) }
	rows := []struct {
		name    string
		config  map[string]any
		history []incremental.Message
		next    *incremental.Message // else next
		setup   func(t *testing.T, s *Server)
		change  func(t *testing.T, s *Server)
		check   func(t *testing.T, before, after []any)
	}{{
		name:    "the session's agent is learned",
		history: []incremental.Message{noAgent},
		change: func(t *testing.T, s *Server) {
			call(t, s, "chat.message", map[string]any{"input": map[string]any{"sessionID": "ses_1", "agent": "orchestrator"}})
		},
		check: func(t *testing.T, before, after []any) {
			assert.Empty(t, before)
			assert.Contains(t, texts(after), `"/messages/0/parts/-"`, "m1 now gets the reminder")
		},
	}, {
		name:    "the session's agent changes to one not managed",
		history: []incremental.Message{noAgent},
		next:    &incremental.Message{Info: incremental.Info{ID: "m9", Role: "user", SessionID: "ses_1"}, Parts: []incremental.Part{textPart("go on")}},
		setup: func(t *testing.T, s *Server) {
			call(t, s, "chat.message", map[string]any{"input": map[string]any{"sessionID": "ses_1", "agent": "orchestrator"}})
		},
		change: func(t *testing.T, s *Server) {
			call(t, s, "chat.message", map[string]any{"input": map[string]any{"sessionID": "ses_1", "agent": "explorer"}})
		},
		check: func(t *testing.T, before, after []any) {
			assert.Contains(t, texts(before), `"/messages/0/parts/-"`)
			assert.NotContains(t, texts(after), `"/messages/0/parts/-"`, "m1's agent is now the explorer's")
		},
	}, {
		name:    "the remembered sessions change",
		history: []incremental.Message{withAgent},
		change: func(t *testing.T, s *Server) {
			call(t, s, "tool.execute.before", map[string]any{"input": map[string]any{"tool": "task", "sessionID": "ses_1", "callID": "c7"},
				"output": map[string]any{"args": map[string]any{"description": "look around", "prompt": "p", "subagent_type": "explorer"}}})
			call(t, s, "tool.execute.after", map[string]any{"input": map[string]any{"tool": "task", "sessionID": "ses_1", "callID": "c7"},
				"output": map[string]any{"output": `<task id="ses_child" state="completed">` + "\nok\n</task>"}})
		},
		check: func(t *testing.T, before, after []any) {
			assert.Contains(t, texts(after), "look around", "m9 gets the block that lists the new session")
		},
	}, {
		name:    "agents.update changes the subagents guidance lists",
		config:  map[string]any{"subagents": []any{"explorer"}},
		history: []incremental.Message{withAgent, errored},
		change: func(t *testing.T, s *Server) {
			call(t, s, "agents.update", map[string]any{"subagents": []any{"librarian"}})
		},
		check: func(t *testing.T, before, after []any) {
			assert.Contains(t, texts(before), "explorer")
			assert.Contains(t, texts(after), "librarian", "m2's guidance lists the subagents now known")
			assert.NotContains(t, texts(after), "explorer")
		},
	}, {
		name:    "agents.update changes the managed agents",
		history: []incremental.Message{build},
		change: func(t *testing.T, s *Server) {
			call(t, s, "agents.update", map[string]any{"primaryAgents": []any{"build", "plan"}})
			call(t, s, "tool.execute.before", map[string]any{"input": map[string]any{"tool": "task", "sessionID": "ses_1", "callID": "c7"},
				"output": map[string]any{"args": map[string]any{"description": "look around", "prompt": "p", "subagent_type": "explorer"}}})
			call(t, s, "tool.execute.after", map[string]any{"input": map[string]any{"tool": "task", "sessionID": "ses_1", "callID": "c7"},
				"output": map[string]any{"output": `<task id="ses_child" state="completed">` + "\nok\n</task>"}})
		},
		check: func(t *testing.T, before, after []any) {
			assert.Empty(t, before, "build is not managed yet")
			assert.Contains(t, texts(after), "look around", "build's messages get blocks once it is managed")
		},
	}, {
		name:    "a call kept in the history is made after its part was seen",
		history: []incremental.Message{withAgent, errored},
		change: func(t *testing.T, s *Server) {
			call(t, s, "tool.execute.before", map[string]any{"input": map[string]any{"tool": "task", "sessionID": "ses_1", "callID": "c1"},
				"output": map[string]any{"args": map[string]any{"description": "retry it", "prompt": "p", "subagent_type": "explorer", "task_id": "ses_child"}}})
		},
		check: func(t *testing.T, before, after []any) {},
	}, {
		name:    "the phase reminder without cache-stable mode",
		config:  map[string]any{"cacheStable": false},
		history: []incremental.Message{noAgent},
		change: func(t *testing.T, s *Server) {
			call(t, s, "chat.message", map[string]any{"input": map[string]any{"sessionID": "ses_1", "agent": "orchestrator"}})
		},
		check: func(t *testing.T, before, after []any) {
			assert.Contains(t, texts(after), `"/messages/1/parts/-"`, "the last user message gets it")
		},
	}}
	for _, row := range rows {
		t.Run(row.name, func(t *testing.T) {
			fullSrv, incSrv := newServer(t, row.config), newServer(t, row.config)
			for _, s := range []*Server{fullSrv, incSrv} {
				if row.setup != nil {
					row.setup(t, s)
				}
			}
			before, _, err := syncCall(t, fullSrv, full("", row.history))
			require.NoError(t, err)
			got, base, err := syncCall(t, incSrv, full("ses_1", row.history))
			require.NoError(t, err)
			require.Equal(t, texts(before), texts(got))
			require.NotEmpty(t, base)
			for _, s := range []*Server{fullSrv, incSrv} {
				row.change(t, s)
			}
			add := next
			if row.next != nil {
				add = *row.next
			}
			grown := append(slices.Clone(row.history), add)
			after, wantBase, err := syncCall(t, fullSrv, full("ses_1", grown))
			require.NoError(t, err)
			got, gotBase, err := syncCall(t, incSrv, incrementalForm("ses_1", base,
				map[string]any{"keep": 0, "count": len(row.history)}, map[string]any{"message": add}))
			require.NoError(t, err)
			assert.Equal(t, texts(after), texts(got))
			assert.Equal(t, wantBase, gotBase, "the same history and answer, the same base")
			for _, m := range []string{"sessions.list", "status"} {
				a, b := callResult(t, fullSrv, m), callResult(t, incSrv, m)
				if m == "status" {
					a, b = a.(map[string]any)["store"], b.(map[string]any)["store"]
				} else {
					for _, e := range append(a.([]any), b.([]any)...) {
						delete(e.(map[string]any), "lastUse")
					}
				}
				assert.Equal(t, a, b, m)
			}
			row.check(t, before, after)
		})
	}
}

// TestReminderTarget: the handler finds the message that gets the reminder
// (4.3) from what derive worked out of each message: only the last user
// message counts, and only when it wants the reminder.
func TestReminderTarget(t *testing.T) {
	id := 0
	user := func(agent any, texts ...string) incremental.Message {
		id++
		m := msg(fmt.Sprint("u", id), "user", "ses_1")
		m.Info.Agent = agent
		for _, text := range texts {
			m.Parts = append(m.Parts, textPart(text))
		}
		return m
	}
	reply := msg("a1", "assistant", "ses_1", textPart("done"))
	reminder := newServer(t, nil).cfg.ReminderConfig().ReminderText()
	rows := []struct {
		name    string
		history []incremental.Message
		want    int
	}{
		{"empty", nil, -1},
		{"the last user message wants it", []incremental.Message{user("orchestrator", "a"), reply, user("orchestrator", "b"), reply}, 2},
		{"the last user message is another agent's", []incremental.Message{user("orchestrator", "a"), user("explorer", "b"), reply}, -1},
		{"the last user message has no agent", []incremental.Message{user("orchestrator", "a"), user(nil, "a")}, 1},
		{"the last user message skips", []incremental.Message{user("orchestrator", "a"), user("orchestrator", "x <!-- SLIM_INTERNAL_INITIATOR --> y")}, -1},
		{"the last user message has it already", []incremental.Message{user("orchestrator", "a", reminder)}, -1},
		{"the last user message has no text", []incremental.Message{user("orchestrator", "a"), user("orchestrator"), reply}, -1},
		{"no user message", []incremental.Message{reply, reply}, -1},
	}
	for _, enabled := range []bool{true, false} {
		s := newServer(t, map[string]any{"cacheStable": false, "phaseReminder": map[string]any{"enabled": enabled}})
		s.transform.bases = incremental.NewStore[local, derived](incremental.DefaultMaxBytes)
		for _, row := range rows {
			history := s.transform.bases.Full(row.history).Entries
			for i := range history {
				s.transform.derive(&history[i])
			}
			want := row.want
			if !enabled {
				want = -1
			}
			assert.Equal(t, want, reminderTarget(history), "%s, enabled %v", row.name, enabled)
		}
	}
}

// TestTransformSyncAmplification: a base message or part may be kept any
// number of times, so a short incremental request can stand for a history,
// and a reply, of any size (issue 23). Both are counted as they grow and
// refused (-32602) before they would pass the histories' budget; the base
// the request named still serves, and the full form of a history that
// fits is answered as before.
func TestTransformSyncAmplification(t *testing.T) {
	long := make([]incremental.Message, 5000)
	for i := range long {
		if i%2 == 0 {
			long[i] = msg(fmt.Sprint("u", i), "user", "ses_1", textPart(fmt.Sprint("turn ", i)))
		} else {
			long[i] = msg(fmt.Sprint("a", i), "assistant", "ses_1", textPart("done"))
		}
	}
	manyParts := make([]incremental.Part, 1000)
	for i := range manyParts {
		manyParts[i] = textPart("p")
	}
	withParts := []incremental.Message{msg("u1", "user", "ses_1", textPart("hi")), msg("a1", "assistant", "ses_1", manyParts...)}
	one := []incremental.Message{msg("u1", "user", "ses_1", textPart("hi"))}
	keeps := func(n, count int) []any {
		items := make([]any, n)
		for i := range items {
			items[i] = map[string]any{"keep": 0, "count": count}
		}
		return items
	}
	partKeeps := make([]any, 2000)
	for i := range partKeeps {
		partKeeps[i] = map[string]any{"keep": 0, "count": 1000}
	}
	bigReminder := map[string]any{"phaseReminder": map[string]any{"text": strings.Repeat("r", 64<<10)}}
	rows := []struct {
		name    string
		config  map[string]any
		base    []incremental.Message
		items   []any
		reapply bool
		refused string // the error's words; "" when answered
	}{
		{name: "5,000 messages kept 1,000 times (a 28 KB request)", base: long, items: keeps(1000, 5000), reapply: true,
			refused: "the history would be over the budget of histories held (8388608 bytes); send the full form"},
		{name: "the same, 100 times, without reapply (a 2.9 KB request)", base: long, items: keeps(100, 5000),
			refused: "the history would be over the budget of histories held"},
		{name: "a message's 1,000 parts kept 2,000 times", base: withParts,
			items:   []any{map[string]any{"keep": 0, "count": 1}, map[string]any{"edit": 1, "parts": partKeeps}},
			refused: "sync.messages[1]: the history would be over the budget"},
		{name: "a message with a 64 KB reminder kept 200 times, without reapply", config: bigReminder, base: one, items: keeps(200, 1),
			refused: "the reply would be over the budget of an incremental reply (8388608 bytes)"},
		{name: "the same with reapply: runs, a short reply", config: bigReminder, base: one, items: keeps(200, 1), reapply: true},
		{name: "the base kept twice", base: long, items: keeps(2, 5000)},
	}
	for _, row := range rows {
		t.Run(row.name, func(t *testing.T) {
			s := newServer(t, row.config)
			first, base, err := syncCall(t, s, full("ses_1", row.base))
			require.NoError(t, err)
			require.NotEmpty(t, base)
			params := incrementalForm("ses_1", base, row.items...)
			if row.reapply {
				params["sync"].(map[string]any)["reapply"] = true
			}
			r, err := syncReply(t, s, params)
			if row.refused != "" {
				require.Error(t, err)
				assert.Equal(t, rpc.CodeInvalidParams, rpcCode(err))
				assert.Contains(t, err.Error(), row.refused)
				// The base the request named is intact: it still serves,
				// and stands for the same history and answer.
				again, sameBase, err := syncCall(t, s, incrementalForm("ses_1", base, map[string]any{"keep": 0, "count": len(row.base)}))
				require.NoError(t, err)
				assert.Equal(t, base, sameBase)
				assert.Equal(t, first, again)
				return
			}
			require.NoError(t, err)
			size := len(mustJSON(t, r.Patch))
			assert.Less(t, size, incremental.DefaultMaxBytes, "the reply")
			var rebuilt []incremental.Message
			for _, it := range row.items {
				n := it.(map[string]any)["count"].(int)
				rebuilt = append(rebuilt, row.base[:n]...)
			}
			want, _, err := syncCall(t, newServer(t, row.config), full("", rebuilt))
			require.NoError(t, err)
			if row.reapply {
				assert.Len(t, r.Reapply, len(row.items), "each copy of the base is a run")
				assert.Empty(t, r.Patch)
				return
			}
			assert.Equal(t, string(mustJSON(t, want)), string(mustJSON(t, r.Patch)))
		})
	}
}

// TestEntrySize: every request passes over the history's entries several
// times, so their size is what a message kept from the base costs in
// cache lines (issue 14). It was 80 bytes when the handler's words and the
// sync bookkeeping were one record; it stays so.
func TestEntrySize(t *testing.T) {
	assert.LessOrEqual(t, unsafe.Sizeof(entry{}), uintptr(80))
}
