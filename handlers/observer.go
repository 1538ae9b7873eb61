package handlers

import (
	"context"
	"errors"
	"runtime"
	"slices"
	"time"

	"github.com/hookwire/hookwire/contract"
	"github.com/hookwire/hookwire/rpc"
	"github.com/hookwire/hookwire/sessions"
	"github.com/hookwire/hookwire/subagents"
)

// CodeReadOnlyObserver answers a hook sent to an observer (PROTOCOL.md 8).
const CodeReadOnlyObserver = contract.CodeReadOnlyObserver

const msgReadOnlyObserver = "this process is a read-only observer: hooks are served by `hookwire serve`"

// ObservedFile is the state file an Observer answers from: another
// process serves it; the observer only reads it.
type ObservedFile interface {
	// Entries are the newest entries the last good read found (at most
	// sessions.DefaultListLimit), newest use first.
	Entries() []sessions.Entry
	// Count is how many entries the last good read found, all parents.
	Count() int
	// Page reads one page of the file as it is now (sessions.page, and a
	// parent's entries for sessions.list).
	Page(ctx context.Context, parent, cursor string, limit int) (sessions.EntryPage, error)
	// Status describes the file and the latest read; it is reported as
	// status.observer.
	Status() ObservedFileStatus
}

// ObservedCache is what an ObservedFile may also give: the sessions'
// prompt-cache figures (PROTOCOL.md 4.9), for status.cache.
type ObservedCache interface {
	Cache() []sessions.CacheSession
}

// ObservedSubagents is what an ObservedFile may also give: a page of a
// parent's subagents read from the file now (subagents.list, 4.10).
type ObservedSubagents interface {
	Subagents(ctx context.Context, parent, cursor string, limit int) (subagents.Page, error)
}

// ObservedFileStatus is status.observer (PROTOCOL.md 9).
type ObservedFileStatus struct {
	File     string `json:"file"`
	LastLoad string `json:"lastLoad"`
	Watch    string `json:"watch"`
	Loads    int    `json:"loads"`
	Parents  int    `json:"parents"`
}

// Observer answers the read-only part of the protocol from a state file
// that `hookwire serve` writes (PROTOCOL.md 9): sessions.list and status
// from the file, the core methods as serve does, and an error for every
// hook. It implements rpc.Dispatcher and sends sessions.changed.
type Observer struct {
	srv   *Server // initialize (config), the core methods, shutdown, exit
	file  ObservedFile
	notes chan rpc.Notification

	// gate is the observer's own initialize-first and counters (gate.go):
	// it counts every request, those the core methods' Server answers too.
	gate gate
}

// NewObserver returns an observer of file that waits for initialize.
// opts.OpenState is ignored: an observer keeps no store of its own.
func NewObserver(opts Options, file ObservedFile) *Observer {
	opts.OpenState = nil
	return &Observer{
		srv:   New(opts),
		file:  file,
		notes: make(chan rpc.Notification, 16),
	}
}

// Notifications are the observer's messages to the client (rpc.Options).
func (o *Observer) Notifications() <-chan rpc.Notification { return o.notes }

// SessionsChanged tells the client that the file's entries changed; there
// are count now. Before initialize nothing is sent. It never blocks: when
// the client is that far behind, the notifications already queued say the
// same.
func (o *Observer) SessionsChanged(count int) {
	if !o.gate.ready() {
		return
	}
	select {
	case o.notes <- rpc.Notification{Method: contract.MethodSessionsChanged, Params: sessionsChanged{Count: count}}:
	default:
	}
}

// SubagentsChanged tells the client that subagents of these top-level
// parents changed (4.10); as SessionsChanged, never before initialize and
// never blocking.
func (o *Observer) SubagentsChanged(parents []string) {
	if !o.gate.ready() || len(parents) == 0 {
		return
	}
	select {
	case o.notes <- rpc.Notification{Method: contract.MethodSubagentsChanged, Params: subagents.Changed{Parents: parents}}:
	default:
	}
}

type sessionsChanged struct {
	Count int `json:"count"`
}

// MaxMessageBytes is the current message size limit (rpc.Options).
func (o *Observer) MaxMessageBytes() int64 { return o.srv.MaxMessageBytes() }

// Dispatch implements rpc.Dispatcher.
func (o *Observer) Dispatch(ctx context.Context, req rpc.Request) (any, error) {
	res, err := o.dispatch(ctx, req)
	o.gate.count(req.Method, err != nil)
	return res, err
}

func (o *Observer) dispatch(ctx context.Context, req rpc.Request) (any, error) {
	switch req.Method {
	case contract.MethodInitialize:
		return o.initialize(ctx, req)
	case contract.MethodSessionsList, contract.MethodSessionsPage, contract.MethodSubagentsList, contract.MethodStatus:
		if err := o.gate.admit(req.Method); err != nil {
			return nil, err
		}
		switch req.Method {
		case contract.MethodStatus:
			return o.status(), nil
		case contract.MethodSessionsPage:
			return o.sessionsPage(ctx, req)
		case contract.MethodSubagentsList:
			return o.subagentsList(ctx, req)
		}
		return o.sessionsList(ctx, req)
	case contract.MethodShutdown, contract.MethodExit:
		return o.srv.Dispatch(ctx, req)
	}
	if slices.Contains(contract.ObserverMethods, req.Method) {
		return o.srv.Dispatch(ctx, req) // the core methods, answered as serve answers them
	}
	if routeByName[req.Method] != nil {
		// A hook, or another input from OpenCode (agents.update...): the
		// serving sidecar's business.
		return nil, &rpc.Error{Code: CodeReadOnlyObserver, Message: msgReadOnlyObserver}
	}
	return o.srv.Dispatch(ctx, req) // -32601 (or -32002 before initialize)
}

