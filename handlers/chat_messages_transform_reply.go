package handlers

// chat.messages.transform's reply: the ops each message got, written in
// the full form's order (materialize), as the patch and the reapply runs
// of 4.6 (transformResult), and the parts it adds.

import (
	"fmt"
	"strconv"

	"github.com/hookwire/hookwire/incremental"
)

// transformResult is the result of a request with sync: the patch, the
// reapply runs (only when the client asked for them), and the base the
// sidecar now holds for the session ("" when it keeps none).
type transformResult struct {
	Patch   []Op              `json:"patch"`
	Reapply []incremental.Run `json:"reapply,omitempty"`
	Base    string            `json:"base,omitempty"`
}

// MarshalJSON writes the result as AppendResult does.
func (r transformResult) MarshalJSON() ([]byte, error) { return r.AppendResult(nil) }

// AppendResult writes the result as json.Marshal does, without scanning
// each operation's bytes again (encoding/json compacts every MarshalJSON
// output): in cache-stable mode a long history's reply adds a part to
// every managed user message (4.4), so that scan grew with the history.
func (r transformResult) AppendResult(b []byte) ([]byte, error) {
	b = append(b, `{"patch":[`...)
	for i, o := range r.Patch {
		if i > 0 {
			b = append(b, ',')
		}
		var err error
		if b, err = o.appendJSON(b); err != nil {
			return nil, err
		}
	}
	b = append(b, ']')
	if len(r.Reapply) > 0 {
		b = append(b, `,"reapply":[`...)
		for i, run := range r.Reapply {
			if i > 0 {
				b = append(b, ',')
			}
			b = fmt.Appendf(b, `{"at":%d,"keep":%d,"count":%d}`, run.At, run.Keep, run.Count)
		}
		b = append(b, ']')
	}
	if r.Base != "" {
		b = append(b, `,"base":`...)
		b = appendJSONString(b, r.Base)
	}
	return append(b, '}'), nil
}

// Bytes a reply is counted as (materialize): an op's text plus
// replyOpBytes (its op, path and the added part's other members), and
// replyRunBytes per reapply run; about their JSON.
const (
	replyOpBytes  = 96
	replyRunBytes = 48
)

// materialize writes the ops of the messages no run covers, in the full
// form's order: every message's state.error replacements first, then the
// parts added, message by message. With a budget (> 0), the reply is
// counted as it grows and refused before it would pass the budget: in the
// incremental form a short request may stand for a history whose every
// message gets ops (4.6).
func materialize(per [][]incremental.Op, runs []incremental.Run, budget int64) ([]Op, error) {
	var replaces, adds []Op
	size := int64(len(runs)) * replyRunBytes
	for i := 0; i < len(per); i++ {
		if len(runs) > 0 && runs[0].At == i { // runs are in order and apart
			i += runs[0].Count - 1 // covered by the run
			runs = runs[1:]
			continue
		}
		for _, o := range per[i] {
			if size += replyOpBytes + int64(len(o.Text)); budget > 0 && size > budget {
				return nil, invalidParams("the reply would be over the budget of an incremental reply (%d bytes); ask for reapply runs, or send the full form", budget)
			}
			if o.Part >= 0 {
				replaces = append(replaces, Op{Op: "replace", Path: partPath(i, o.Part) + "/state/error", Value: o.Text})
			} else {
				adds = append(adds, addPart(i, o.Text))
			}
		}
	}
	return append(replaces, adds...), nil
}

// addPart appends a synthetic text part to message i.
func addPart(i int, text string) Op {
	return Op{Op: "add", Path: "/messages/" + strconv.Itoa(i) + "/parts/-",
		Value: syntheticPart{Type: "text", Text: text, Synthetic: true}}
}

// syntheticPart is a text part the sidecar adds; OpenCode sends it to the
// model but does not show it as the user's own words.
type syntheticPart struct {
	Type      string `json:"type"`
	Text      string `json:"text"`
	Synthetic bool   `json:"synthetic"`
}

func partPath(i, j int) string {
	return "/messages/" + strconv.Itoa(i) + "/parts/" + strconv.Itoa(j)
}
