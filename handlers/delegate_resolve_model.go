package handlers

import (
	"context"

	"github.com/hookwire/hookwire/core"
)

// delegateResolveModel answers delegate.resolveModel (5, MODEL_RESOLUTION.md).
func (s *Server) delegateResolveModel(_ context.Context, p *delegateResolveModelParams) (*core.ModelResolution, error) {
	deps := core.ModelDeps{}
	if p.Deps != nil {
		deps = *p.Deps
	}
	return core.ResolveModel(*p.Input, deps), nil
}
