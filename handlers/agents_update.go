package handlers

import "context"

// agentsUpdate takes OpenCode's agent list when it arrives after
// initialize (PROTOCOL.md 2): the subagents that fill retry guidance's
// available list and the primary agents that are the default managed set
// (when config named none). Each list, when present (and not null),
// replaces the one initialize's config gave. Blank names are dropped. Sent as a
// notification; a request gets result null.
func (s *Server) agentsUpdate(_ context.Context, p *agentsUpdateParams) error {
	drop := &warnings{} // blank names from the client: dropped quietly
	if p.Subagents != nil {
		s.cfg.Subagents = agentNames(p.Subagents, "subagents", drop)
	}
	if p.PrimaryAgents != nil {
		s.cfg.PrimaryAgents = agentNames(p.PrimaryAgents, "primaryAgents", drop)
	}
	s.configChanged()
	s.log.Info().Int("primaryAgents", len(s.cfg.PrimaryAgents)).Int("subagents", len(s.cfg.Subagents)).
		Strs("managedAgents", s.cfg.managedSet()).Msg("agents updated")
	return nil
}
