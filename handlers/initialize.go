package handlers

import (
	"context"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/hookwire/hookwire/contract"
	"github.com/hookwire/hookwire/rpc"
	"github.com/hookwire/hookwire/sessions"
)

type initializeParams struct {
	ProtocolVersion *int           `json:"protocolVersion"`
	ClientInfo      jsontext.Value `json:"clientInfo"`
	Config          jsontext.Value `json:"config"`
}

type initializeResult struct {
	ProtocolVersion int          `json:"protocolVersion"`
	ServerInfo      serverInfo   `json:"serverInfo"`
	Capabilities    capabilities `json:"capabilities"`
	// Warnings are the config's problems that did not stop it
	// (PROTOCOL.md 2, 7): unknown members, bad values that kept their
	// default. Absent when there are none.
	Warnings []string `json:"warnings,omitempty"`
}

type serverInfo struct {
	Name    string `json:"name"`
	Version string `json:"version"`
}

type capabilities struct {
	Hooks   []string `json:"hooks"`
	Events  []string `json:"events"`
	Methods []string `json:"methods"`
	// TaskTools are the tools whose tool.execute.before/after calls the
	// sidecar acts on (config.taskTools, lower-cased). A client may leave
	// out other tools' calls: a 1 MB `read` output then never crosses the
	// pipe. An extension of PROTOCOL.md 2; older clients ignore it.
	TaskTools []string `json:"taskTools"`
}

func (s *Server) initialize(_ context.Context, req rpc.Request) (any, error) {
	if s.initialized {
		return nil, rpc.Errorf(rpc.CodeInvalidRequest, "already initialized")
	}
	var p initializeParams
	// A member given twice inside config is a config warning, not a
	// reason to refuse the whole initialize.
	if err := decodeParams(req.Params, &p, jsontext.AllowDuplicateNames(true)); err != nil {
		return nil, err
	}
	if p.ProtocolVersion == nil {
		return nil, missing("protocolVersion")
	}
	if *p.ProtocolVersion != ProtocolVersion {
		return nil, rpc.Errorf(rpc.CodeInvalidParams,
			"unsupported protocolVersion %d: this sidecar speaks [%d]", *p.ProtocolVersion, ProtocolVersion)
	}
	cfg, warnings, err := ParseConfig(p.Config)
	if err != nil {
		return nil, err
	}
	for _, w := range warnings {
		// A warning names members and quotes at most short config values,
		// never message contents.
		s.log.Warn().Str("warning", w).Msg("config warning")
	}
	s.cfg = cfg
	s.guided, s.bases = nil, nil // both were worked out under the config
	s.store = sessions.New(cfg.storeConfig())
	if s.opts.OpenState != nil {
		s.persist = s.opts.OpenState(s.store)
	}
	s.maxBytes.Store(cfg.MaxMessageBytes)
	s.initialized = true
	s.log.Info().Strs("managedAgents", cfg.managedSet()).Strs("reminderAgents", cfg.reminderAgents()).
		Bool("cacheStable", cfg.CacheStable).Int("subagents", len(cfg.Subagents)).
		Int("warnings", len(warnings)).Msg("initialized")
	return initializeResult{
		ProtocolVersion: ProtocolVersion,
		ServerInfo:      serverInfo{Name: "hookwire", Version: s.opts.Version},
		Capabilities: capabilities{
			Hooks:     s.hooks,
			Events:    contract.Events,
			Methods:   s.methods,
			TaskTools: cfg.TaskTools,
		},
		Warnings: warnings,
	}, nil
}

func (s *Server) shutdown(context.Context, rpc.Request) (any, error) {
	if s.persist != nil {
		if err := s.persist.Flush(); err != nil {
			s.log.Warn().Err(err).Msg("state flush at shutdown failed; state kept in memory")
		}
	}
	return nil, nil
}

func (s *Server) exit(context.Context, rpc.Request) (any, error) {
	if s.opts.OnExit != nil {
		s.opts.OnExit()
	}
	return nil, nil
}
