package core

import (
	"fmt"
	"hash/fnv"
)

// Prompt-cache accounting (PROTOCOL.md 4.9): what one request's prompt
// looked like to hookwire, cut down to hashes, and why a request whose
// cached prefix shrank lost it.

// PromptPrint is a request's prompt as hookwire saw it through
// chat.system.transform and chat.messages.transform: hashes, never text.
type PromptPrint struct {
	// SystemSeen: a chat.system.transform of the request was seen, so
	// System and Block mean something.
	SystemSeen bool
	// System hashes the system prompt's parts as they came to hookwire
	// (OpenCode's and other plugins' text); Block hashes what hookwire
	// added to it (0: nothing).
	System, Block uint64
	// Messages are the history's messages in order, as far as kept
	// (MaxPrintMessages).
	Messages []MessagePrint
	// Truncated: the history had more messages than Messages holds.
	Truncated bool
}

// MessagePrint is one message of a request's history: its id's hash, the
// hash of its content as it came to hookwire (the members a transform
// reads: PROTOCOL.md 4.5), and the hash of the parts hookwire added or
// replaced in it (0: none).
type MessagePrint struct {
	ID, Content, Ops uint64
}

// MaxPrintMessages is how many messages of a history a PromptPrint keeps:
// a change beyond them is not attributed to a message.
const MaxPrintMessages = 256

// Causes of a bust (the "cause" of sessions --json's busts).
const (
	CauseSystem  = "system"
	CauseMessage = "message"
	CauseModel   = "model"
	CauseUnknown = "unknown"
)

// Bust is why one request's cached prefix shrank, as far as hookwire can
// tell: Cause is one of the Cause constants, ByHookwire says whether the
// change was hookwire's own, and Detail says where, in words.
type Bust struct {
	Cause      string `json:"cause"`
	ByHookwire bool   `json:"byHookwire"`
	Detail     string `json:"detail"`
}

// IsBust reports whether a request whose provider read cacheRead tokens
// from its cache busted the cache: it read fewer than the session's
// previous request did. A session's first request (hasPrev false) never
// does.
func IsBust(hasPrev bool, prevCacheRead, cacheRead int64) bool {
	return hasPrev && cacheRead < prevCacheRead
}

// AttributeBust says what changed between the previous request of a
// session and this one, the first difference in the order a provider
// reads a prompt: the model (a provider's cache is per model), then the
// system prompt, then the first message of the previous history that is
// not the same at the same place in this one. A nil print is a request
// whose prompt hookwire did not see (a sidecar started mid-request,
// another process served it).
func AttributeBust(prevModel, model string, prev, cur *PromptPrint) Bust {
	if prevModel != "" && model != "" && prevModel != model {
		return Bust{Cause: CauseModel, Detail: fmt.Sprintf("model changed from %s to %s", prevModel, model)}
	}
	if prev == nil || cur == nil {
		return Bust{Cause: CauseUnknown, Detail: "hookwire did not see both prompts"}
	}
	if prev.SystemSeen && cur.SystemSeen {
		switch {
		case prev.System != cur.System:
			return Bust{Cause: CauseSystem, Detail: "system prompt changed by another plugin or OpenCode"}
		case prev.Block != cur.Block:
			return Bust{Cause: CauseSystem, ByHookwire: true, Detail: "system prompt changed by hookwire (its Resumable Sessions block)"}
		}
	}
	if b, ok := firstChangedMessage(prev, cur); ok {
		return b
	}
	if prev.SystemSeen != cur.SystemSeen {
		return Bust{Cause: CauseUnknown, Detail: "hookwire did not see both system prompts"}
	}
	return Bust{Cause: CauseUnknown, Detail: "no change in what hookwire sees of the prompt (tool output, provider eviction or expiry)"}
}

// firstChangedMessage finds the first message of prev's history that cur
// does not have, the same, at the same place.
func firstChangedMessage(prev, cur *PromptPrint) (Bust, bool) {
	for k, pm := range prev.Messages {
		if k >= len(cur.Messages) {
			if cur.Truncated {
				return Bust{}, false
			}
			return Bust{Cause: CauseMessage, Detail: fmt.Sprintf("message %d removed (history cut to %d messages)", k, len(cur.Messages))}, true
		}
		cm := cur.Messages[k]
		switch {
		case pm == cm:
			continue
		case pm.ID != cm.ID && !hasID(cur.Messages, pm.ID):
			return Bust{Cause: CauseMessage, Detail: fmt.Sprintf("message %d removed", k)}, true
		case pm.ID != cm.ID:
			return Bust{Cause: CauseMessage, Detail: fmt.Sprintf("message %d moved (a message inserted before it)", k)}, true
		case pm.Content == cm.Content:
			return Bust{Cause: CauseMessage, ByHookwire: true, Detail: fmt.Sprintf("message %d changed by hookwire (its added parts)", k)}, true
		default:
			return Bust{Cause: CauseMessage, Detail: fmt.Sprintf("message %d changed by another plugin or OpenCode", k)}, true
		}
	}
	return Bust{}, false
}

func hasID(msgs []MessagePrint, id uint64) bool {
	for _, m := range msgs {
		if m.ID == id {
			return true
		}
	}
	return false
}

// BustToast is the toast text for a session that busted twice in a row,
// naming the newest cause.
func BustToast(session string, b Bust) string {
	return fmt.Sprintf("hookwire: prompt cache missed twice in a row in session %s: %s", session, b.Detail)
}

// HashID hashes a message id for MessagePrint.ID (FNV-1a, stable across
// processes: a print is kept in the state file).
func HashID(id string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(id))
	return h.Sum64()
}

// HashStrings hashes a list of strings (a system prompt's parts), each
// with its length so that none runs into the next.
func HashStrings(parts []string) uint64 {
	h := fnv.New64a()
	var n [8]byte
	for _, p := range parts {
		l := uint64(len(p))
		for i := range n {
			n[i] = byte(l >> (8 * i))
		}
		h.Write(n[:])
		h.Write([]byte(p))
	}
	return h.Sum64()
}
