package handlers

import (
	"context"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// chatMessageInfo is what chat.message reads of output.message.
type chatMessageInfo struct {
	Agent jsontext.Value `json:"agent"`
	Model jsontext.Value `json:"model"`
}

// chatMessage learns which agent a session runs: input.agent, else
// output.message.agent (4); for an agent listed in config.agentModels it
// chooses the session's model (4.7).
func (s *Server) chatMessage(ctx context.Context, p *chatMessageParams) (PatchResult, error) {
	var msg chatMessageInfo
	hasMessage := p.Output != nil && p.Output.Message.Kind() == '{'
	if hasMessage {
		// Lenient: a message whose members have other types has no agent
		// or model to read.
		_ = jsonv2.Unmarshal(p.Output.Message, &msg, jsontext.AllowDuplicateNames(true))
	}
	agent := rawString(p.Input.Agent)
	if agent == "" {
		agent = rawString(msg.Agent)
	}
	session := p.Input.SessionID
	if session != "" && agent != "" {
		s.store.Tracked().SetAgent(ctx, session, agent)
	}
	c := chatMessageModel{session: session, agent: agent, inputVariant: rawString(p.Input.Variant), hasMessage: hasMessage,
		onMessage: len(msg.Model) > 0}
	if c.current, c.ok = parseMessageModel(msg.Model); !c.ok {
		c.current, c.ok = parseMessageModel(p.Input.Model)
	}
	return patch(s.router.avoidCooling(ctx, c, s.router.modelPatch(ctx, c))...), nil
}
