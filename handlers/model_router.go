package handlers

import (
	"time"

	"github.com/rs/zerolog"

	"github.com/hookwire/hookwire/config"
)

// modelRouter is the server's model part: the model a session runs on
// (PROTOCOL.md 4.7), provider health and the runtime fallback (4.8). The
// handlers of chat.message, model.failed, event, the subagent tool's calls
// and status call into it (models.go, health.go, subagent_model.go); it
// holds no state of its own beyond modelChoice's.
type modelRouter struct {
	store  Store // set by initialize
	cfg    *config.Config
	models *modelChoice
	log    zerolog.Logger
	clock  func() time.Time
}
