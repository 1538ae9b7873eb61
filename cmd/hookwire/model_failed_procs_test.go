package main

import (
	"bufio"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hookwire/hookwire/internal/racetest"
	"github.com/hookwire/hookwire/sessiondb"
	"github.com/hookwire/hookwire/sessions"
)

// model.failed from two processes on one database (issue 50): a failure's
// health, switch and model decision are read and written in one write
// transaction, so two processes reporting at once give the result of one
// after the other, and a process killed meanwhile leaves all of a
// failure's records or none.

// failedConfig is the config of these tests' sidecars: explore falls back
// to fake/fb; cooldown is the policy's base cooldown in seconds.
func failedConfig(cooldown float64) map[string]any {
	rf := map[string]any{"enabled": true}
	if cooldown > 0 {
		rf["cooldownSeconds"], rf["maxCooldownSeconds"] = cooldown, cooldown
	}
	return map[string]any{"subagents": []string{"explore"}, "runtimeFallback": rf,
		"agentModels": map[string]any{"explore": map[string]any{"model": "fake/fb"}}}
}

// startFailing starts a sidecar on state with failedConfig(cooldown), told
// which models are there.
func startFailing(t *testing.T, state string, cooldown float64) *proc {
	t.Helper()
	p := start(t, false, "--state", state)
	r := p.call("initialize", map[string]any{"protocolVersion": 1, "config": failedConfig(cooldown)})
	require.Nil(t, r.Error)
	p.send("providers.update", nil, map[string]any{"connectedProviders": []string{"fake"},
		"availableModels": []string{"fake/fb"}, "defaultModel": "fake/fb"})
	return p
}

type failedAnswer struct {
	Counted bool   `json:"counted"`
	Action  string `json:"action"`
}

// failure is model.failed's params: session's call on model got a 429.
func failure(session, model string, extra map[string]any) map[string]any {
	p := map[string]any{"sessionID": session, "model": model,
		"error": map[string]any{"statusCode": 429, "message": "Rate limit reached for " + model + " (" + session + ")"}}
	for k, v := range extra {
		p[k] = v
	}
	return p
}

// atOnce sends each process its request, then reads the answers: the two
// requests are served at the same moment.
func atOnce(t *testing.T, procs []*proc, params []map[string]any) []failedAnswer {
	t.Helper()
	for i, p := range procs {
		p.send("model.failed", i+1, params[i])
	}
	out := make([]failedAnswer, len(procs))
	for i, p := range procs {
		r := p.recv()
		require.Nil(t, r.Error)
		require.NoError(t, json.Unmarshal(r.Result, &out[i]))
	}
	return out
}

// healthOf is model's health as process p's status (status.models.health)
// shows it.
func healthOf(t *testing.T, p *proc, model string) (sessions.Health, bool) {
	t.Helper()
	r := p.call("status", nil)
	require.Nil(t, r.Error)
	var st struct {
		Models struct {
			Health []sessions.Health `json:"health"`
		} `json:"models"`
	}
	require.NoError(t, json.Unmarshal(r.Result, &st))
	for _, h := range st.Models.Health {
		if h.Model == model {
			return h, true
		}
	}
	return sessions.Health{}, false
}

// readStore is the store a new process on state would serve from: what
// the database holds.
func readStore(t *testing.T, state string) *sessions.Store {
	t.Helper()
	s := sessions.New(sessions.Config{})
	d, err := sessiondb.OpenDatabase(context.Background(), state, s, zerolog.Nop())
	require.NoError(t, err)
	t.Cleanup(func() { d.Close() })
	return s
}

// A 429 with a retry-after of 3000 s and a plain 429 (cooldown 300 s) for
// the same model at the same moment in two processes: the model cools for
// the longer, whichever is recorded first (28 of 200 rounds lost the
// retry-after when health was read outside the write lock).
func TestModelFailedRetryAfterNotLostToAConcurrentFailure(t *testing.T) {
	state := filepath.Join(t.TempDir(), "state.db")
	a, b := startFailing(t, state, 0), startFailing(t, state, 0)
	rounds := 100
	for round := range rounds {
		model := fmt.Sprintf("fake/m%d", round)
		before := time.Now()
		atOnce(t, []*proc{a, b}, []map[string]any{
			failure("ses_a", model, map[string]any{"retryAfter": "3000"}),
			failure("ses_b", model, nil),
		})
		h, ok := healthOf(t, a, model)
		require.True(t, ok, "round %d", round)
		assert.False(t, h.Until.Before(before.Add(3000*time.Second)), "round %d: the retry-after was lost: until %v", round, h.Until)
	}
}

