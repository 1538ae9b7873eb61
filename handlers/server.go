package handlers

import (
	"context"
	"encoding/json"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rs/zerolog"

	"github.com/hookwire/hookwire/rpc"
	"github.com/hookwire/hookwire/sessions"
)

// ProtocolVersion is the protocol version this sidecar speaks.
const ProtocolVersion = 1

// Persistence is what the server needs of the state file: a nudge after
// requests that may have changed the store, a flush on shutdown, a close at
// exit, and a line for status.
type Persistence interface {
	Notify()
	Flush() error
	Close() error
	Status() string
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
}

// Server holds the protocol's lifecycle and routes methods to handlers. It
// implements rpc.Dispatcher.
type Server struct {
	opts    Options
	log     zerolog.Logger
	mux     *rpc.Mux
	started time.Time

	// store and persist are created by initialize, with the client's bounds.
	store   *sessions.Store
	persist Persistence

	// mu serialises Dispatch and Close: a signal's final flush waits for
	// the request in flight.
	mu          sync.Mutex
	initialized bool
	cfg         Config
	maxBytes    atomic.Int64

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
	s.routes()
	return s
}

func (s *Server) routes() {
	s.mux.Handle("initialize", params(s.initialize))
	s.mux.Handle("shutdown", params(s.shutdown))
	s.mux.Handle("exit", params(s.exit))
	s.mux.Handle("tool.execute.before", params(s.toolExecuteBefore))
	s.mux.Handle("tool.execute.after", params(s.toolExecuteAfter))
	s.mux.Handle("chat.system.transform", params(s.chatSystemTransform))
	s.mux.Handle("chat.messages.transform", s.chatMessagesTransform)
	s.mux.Handle("chat.message", params(s.chatMessage))
	s.mux.Handle("event", params(s.event))
	s.mux.Handle("delegate.resolveModel", params(s.resolveModel))
	s.mux.Handle("delegate.detectError", params(s.detectError))
	s.mux.Handle("sessions.list", params(s.sessionsList))
	s.mux.Handle("status", params(s.status))
}

// params adapts a handler that reads only the raw params.
func params(fn func(context.Context, json.RawMessage) (any, error)) rpc.HandlerFunc {
	return func(ctx context.Context, req rpc.Request) (any, error) { return fn(ctx, req.Params) }
}

// hookMethods are the capabilities.hooks this server answers.
var hookMethods = []string{"tool.execute.before", "tool.execute.after", "chat.system.transform",
	"chat.messages.transform", "chat.message", "event"}

// coreMethods are the capabilities.methods this server answers.
var coreMethods = []string{"delegate.resolveModel", "delegate.detectError", "sessions.list", "status"}

var knownMethods = func() map[string]bool {
	m := map[string]bool{"initialize": true, "shutdown": true, "exit": true}
	for _, name := range append(append([]string{}, hookMethods...), coreMethods...) {
		m[name] = true
	}
	return m
}()

// mutating names the methods after which the state file may need a write.
var mutating = map[string]bool{
	"tool.execute.before": true, "tool.execute.after": true, "chat.messages.transform": true,
	"chat.message": true, "event": true,
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
	if !s.initialized && method != "initialize" && method != "exit" {
		s.count(method, true)
		return nil, rpc.Errorf(rpc.CodeNotInitialized, "not initialized: send initialize first")
	}
	result, err := s.mux.Dispatch(ctx, req)
	s.count(method, err != nil)
	if err == nil && mutating[method] && s.persist != nil {
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
	if !knownMethods[method] {
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

// managed reports whether session runs the orchestrator agent.
func (s *Server) managed(session string) bool {
	return session != "" && s.store.Agent(session) == s.cfg.OrchestratorAgent
}
