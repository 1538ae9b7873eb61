package handlers_test

// The projected full form of a text-heavy history (issue 50): what the
// shim sends on its first request of a session, and any client without
// the incremental sync, to a warm sidecar. gen.mjs --text builds the
// history (a fifth of its bytes text the projection keeps); projected
// builds the params the shim's projection would send from it.

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"testing"

	"github.com/hookwire/hookwire/rpc"
)

var textHistorySizes = []struct {
	name  string
	bytes int
}{{"text-1MB", 1 << 20}, {"text-5MB", 5 << 20}}

// textHistory returns the text-heavy chat.messages.transform params of
// one size, whole (as gen.mjs --text writes them).
func textHistory(b *testing.B, name string, size int) []byte {
	return generatedHistory(b, name, "--text", strconv.Itoa(size))
}

// The shim's projection (shim/src/projection.ts): the members it copies,
// each only when it has the type the shim copies.
type (
	projectedInfo struct {
		ID        *string `json:"id,omitempty"`
		Role      *string `json:"role,omitempty"`
		Agent     *string `json:"agent,omitempty"`
		SessionID *string `json:"sessionID,omitempty"`
	}
	projectedState struct {
		Status *string `json:"status,omitempty"`
		Error  *string `json:"error,omitempty"`
	}
	projectedPart struct {
		Type      *string         `json:"type,omitempty"`
		Text      *string         `json:"text,omitempty"`
		Synthetic *bool           `json:"synthetic,omitempty"`
		Tool      *string         `json:"tool,omitempty"`
		CallID    *string         `json:"callID,omitempty"`
		State     *projectedState `json:"state,omitempty"`
	}
	projectedMessage struct {
		Info  projectedInfo   `json:"info"`
		Parts []projectedPart `json:"parts"`
	}
)

// projected returns the full form with sync the shim sends for raw's
// history: its projection, and sync naming the session.
func projected(b *testing.B, raw []byte) []byte {
	b.Helper()
	var in struct {
		Input  json.RawMessage `json:"input"`
		Output struct {
			Messages []struct {
				Info  map[string]any   `json:"info"`
				Parts []map[string]any `json:"parts"`
			} `json:"messages"`
		} `json:"output"`
	}
	if err := json.Unmarshal(raw, &in); err != nil {
		b.Fatal(err)
	}
	str := func(m map[string]any, k string) *string {
		if s, ok := m[k].(string); ok {
			return &s
		}
		return nil
	}
	msgs := make([]projectedMessage, len(in.Output.Messages))
	for i, m := range in.Output.Messages {
		pm := projectedMessage{
			Info:  projectedInfo{ID: str(m.Info, "id"), Role: str(m.Info, "role"), Agent: str(m.Info, "agent"), SessionID: str(m.Info, "sessionID")},
			Parts: make([]projectedPart, len(m.Parts)),
		}
		for j, p := range m.Parts {
			pp := projectedPart{Type: str(p, "type"), Tool: str(p, "tool"), CallID: str(p, "callID")}
			if pp.Type == nil || *pp.Type != "reasoning" {
				pp.Text = str(p, "text")
			}
			if s, ok := p["synthetic"].(bool); ok {
				pp.Synthetic = &s
			}
			if st, ok := p["state"].(map[string]any); ok {
				pp.State = &projectedState{Status: str(st, "status"), Error: str(st, "error")}
			}
			pm.Parts[j] = pp
		}
		msgs[i] = pm
	}
	out, err := json.Marshal(map[string]any{
		"input":  in.Input,
		"output": map[string]any{"messages": msgs},
		"sync":   map[string]any{"session": *msgs[0].Info.SessionID},
	})
	if err != nil {
		b.Fatal(err)
	}
	return out
}

// BenchmarkProjectedHistory measures, per size and round, the projected
// full form of a text-heavy history: the handler on the params rpc.Serve
// has validated (Dispatch), and the whole Go path (rpc.Serve over
// io.Pipe, request line in, reply line out). Profile the Go side of the
// shim's first request with it:
//
//	go test -run '^$' -bench 'ProjectedHistory/text-1MB/round=1/serve' -cpuprofile cpu.prof ./handlers/
func BenchmarkProjectedHistory(b *testing.B) {
	for _, size := range textHistorySizes {
		raw := projected(b, textHistory(b, size.name, size.bytes))
		for r := 1; r <= rounds(); r++ {
			prefix := fmt.Sprintf("%s/round=%d/", size.name, r)
			b.Run(prefix+"transform", func(b *testing.B) { benchValidatedTransform(b, raw) })
			b.Run(prefix+"serve", func(b *testing.B) { benchServe(b, "chat.messages.transform", func(int) []byte { return raw }) })
		}
	}
}

func benchValidatedTransform(b *testing.B, raw []byte) {
	srv := newServer(b)
	ctx := context.Background()
	managedSession(b, srv.Dispatch)
	req := rpc.Request{Method: "chat.messages.transform", Params: raw, Validated: true}
	if _, err := srv.Dispatch(ctx, req); err != nil {
		b.Fatalf("chat.messages.transform: %v", err)
	}
	b.SetBytes(int64(len(raw)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := srv.Dispatch(ctx, req); err != nil {
			b.Fatal(err)
		}
	}
}
