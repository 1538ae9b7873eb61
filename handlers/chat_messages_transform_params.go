package handlers

// chat.messages.transform's params: the full form or the incremental form
// (PROTOCOL.md 4.5, 4.6), decoded from the request.

import (
	"encoding/json"

	"github.com/hookwire/hookwire/incremental"
	"github.com/hookwire/hookwire/rpc"
)

// decodeChatMessagesTransformParams decodes chat.messages.transform's
// params (the contract's custom decoding): the full form (output),
// optionally with sync naming the session to keep it for, or the
// incremental form (sync with a base, no output); input is only required
// to be there.
func decodeChatMessagesTransformParams(req rpc.Request) (*chatMessagesTransformParams, error) {
	return decodeTransform(req.Validated, req.Params)
}

// decodeTransform decodes the params. When the transport has checked they
// are valid JSON, the full form is read by decodeFullForm; what that
// declines (the incremental form, mostly) has the long strings the
// handler does not read blanked first (pruneStrings): most of a history's
// bytes, which the decoder would otherwise scan only to skip them. The
// result is the same; so are the errors, as any error is taken from
// decoding raw itself.
func decodeTransform(validated bool, raw json.RawMessage) (*chatMessagesTransformParams, error) {
	if validated {
		if p, ok := decodeFullForm(raw); ok {
			return p, nil
		}
		if p, err := decodeTransformParams(pruneStrings(raw, incremental.Reads)); err == nil {
			return p, nil
		}
	}
	return decodeTransformParams(raw)
}

// decodeTransformParams decodes either form (4.6); input is required, and
// output unless sync names a base (Server.history checks that).
func decodeTransformParams(raw json.RawMessage) (*chatMessagesTransformParams, error) {
	var p chatMessagesTransformParams
	if err := decodeParams(raw, &p); err != nil {
		return nil, err
	}
	if p.Input == nil {
		return nil, missing("input")
	}
	if p.Output == nil && (p.Sync == nil || p.Sync.Base == nil) {
		return nil, missing("output")
	}
	return &p, nil
}
