package handlers

import (
	"context"

	"github.com/hookwire/hookwire/core"
	"github.com/hookwire/hookwire/rpc"
)

type resolveModelParams struct {
	Input *core.ModelInput `json:"input"`
	Deps  *core.ModelDeps  `json:"deps"`
}

// resolveModel answers delegate.resolveModel (5, MODEL_RESOLUTION.md).
func (s *Server) resolveModel(_ context.Context, req rpc.Request) (any, error) {
	var p resolveModelParams
	if err := decodeParams(req.Params, &p); err != nil {
		return nil, err
	}
	if p.Input == nil {
		return nil, missing("input")
	}
	deps := core.ModelDeps{}
	if p.Deps != nil {
		deps = *p.Deps
	}
	if r := core.ResolveModel(*p.Input, deps); r != nil {
		return r, nil
	}
	return nil, nil
}
