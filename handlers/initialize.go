package handlers

import (
	"context"

	"github.com/hookwire/hookwire/config"
	"github.com/hookwire/hookwire/contract"
	"github.com/hookwire/hookwire/rpc"
	"github.com/hookwire/hookwire/sessions"
)

// initialize takes the client's config and creates the store (PROTOCOL.md
// 2). Its result's capabilities.taskTools are the tools whose
// tool.execute.before/after calls the sidecar acts on (config.taskTools,
// lower-cased): a client may leave out other tools' calls, so a 1 MB
// `read` output never crosses the pipe; warnings (absent when none) are
// the config's problems that did not stop it (7). Its params decode
// allowing a member given twice: inside config that is a config warning,
// not a reason to refuse the whole initialize.
func (s *Server) initialize(_ context.Context, p *initializeParams) (initializeResult, error) {
	if s.gate.ready() {
		return initializeResult{}, rpc.Errorf(rpc.CodeInvalidRequest, "already initialized")
	}
	if *p.ProtocolVersion != ProtocolVersion {
		return initializeResult{}, rpc.Errorf(rpc.CodeInvalidParams,
			"unsupported protocolVersion %d: this sidecar speaks [%d]", *p.ProtocolVersion, ProtocolVersion)
	}
	cfg, warnings, err := config.Parse(p.Config)
	if err != nil {
		return initializeResult{}, err
	}
	for _, w := range warnings {
		// A warning names members and quotes at most short config values,
		// never message contents.
		s.log.Warn().Str("warning", w).Msg("config warning")
	}
	s.cfg = cfg
	s.transform.reset() // worked out under the config
	store := sessions.New(cfg.StoreConfig())
	s.store = store
	s.router.store = store
	s.transform.store = store
	if s.opts.OpenState != nil {
		s.persist = s.opts.OpenState(store)
	}
	s.subs.svc = nil
	if r, ok := s.persist.(SubagentRecords); ok {
		s.subs.svc = r.SubagentService()
	} else if s.opts.Subagents != nil {
		s.subs.svc = s.opts.Subagents()
	}
	s.maxBytes.Store(cfg.MaxMessageBytes)
	s.gate.opened()
	s.log.Info().Strs("managedAgents", cfg.ManagedSet()).Strs("reminderAgents", cfg.ReminderAgents()).
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

// shutdown has nothing to do: every change was written in its request's
// transaction, and Close (exit) writes what a failing database held back.
func (s *Server) shutdown(context.Context) error { return nil }

func (s *Server) exit(context.Context) error {
	if s.opts.OnExit != nil {
		s.opts.OnExit()
	}
	return nil
}
