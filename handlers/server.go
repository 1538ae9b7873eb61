package handlers

import (
	"context"
	"reflect"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rs/zerolog"

	"github.com/hookwire/hookwire/config"
	"github.com/hookwire/hookwire/contract"
	"github.com/hookwire/hookwire/rpc"
	"github.com/hookwire/hookwire/sessions"
	"github.com/hookwire/hookwire/subagents"
)

// ProtocolVersion is the protocol version this sidecar speaks.
const ProtocolVersion = contract.ProtocolVersion

// Persistence is what the server needs of the state database: a close at
// exit, and for status a line for humans and the same as fields for
// clients. (Every change is written in its request's own transaction, so
// nothing is flushed after a request or at shutdown.)
type Persistence interface {
	Close() error
	Status() string
	State() sessions.StateStatus
}

// Options wires a Server.
type Options struct {
	Version string
	Log     zerolog.Logger
	// OpenState attaches the state file to the store that initialize
	// creates (loading what it holds). nil: memory only.
	OpenState func(*sessions.Store) Persistence
	// OnExit is called when the exit notification arrives.
	OnExit func()
	// Now is the clock of provider health (4.8); nil: time.Now.
	Now func() time.Time
	// Subagents makes the subagents' records (4.10) when the Persistence
	// gives none (no state database); nil: subagents.list answers empty
	// pages.
	Subagents func() subagents.Service
}

// Server holds the protocol's lifecycle and routes methods to handlers. It
// implements rpc.Dispatcher.
type Server struct {
	opts    Options
	log     zerolog.Logger
	mux     *rpc.Mux
	hooks   []string // capabilities.hooks, from routes
	methods []string // capabilities.methods, from routes
	started time.Time

	// store and persist are created by initialize, with the client's bounds.
	store   Store
	persist Persistence
	// transform is the transforms' part: chat.messages.transform's bases,
	// interned names and guidance, and the work on a history
	// (transform_state.go).
	transform transformState

	// mu serialises Dispatch and Close: a signal's final write waits for
	// the request in flight.
	mu       sync.Mutex
	cfg      config.Config
	maxBytes atomic.Int64
	models   modelChoice // providers.update, decisions' counts (model_choice.go)
	// router decides models and fallbacks (model_router.go).
	router modelRouter
	// unknownResumes: the calls whose resume argument named an alias no
	// entry holds (tool_execute_before.go), for the note their
	// tool.execute.after adds.
	unknownResumes unknownResumes
	clock          func() time.Time

	// gate is initialize-first and the request counters (gate.go).
	gate gate
	// cache reads usage into the store's cache figures and tells the
	// client of busts in a row (cache_accounting.go).
	cache *cacheAccounting
	// subs records subagents from OpenCode's events and tells the client
	// of changes (subagents.go).
	subs subagentRecords
}

// New returns a server that waits for initialize.
func New(opts Options) *Server {
	s := &Server{
		opts:    opts,
		log:     opts.Log,
		mux:     rpc.NewMux(),
		started: time.Now(),
		cfg:     config.DefaultConfig(),
		cache:   newCacheAccounting(),
	}
	s.maxBytes.Store(s.cfg.MaxMessageBytes)
	s.clock = opts.Now
	if s.clock == nil {
		s.clock = time.Now
	}
	s.router = modelRouter{cfg: &s.cfg, models: &s.models, log: s.log, clock: s.clock}
	s.subs = subagentRecords{log: s.log, notes: s.cache.notes, clock: s.clock}
	s.transform.cfg = &s.cfg
	s.register()
	return s
}

// route is one method the server answers: a method of the contract, its
// params type (nil: it reads none) and the function that decodes them and
// calls its handler. The routes are generated (protocol_gen.go).
type route struct {
	contract.Method
	params reflect.Type
	handle func(*Server, context.Context, rpc.Request) (any, error)
}

// routeByName indexes routes.
var routeByName = func() map[string]*route {
	m := make(map[string]*route, len(routes))
	for i := range routes {
		m[routes[i].Name] = &routes[i]
	}
	return m
}()

// register routes every method of the table through the mux and lists
// the hooks and methods initialize announces. (initialize reads them from
// the Server: the table refers to initialize, so initialize cannot refer
// to the table.)
func (s *Server) register() {
	for _, r := range routes {
		s.mux.Handle(r.Name, func(ctx context.Context, req rpc.Request) (any, error) { return r.handle(s, ctx, req) })
		switch r.Role {
		case contract.RoleHook:
			s.hooks = append(s.hooks, r.Name)
		case contract.RoleMethod:
			s.methods = append(s.methods, r.Name)
		}
	}
}

// Notifications are the server's messages to the client (rpc.Options):
// cache.bust and subagents.changed.
func (s *Server) Notifications() <-chan rpc.Notification { return s.cache.notes }

// MaxMessageBytes is the current message size limit (rpc.Options).
func (s *Server) MaxMessageBytes() int64 { return s.maxBytes.Load() }

// Store exposes the session store (for the demo and tests).
func (s *Server) Store() Store { return s.store }

// requestScoped is a store that looks for other processes' writes once a
// request for its reads (sessions.Store.BeginRequest).
type requestScoped interface{ BeginRequest() (end func()) }

// Dispatch implements rpc.Dispatcher: it enforces initialize-first and
// counts requests and errors.
func (s *Server) Dispatch(ctx context.Context, req rpc.Request) (any, error) {
	method := req.Method
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.gate.admit(method); err != nil {
		s.gate.count(method, true)
		return nil, err
	}
	if rs, ok := s.store.(requestScoped); ok {
		defer rs.BeginRequest()()
	}
	result, err := s.mux.Dispatch(ctx, req)
	s.gate.count(method, err != nil)
	if err != nil {
		s.log.Debug().Str("method", method).Err(err).Msg("request failed")
	}
	return result, err
}

// Close writes the state file one last time and releases it. It is safe
// to call more than once and before initialize.
func (s *Server) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.persist == nil {
		return nil
	}
	err := s.persist.Close()
	s.persist = nil
	return err
}

// managed reports whether session runs one of the managed agents
// (config.managedAgents, PROTOCOL.md 4).
func (s *Server) managed(session string) bool {
	return session != "" && s.cfg.IsManagedAgent(s.store.Tracked().Agent(session))
}
