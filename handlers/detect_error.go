package handlers

import (
	"context"

	"github.com/hookwire/hookwire/core"
	"github.com/hookwire/hookwire/rpc"
)

type detectErrorParams struct {
	Output *string `json:"output"`
	Failed bool    `json:"failed"`
}

// detectError answers delegate.detectError (5): the error type and the
// guidance block that 4.1 would append, or null.
func (s *Server) detectError(_ context.Context, req rpc.Request) (any, error) {
	var p detectErrorParams
	if err := decodeParams(req.Params, &p); err != nil {
		return nil, err
	}
	if p.Output == nil {
		return nil, missing("output")
	}
	if d := core.DetectTaskError(*p.Output, p.Failed, s.cfg.retryOptions()); d != nil {
		return d, nil
	}
	return nil, nil
}
