// Package handlers answers hookwire's methods: one file per hook or method.
// Each handler decodes its params, asks core (decisions) and sessions
// (state), and returns a JSON Patch or a result.
//
// Which methods exist, their kinds and the OpenCode hook each hook
// forwards are the contract's (package contract): server.go pairs each
// with its handler, and nothing here spells a method's name.
//
// handlers never touch the transport (framing, ids, writing replies: that
// is rpc's) and never hold decision logic that belongs in core.
package handlers
