package handlers

import (
	"sync"

	"github.com/hookwire/hookwire/contract"
	"github.com/hookwire/hookwire/rpc"
)

// gate is what Server and Observer both put in front of their methods:
// initialize first (PROTOCOL.md 2: any other method but exit is -32002
// until it succeeded), and the request and error counters status reports.
type gate struct {
	mu       sync.Mutex
	open     bool
	requests map[string]uint64
	errors   uint64
}

// ready reports whether initialize has succeeded.
func (g *gate) ready() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.open
}

// opened records a successful initialize.
func (g *gate) opened() {
	g.mu.Lock()
	g.open = true
	g.mu.Unlock()
}

// admit is nil when method may run now, else the -32002 error.
func (g *gate) admit(method string) error {
	if method == contract.MethodInitialize || method == contract.MethodExit || g.ready() {
		return nil
	}
	return rpc.Errorf(rpc.CodeNotInitialized, "not initialized: send initialize first")
}

// count counts one request of method, and an error when failed. A name
// the contract does not define counts as "(other)": a client's made-up
// names must not grow the map.
func (g *gate) count(method string, failed bool) {
	if routeByName[method] == nil {
		method = "(other)"
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.requests == nil {
		g.requests = map[string]uint64{}
	}
	g.requests[method]++
	if failed {
		g.errors++
	}
}

// counts is a copy of the counters: requests by method, and errors.
func (g *gate) counts() (map[string]uint64, uint64) {
	g.mu.Lock()
	defer g.mu.Unlock()
	out := make(map[string]uint64, len(g.requests))
	for k, v := range g.requests {
		out[k] = v
	}
	return out, g.errors
}
