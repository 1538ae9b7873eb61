package handlers

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rs/zerolog"

	"github.com/hookwire/hookwire/contract"
	"github.com/hookwire/hookwire/rpc"
	"github.com/hookwire/hookwire/sessions"
)

// ProtocolVersion is the protocol version this sidecar speaks.
const ProtocolVersion = contract.ProtocolVersion

// Persistence is what the server needs of the state file: a nudge after
// requests that may have changed the store, a flush on shutdown, a close at
// exit, and for status a line for humans and the same as fields for
// clients.
type Persistence interface {
	Notify()
	Flush() error
	Close() error
	Status() string
	StateFile() sessions.StateFileStatus
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
	store   *sessions.Store
	persist Persistence
	// bases holds the histories of incremental transforms (PROTOCOL.md 4.6).
	bases *histories
	// names interns the messages' session ids (local.session).
	names map[string]string
	// guided remembers guidance per task error text (Server.guidance).
	guided map[string]guidedError

	// mu serialises Dispatch and Close: a signal's final flush waits for
	// the request in flight.
	mu          sync.Mutex
	initialized bool
	cfg         Config
	maxBytes    atomic.Int64
	models      modelState // providers.update and decisions (models.go)
	clock       func() time.Time

	statsMu  sync.Mutex
	requests map[string]uint64
	errors   uint64
}

// New returns a server that waits for initialize.
func New(opts Options) *Server {
	s := &Server{
		opts:     opts,
		log:      opts.Log,
		mux:      rpc.NewMux(),
		started:  time.Now(),
		cfg:      DefaultConfig(),
		requests: map[string]uint64{},
	}
	s.maxBytes.Store(s.cfg.MaxMessageBytes)
	s.clock = opts.Now
	if s.clock == nil {
		s.clock = time.Now
	}
	s.register()
	return s
}

// route is one method the server answers: a method of the contract and
// its handler.
type route struct {
	contract.Method
	// changesState: the store may have changed, so the state file is
	// nudged after a successful call.
	changesState bool
	handle       func(*Server, context.Context, rpc.Request) (any, error)
}

// handler is what the server does for one method of the contract.
type handler struct {
	changesState bool
	handle       func(*Server, context.Context, rpc.Request) (any, error)
}

// handlerOf is the handler of every method of the contract
// (contract.Methods); a test checks that each method has one and each
// handler a method.
var handlerOf = map[string]handler{
	contract.MethodInitialize:            {false, (*Server).initialize},
	contract.MethodShutdown:              {false, (*Server).shutdown},
	contract.MethodExit:                  {false, (*Server).exit},
	contract.MethodToolExecuteBefore:     {true, (*Server).toolExecuteBefore},
	contract.MethodToolExecuteAfter:      {true, (*Server).toolExecuteAfter},
	contract.MethodChatSystemTransform:   {false, (*Server).chatSystemTransform},
	contract.MethodChatMessagesTransform: {true, (*Server).chatMessagesTransform},
	contract.MethodChatMessage:           {true, (*Server).chatMessage},
	contract.MethodEvent:                 {true, (*Server).event},
	contract.MethodDelegateResolveModel:  {false, (*Server).resolveModel},
	contract.MethodDelegateDetectError:   {false, (*Server).detectError},
	contract.MethodSessionsList:          {false, (*Server).sessionsList},
	contract.MethodAgentsUpdate:          {false, (*Server).agentsUpdate},
	contract.MethodProvidersUpdate:       {false, (*Server).providersUpdate},
	contract.MethodStatus:                {false, (*Server).status},
	contract.MethodModelFailed:           {true, (*Server).modelFailed},
}

// routes is every method the server answers, in the contract's order: the
// one list that dispatch, initialize's capabilities (in this order),
// status's request counters and the fuzz target's methods all come from.
var routes = func() []route {
	rs := make([]route, 0, len(contract.Methods))
	for _, m := range contract.Methods {
		if h, ok := handlerOf[m.Name]; ok {
			rs = append(rs, route{m, h.changesState, h.handle})
		}
	}
	return rs
}()

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

// MaxMessageBytes is the current message size limit (rpc.Options).
func (s *Server) MaxMessageBytes() int64 { return s.maxBytes.Load() }

// Store exposes the session store (for the demo and tests).
func (s *Server) Store() *sessions.Store { return s.store }

// Dispatch implements rpc.Dispatcher: it enforces initialize-first, counts
// requests and errors, and nudges persistence after state changes.
func (s *Server) Dispatch(ctx context.Context, req rpc.Request) (any, error) {
	method := req.Method
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.initialized && method != contract.MethodInitialize && method != contract.MethodExit {
		s.count(method, true)
		return nil, rpc.Errorf(rpc.CodeNotInitialized, "not initialized: send initialize first")
	}
	result, err := s.mux.Dispatch(ctx, req)
	s.count(method, err != nil)
	if err == nil && s.persist != nil && routeByName[method] != nil && routeByName[method].changesState {
		s.persist.Notify()
	}
	if err != nil {
		s.log.Debug().Str("method", method).Err(err).Msg("request failed")
	}
	return result, err
}

func (s *Server) count(method string, failed bool) {
	s.statsMu.Lock()
	defer s.statsMu.Unlock()
	if routeByName[method] == nil {
		method = "(other)" // a client's made-up names must not grow this map
	}
	s.requests[method]++
	if failed {
		s.errors++
	}
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
	return session != "" && s.cfg.isManagedAgent(s.store.Agent(session))
}
