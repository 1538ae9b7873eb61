package handlers

import (
	"context"
	"strings"

	"github.com/hookwire/hookwire/sessions"
)

// providersUpdate takes what OpenCode can reach now: it replaces the last
// update whole. Blank strings, and strings over the store's model cap
// (a decision could not be kept), are dropped. Sent as a notification; a
// request gets result null.
func (s *Server) providersUpdate(_ context.Context, p *providersUpdateParams) error {
	var connected []string
	if p.ConnectedProviders != nil {
		connected = usableModelNames(p.ConnectedProviders)
	}
	available := usableModelNames(p.AvailableModels)
	defaultModel := ""
	if d := strings.TrimSpace(p.DefaultModel); len(d) <= sessions.MaxModelBytes {
		defaultModel = d
	}
	s.models.setProviders(connected, available, defaultModel)
	s.log.Info().Int("connectedProviders", len(connected)).Int("availableModels", len(available)).
		Str("defaultModel", defaultModel).Msg("providers updated")
	return nil
}

// usableModelNames keeps the non-blank names within the model cap, trimmed.
func usableModelNames(names []string) []string {
	out := make([]string, 0, len(names))
	for _, n := range names {
		if n = strings.TrimSpace(n); n != "" && len(n) <= sessions.MaxModelBytes {
			out = append(out, n)
		}
	}
	return out
}