// One child's failure reported by two processes at once (both hooks of
// OpenCode 2's retry, or a retry and an event) is one switch: one answer
// says switch and the child keeps one switch record (46 of 200 rounds
// gave two).
func TestModelFailedOneChildOneSwitchAcrossProcesses(t *testing.T) {
	state := filepath.Join(t.TempDir(), "state.db")
	a, b := startFailing(t, state, 0), startFailing(t, state, 0)
	rounds := 20
	type child struct{ session, model string }
	var children []child
	for round := range rounds {
		c := child{fmt.Sprintf("ses_c%d", round), fmt.Sprintf("fake/m%d", round)}
		children = append(children, c)
		extra := map[string]any{"inPlace": true, "agent": "explore", "parentID": "ses_p"}
		got := atOnce(t, []*proc{a, b}, []map[string]any{failure(c.session, c.model, extra), failure(c.session, c.model, extra)})
		switches := 0
		for _, g := range got {
			if g.Action == "switch" {
				switches++
			}
		}
		assert.Equal(t, 1, switches, "round %d: %+v", round, got)
	}
	s := readStore(t, state)
	for _, c := range children {
		assert.Len(t, s.Tracked().Switches(c.session), 1, c.session)
	}
}

// Two processes each report 50 failures of one model at once, each
// failure after the model's (tiny) cooldown ended: every counted failure
// is a strike, none is lost to a read of the health made before the other
// process's write.
func TestModelFailedStrikesNotLostAcrossProcesses(t *testing.T) {
	state := filepath.Join(t.TempDir(), "state.db")
	const n = 50
	procs := []*proc{startFailing(t, state, 1e-6), startFailing(t, state, 1e-6)}
	var wg sync.WaitGroup
	counted := make([]int, len(procs))
	for i, p := range procs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := range n {
				p.send("model.failed", k+1, failure(fmt.Sprintf("ses_%d", i), "fake/strike", nil))
			}
			for range n {
				r := p.recv()
				var a failedAnswer
				if r.Error == nil && json.Unmarshal(r.Result, &a) == nil && a.Counted {
					counted[i]++
				}
			}
		}()
	}
	wg.Wait()
	require.Equal(t, []int{n, n}, counted)
	h, ok := healthOf(t, procs[0], "fake/strike")
	require.True(t, ok)
	assert.Equal(t, 2*n, h.Strikes, "every counted failure is a strike")
}

// kill -9 during model.failed (a child's failure that switches it: the
// model's health, the child's agent and parent and its switch, pending
// until the child is seen on the fallback): each failure's records are
// all in the database or none are.
func TestModelFailedKill9AllOrNothing(t *testing.T) {
	modelFailedKill9(t, 20)
}

// TestVolumeModelFailedKill9AllOrNothing is the same, 100 kills (make
// test-go's plain pass).
func TestVolumeModelFailedKill9AllOrNothing(t *testing.T) {
	racetest.Volume(t)
	modelFailedKill9(t, 100)
}

