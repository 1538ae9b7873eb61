package incremental

// The wire shape of chat.messages.transform's history, limited to what the
// sidecar reads (PROTOCOL.md 4.5), and of the sync member (4.6). The
// handler decodes it with the JSON v2 API: skipping the fields it does not
// name (tool outputs, file contents: most of a history's bytes) is about
// three times faster than encoding/json.

// Output is the full form's output: the whole history.
type Output struct {
	Messages []Message `json:"messages"`
}

// Message is one message of a history as the sidecar reads it.
type Message struct {
	Info  Info   `json:"info"`
	Parts []Part `json:"parts"`
}

// Info is a message's info. Agent is read only when it is a string.
type Info struct {
	ID        string `json:"id"`
	Role      string `json:"role"`
	Agent     any    `json:"agent"`
	SessionID string `json:"sessionID"`
}

// Part is one part of a message. Its text is read only when TextRead
// says so for its type.
type Part struct {
	Type      string  `json:"type"`
	Text      *string `json:"text" reads:"if-type"`
	Synthetic bool    `json:"synthetic"`
	Tool      string  `json:"tool"`
	CallID    string  `json:"callID"`
	State     *State  `json:"state"`
}

// State is a tool part's state. Error is read only when it is a string.
type State struct {
	Status string `json:"status"`
	Error  any    `json:"error"`
}

// Sync is the sync member of a request: the session to hold the history
// for, and in the incremental form the base it names and the items that
// make the new history from it.
type Sync struct {
	Session  string  `json:"session"`
	Base     *string `json:"base"`
	Messages *[]Item `json:"messages"`
	// Reapply: the client takes reapply runs in the reply (4.6).
	Reapply bool `json:"reapply"`
}

// Item is one item of an incremental request's messages: base messages
// kept as they are, a message in full, or a base message edited.
type Item struct {
	Keep    *int        `json:"keep"`
	Count   *int        `json:"count"`
	Message *Message    `json:"message"`
	Edit    *int        `json:"edit"`
	Info    *Info       `json:"info"`
	Parts   *[]PartItem `json:"parts"`
}

// PartItem is one item of an edited message's parts: base parts kept, or a
// part in full.
type PartItem struct {
	Keep  *int  `json:"keep"`
	Count *int  `json:"count"`
	Part  *Part `json:"part"`
}

// Run says: messages At to At+Count-1 of the new history get the ops that
// base messages Keep to Keep+Count-1 got (PROTOCOL.md 4.6).
type Run struct {
	At, Keep, Count int
}

// TextRead reports whether the text of a part of type partType is read:
// not a reasoning part's, which holds neither the reminder nor a Resumable
// Sessions block (the only texts the rules look for) and is the model's
// own. A client may leave it out (PROTOCOL.md 4.5), it is not in a base's
// hash, and a redacted recording masks it.
func TextRead(partType string) bool { return partType != "reasoning" }

// Reads reports whether a member's string value may be read by a
// transform: every string or any field of the types above is named here;
// agent and error are read only when strings. A decoder may blank every
// other string without changing a field: those members are skipped, or are
// containers whose kind alone matters.
func Reads(name string) bool {
	switch name {
	case "id", "role", "agent", "sessionID", "type", "text", "tool", "callID", "status", "error",
		"session", "base": // Sync
		return true
	}
	return false
}