// observerInitializeResult is initialize's result from an observer: the
// capabilities it has, and observer: true.
type observerInitializeResult struct {
	ProtocolVersion int                  `json:"protocolVersion"`
	ServerInfo      serverInfo           `json:"serverInfo"`
	Capabilities    observerCapabilities `json:"capabilities"`
	Observer        bool                 `json:"observer"`
	Warnings        []string             `json:"warnings,omitempty"`
}

type observerCapabilities struct {
	Hooks         []string `json:"hooks"`
	Events        []string `json:"events"`
	Methods       []string `json:"methods"`
	Notifications []string `json:"notifications"`
}

func (o *Observer) initialize(ctx context.Context, req rpc.Request) (any, error) {
	res, err := o.srv.Dispatch(ctx, req)
	if err != nil {
		return nil, err
	}
	full := res.(initializeResult)
	o.gate.opened()
	return observerInitializeResult{
		ProtocolVersion: full.ProtocolVersion,
		ServerInfo:      full.ServerInfo,
		Capabilities: observerCapabilities{
			Hooks:         []string{},
			Events:        []string{},
			Methods:       contract.ObserverMethods,
			Notifications: contract.ObserverNotifications,
		},
		Observer: true,
		Warnings: full.Warnings,
	}, nil
}

// sessionsList is sessions.list from the file: of all parents, the
// newest entries of the last good read; of one, its entries read from the
// file now (the last good read's when the file cannot be read).
func (o *Observer) sessionsList(ctx context.Context, req rpc.Request) (any, error) {
	p, err := decodeSessionsListParams(req)
	if err != nil {
		return nil, err
	}
	all := o.file.Entries()
	if p.SessionID == "" {
		return append(make([]sessions.Entry, 0, len(all)), all...), nil
	}
	out := []sessions.Entry{}
	for cursor := ""; ; {
		page, err := o.file.Page(ctx, p.SessionID, cursor, sessions.MaxListLimit)
		if err != nil {
			out = out[:0]
			for _, e := range all {
				if e.Parent == p.SessionID {
					out = append(out, e)
				}
			}
			return out, nil
		}
		out = append(out, page.Entries...)
		if cursor = page.Next; cursor == "" {
			return out, nil
		}
	}
}

// sessionsPage is sessions.page from the file as it is now.
func (o *Observer) sessionsPage(ctx context.Context, req rpc.Request) (any, error) {
	p, err := decodeSessionsPageParams(req)
	if err != nil {
		return nil, err
	}
	if err := checkPageParams(p); err != nil {
		return nil, err
	}
	page, err := o.file.Page(ctx, p.SessionID, p.Cursor, p.Limit)
	switch {
	case errors.Is(err, sessions.ErrBadCursor):
		return nil, invalidParams("cursor: %v", err)
	case err != nil:
		return nil, rpc.Errorf(rpc.CodeInternalError, "reading the state file: %v", err)
	}
	return page, nil
}

// subagentsList is subagents.list from the file as it is now.
func (o *Observer) subagentsList(ctx context.Context, req rpc.Request) (any, error) {
	p, err := decodeSubagentsListParams(req)
	if err != nil {
		return nil, err
	}
	limit, err := subagentsLimit(p.Limit)
	if err != nil {
		return nil, err
	}
	f, ok := o.file.(ObservedSubagents)
	if !ok {
		return subagents.Page{Parent: subagents.Parent{SessionID: p.SessionID}, Subagents: []subagents.Row{}}, nil
	}
	return subagentsPage(f.Subagents(ctx, p.SessionID, p.Cursor, limit))
}

type observerStatus struct {
	Version       string             `json:"version"`
	UptimeSeconds float64            `json:"uptimeSeconds"`
	Requests      map[string]uint64  `json:"requests"`
	Errors        uint64             `json:"errors"`
	Store         observedStore      `json:"store"`
	Memory        memoryStats        `json:"memory"`
	State         string             `json:"state"`
	StateFile     stateFile          `json:"stateFile"`
	Observer      ObservedFileStatus `json:"observer"`
	Cache         cacheStatus        `json:"cache"`
}

type observedStore struct {
	Parents int `json:"parents"`
	Entries int `json:"entries"`
}

// StateFileObserver is status.stateFile.mode of an observer.
const StateFileObserver = "observer"

func (o *Observer) status() observerStatus {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	fs := o.file.Status()
	requests, errs := o.gate.counts()
	return observerStatus{
		Version:       o.srv.opts.Version,
		UptimeSeconds: time.Since(o.srv.started).Seconds(),
		Requests:      requests,
		Errors:        errs,
		Store:         observedStore{Parents: fs.Parents, Entries: o.file.Count()},
		Memory:        memoryStats{HeapAllocBytes: ms.HeapAlloc, SysBytes: ms.Sys, Goroutines: runtime.NumGoroutine()},
		State:         "observing: " + fs.File + " (" + fs.LastLoad + ")",
		StateFile:     stateFile{Mode: StateFileObserver, Path: fs.File},
		Observer:      fs,
		Cache:         cacheStatusOf(o.cache()),
	}
}

// cache is the observed file's prompt-cache figures, if it gives them.
func (o *Observer) cache() []sessions.CacheSession {
	if c, ok := o.file.(ObservedCache); ok {
		return c.Cache()
	}
	return nil
}