func modelFailedKill9(t *testing.T, rounds int) {
	state := filepath.Join(t.TempDir(), "state.db")
	seed := faultSeed(t)
	t.Logf("seed %d (HOOKWIRE_FAULT_SEED=%d replays the kill delays)", seed, seed)
	rng := rand.New(rand.NewPCG(2, seed))
	sent := make([][]string, rounds) // each round's children, whose failures are of the round's model
	for round := range rounds {
		p := startFailing(t, state, 0)
		stop := make(chan struct{})
		var mu sync.Mutex
		go func() {
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				child := fmt.Sprintf("ses_r%dc%d", round, i)
				b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": i + 1, "method": "model.failed",
					"params": failure(child, fmt.Sprintf("fake/m%d", round), map[string]any{"inPlace": true, "agent": "explore", "parentID": "ses_p"})})
				mu.Lock()
				sent[round] = append(sent[round], child)
				mu.Unlock()
				if _, err := p.stdin.Write(append(b, '\n')); err != nil {
					return
				}
			}
		}()
		go io.Copy(io.Discard, bufio.NewReader(p.out))
		time.Sleep(time.Duration(30+rng.IntN(300)) * time.Millisecond)
		require.NoError(t, p.cmd.Process.Kill())
		close(stop)
		p.waitExit()
	}
	s := readStore(t, state)
	recorded, partial := 0, 0
	for round, children := range sent {
		model := fmt.Sprintf("fake/m%d", round)
		whole := map[string]bool{}
		for _, child := range children {
			sw := s.Tracked().Switches(child)
			parts := []bool{len(sw) == 1 && sw[0].To == "fake/fb", s.Tracked().Agent(child) == "explore",
				s.Tracked().Parent(child) == "ses_p"}
			all, none := true, true
			for _, ok := range parts {
				all, none = all && ok, none && !ok
			}
			if all {
				recorded++
				whole["Rate limit reached for "+model+" ("+child+")"] = true
			}
			if !all && !none {
				partial++
				t.Errorf("%s: switches %d, agent %q, parent %q: part of a failure's records",
					child, len(sw), s.Tracked().Agent(child), s.Tracked().Parent(child))
			}
		}
		// The model's health is that of the round's last failure
		// recorded: that failure's switch and decision are there too.
		h, ok := s.ProviderHealth().Of(model)
		if ok != (len(whole) > 0) || ok && !whole[h.Message] {
			partial++
			t.Errorf("round %d: the health of %s (%v, %q) without the switch of its failure", round, model, ok, h.Message)
		}
	}
	t.Logf("%d kills, %d failures recorded whole, %d records in part", rounds, recorded, partial)
	assert.Positive(t, recorded)
}

// A failure whose transaction cannot be had (another connection holds the
// write lock past the busy timeout) keeps nothing and says so: counted,
// its class, "none" and no until in the answer, the error in status, and
// no switch, health or agent of it in the database or the process.
func TestModelFailedNotRecordedKeepsNothing(t *testing.T) {
	state := filepath.Join(t.TempDir(), "state.db")
	p := startFailing(t, state, 0)
	p.call("status", nil) // the database is open and made
	db, err := sql.Open("sqlite", state)
	require.NoError(t, err)
	defer db.Close()
	db.SetMaxOpenConns(1)
	tx, err := db.Begin()
	require.NoError(t, err)
	_, err = tx.Exec("INSERT INTO meta(key,value) VALUES('held',1) ON CONFLICT(key) DO UPDATE SET value=value")
	require.NoError(t, err)

	r := p.call("model.failed", failure("ses_c", "fake/m", map[string]any{"inPlace": true, "agent": "explore", "parentID": "ses_p"}))
	require.Nil(t, r.Error)
	var got struct {
		Counted bool       `json:"counted"`
		Class   string     `json:"class"`
		Action  string     `json:"action"`
		Until   *time.Time `json:"until"`
	}
	require.NoError(t, json.Unmarshal(r.Result, &got))
	require.NoError(t, tx.Rollback())
	assert.True(t, got.Counted)
	assert.Equal(t, "rate-limit", got.Class)
	assert.Equal(t, "none", got.Action, "a switch nothing records is not asked for")
	assert.Nil(t, got.Until, "no cooldown was kept")
	assert.NotEmpty(t, lastWriteError(t, p), "status says why")
	_, ok := healthOf(t, p, "fake/m")
	assert.False(t, ok, "the process keeps no health of it either")

	s := readStore(t, state)
	assert.Empty(t, s.Tracked().Switches("ses_c"))
	assert.Empty(t, s.Tracked().Agent("ses_c"))
	_, ok = s.ProviderHealth().Of("fake/m")
	assert.False(t, ok)
}
