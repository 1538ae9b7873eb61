package handlers

import (
	"context"
	"encoding/json"
)

type chatMessageParams struct {
	Input *struct {
		SessionID string          `json:"sessionID"`
		Agent     json.RawMessage `json:"agent"`
	} `json:"input"`
	Output *struct {
		Message struct {
			Agent json.RawMessage `json:"agent"`
		} `json:"message"`
	} `json:"output"`
}

// chatMessage learns which agent a session runs: input.agent, else
// output.message.agent (4).
func (s *Server) chatMessage(_ context.Context, raw json.RawMessage) (any, error) {
	var p chatMessageParams
	if err := decodeParams(raw, &p, "input"); err != nil {
		return nil, err
	}
	agent := rawString(p.Input.Agent)
	if agent == "" && p.Output != nil {
		agent = rawString(p.Output.Message.Agent)
	}
	if p.Input.SessionID != "" && agent != "" {
		s.store.SetAgent(p.Input.SessionID, agent)
	}
	return noChange(), nil
}

// rawString returns the JSON string in raw, or "" when raw is anything else.
func rawString(raw json.RawMessage) string {
	var v string
	if json.Unmarshal(raw, &v) != nil {
		return ""
	}
	return v
}
