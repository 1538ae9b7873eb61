package handlers

import (
	"context"
	"runtime"
	"time"

	"github.com/hookwire/hookwire/sessions"
)

type statusResult struct {
	Version       string            `json:"version"`
	UptimeSeconds float64           `json:"uptimeSeconds"`
	Requests      map[string]uint64 `json:"requests"`
	Errors        uint64            `json:"errors"`
	Store         sessions.Stats    `json:"store"`
	Memory        memoryStats       `json:"memory"`
	State         string            `json:"state"`
	StateFile     stateFile         `json:"stateFile"`
	CacheStable   bool              `json:"cacheStable"`
	Agents        statusAgents      `json:"agents"`
	Models        statusModels      `json:"models"`
	Cache         cacheStatus       `json:"cache"`
}

// statusAgents is status.agents: the agents as resolved now (PROTOCOL.md
// 4), so a user can see why a session is or is not managed.
type statusAgents struct {
	Managed   []string `json:"managed"`
	Reminder  []string `json:"reminder"`
	Primary   []string `json:"primary"`
	Subagents []string `json:"subagents"`
}

// stateFile is status.stateFile: where the state lives, for clients (the
// shim warns on memory-only); state says the same for humans. Mode is
// stateFileNone or one of the sessions.StateFile* modes.
type stateFile = sessions.StateStatus

// stateFileNone is stateFile's mode when no state file was asked for.
const stateFileNone = "none"

type memoryStats struct {
	HeapAllocBytes uint64 `json:"heapAllocBytes"`
	SysBytes       uint64 `json:"sysBytes"`
	Goroutines     int    `json:"goroutines"`
}

// status reports what the sidecar holds and has done (5).
func (s *Server) status(context.Context) (statusResult, error) {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	requests, errs := s.gate.counts()
	state, file := "memory", stateFile{Mode: stateFileNone}
	if s.persist != nil {
		state, file = s.persist.Status(), s.persist.State()
	}
	return statusResult{
		Version:       s.opts.Version,
		UptimeSeconds: time.Since(s.started).Seconds(),
		Requests:      requests,
		Errors:        errs,
		Store:         s.store.Stats(),
		Memory:        memoryStats{HeapAllocBytes: ms.HeapAlloc, SysBytes: ms.Sys, Goroutines: runtime.NumGoroutine()},
		State:         state,
		StateFile:     file,
		CacheStable:   s.cfg.CacheStable,
		Agents: statusAgents{Managed: s.cfg.ManagedSet(), Reminder: s.cfg.ReminderAgents(),
			Primary: s.cfg.PrimaryAgents, Subagents: s.cfg.Subagents},
		Models: s.router.modelStatus(),
		Cache:  cacheStatusOf(s.store.PromptCache().List()),
	}, nil
}
