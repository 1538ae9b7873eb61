package handlers

import (
	"github.com/rs/zerolog"

	"github.com/hookwire/hookwire/contract"
	"github.com/hookwire/hookwire/rpc"
	"github.com/hookwire/hookwire/sessions"
)

// bustNoticesKept bounds the sessions bustNotices remembers (as many as
// the store keeps cache figures for).
const bustNoticesKept = 256

// bustNotices tells the client of a session's bust in a row (cache.bust,
// PROTOCOL.md 4.9), once per bust: a message counted again with new
// figures (CacheUsage recounts it) does not tell it twice. The client
// shows what it is told; it counts nothing itself.
type bustNotices struct {
	notes chan rpc.Notification
	// told is each session's bust (its message) last told, oldest first
	// in order.
	told  map[string]string
	order []string
}

func newBustNotices() *bustNotices {
	return &bustNotices{notes: make(chan rpc.Notification, 16), told: map[string]string{}}
}

// tell sends summary as cache.bust unless the bust of message was told
// already. A client that is not reading (the queue is full) misses it:
// the figures stay in status.cache.
func (n *bustNotices) tell(log zerolog.Logger, message string, summary cacheSummary) {
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

// cacheSummaryOf is session's entry of status.cache.perSession, and
// whether the store holds cache figures for it.
func cacheSummaryOf(list []sessions.CacheSession, session string) (cacheSummary, bool) {
	for _, c := range list {
		if c.Session == session {
			return summaryOf(c), true
		}
	}
	return cacheSummary{}, false
}
