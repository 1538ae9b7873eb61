package handlers

import (
	"context"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/hookwire/hookwire/rpc"
)

type chatMessageParams struct {
	Input *struct {
		SessionID string         `json:"sessionID"`
		Agent     jsontext.Value `json:"agent"`
	} `json:"input"`
	Output *struct {
		Message struct {
			Agent jsontext.Value `json:"agent"`
		} `json:"message"`
	} `json:"output"`
}

// chatMessage learns which agent a session runs: input.agent, else
// output.message.agent (4).
func (s *Server) chatMessage(_ context.Context, req rpc.Request) (any, error) {
	var p chatMessageParams
	if err := decodeParams(req.Params, &p); err != nil {
		return nil, err
	}
	if p.Input == nil {
		return nil, missing("input")
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
