package handlers

import (
	"context"
	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/rs/zerolog"

	"github.com/hookwire/hookwire/contract"
	"github.com/hookwire/hookwire/rpc"
	"github.com/hookwire/hookwire/sessions"
)

// bustNoticesKept bounds the sessions cacheAccounting remembers the last
// bust told of (as many as the store keeps cache figures for).
const bustNoticesKept = 256

// cacheAccounting is prompt-cache accounting's part of the Server
// (PROTOCOL.md 4.9): it reads each usage event into the store's figures
// (sessions' PromptCache.Usage finds the busts) and tells the client of a
// session's bust in a row (cache.bust), once per bust: a message counted
// again with new figures does not tell it twice. The client shows what it
// is told; it counts nothing itself.
type cacheAccounting struct {
	notes chan rpc.Notification
	// told is each session's bust (its message) last told, oldest first
	// in order.
	told  map[string]string
	order []string
}

func newCacheAccounting() *cacheAccounting {
	return &cacheAccounting{notes: make(chan rpc.Notification, 16), told: map[string]string{}}
}

// tell sends summary as cache.bust unless the bust of message was told
// already. A client that is not reading (the queue is full) misses it:
// the figures stay in status.cache.
func (n *cacheAccounting) tell(log zerolog.Logger, message string, summary cacheSummary) {
	session := summary.Session
	if last, ok := n.told[session]; ok && last == message {
		return
	}
	if _, ok := n.told[session]; !ok {
		n.order = append(n.order, session)
		if len(n.order) > bustNoticesKept {
			delete(n.told, n.order[0])
			n.order = n.order[1:]
		}
	}
	n.told[session] = message
	select {
	case n.notes <- rpc.Notification{Method: contract.MethodCacheBust, Params: summary}:
	default:
		log.Debug().Str("session", session).Msg("cache.bust dropped: the client is not reading")
	}
}

// tokens is an assistant message's info.tokens.
type tokens struct {
	Input  float64 `json:"input"`
	Output float64 `json:"output"`
	Cache  struct {
		Read  float64 `json:"read"`
		Write float64 `json:"write"`
	} `json:"cache"`
}

// usage counts an assistant message's usage for its session's cache
// figures (4.9) in store, and tells the client of a bust in a row. A
// message that is not an assistant's, has no tokens yet (OpenCode reports
// a message when it starts) or has tokens of the wrong shape is skipped.
func (c *cacheAccounting) usage(ctx context.Context, store cacheStore, log zerolog.Logger, session, message, role, provider, model string, raw jsontext.Value) {
	if role != "assistant" || raw.Kind() != '{' {
		return
	}
	var t tokens
	if err := jsonv2.Unmarshal(raw, &t); err != nil {
		log.Debug().Err(err).Str("session", session).Msg("message.updated: tokens not understood")
		return
	}
	n := []float64{t.Input, t.Output, t.Cache.Read, t.Cache.Write}
	sum := 0.0
	for _, v := range n {
		if !(v >= 0 && v <= 1<<53) {
			return
		}
		sum += v
	}
	if sum == 0 {
		return
	}
	if provider != "" || model != "" {
		model = provider + "/" + model
	}
	bust, inARow := store.Usage(ctx, sessions.Usage{Session: session, Message: message, Model: model,
		Input: int64(t.Input), Output: int64(t.Output), CacheRead: int64(t.Cache.Read), CacheWrite: int64(t.Cache.Write)})
	if bust != nil {
		ev := log.Info()
		if inARow {
			ev = log.Warn()
		}
		ev.Str("session", session).Str("message", bust.Message).Int64("tokensLost", bust.TokensLost).
			Str("cause", bust.Cause).Bool("byHookwire", bust.ByHookwire).Bool("inARow", inARow).Msg("prompt cache bust")
	}
	if bust != nil && inARow {
		if cs, ok := store.Of(session); ok {
			c.tell(log, bust.Message, summaryOf(cs))
		}
	}
}
