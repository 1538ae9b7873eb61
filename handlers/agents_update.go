package handlers

import (
	"context"

	"github.com/hookwire/hookwire/config"
)

// agentsUpdate takes OpenCode's agent list when it arrives after
// initialize (PROTOCOL.md 2): the subagents that fill retry guidance's
// available list and the primary agents that are the default managed set
// (when config named none). Each list, when present (and not null),
// replaces the one initialize's config gave. Blank names are dropped. Sent as a
// notification; a request gets result null.
func (s *Server) agentsUpdate(_ context.Context, p *agentsUpdateParams) error {
	if p.Subagents != nil {
		s.cfg.Subagents = config.AgentNames(p.Subagents)
	}
	if p.PrimaryAgents != nil {
		s.cfg.PrimaryAgents = config.AgentNames(p.PrimaryAgents)
	}
	s.transform.configChanged()
	s.log.Info().Int("primaryAgents", len(s.cfg.PrimaryAgents)).Int("subagents", len(s.cfg.Subagents)).
		Strs("managedAgents", s.cfg.ManagedSet()).Msg("agents updated")
	return nil
}
