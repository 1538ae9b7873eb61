package handlers

import (
	"context"

	"github.com/hookwire/hookwire/core"
)

// delegateDetectError answers delegate.detectError (5): the error type
// and the guidance block that 4.1 would append, or null.
func (s *Server) delegateDetectError(_ context.Context, p *delegateDetectErrorParams) (*core.DetectedError, error) {
	return core.DetectTaskError(*p.Output, p.Failed, s.cfg.RetryOptions()), nil
}
