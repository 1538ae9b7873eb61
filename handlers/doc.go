// Package handlers answers hookwire's methods: one file per hook or method.
// Each handler decodes its params, asks core (decisions) and sessions
// (state), and returns a JSON Patch or a result.
//
// Which methods exist, their kinds, the OpenCode hook each hook forwards
// and the shapes of their params are the contract's (package contract):
// protocol_gen.go, generated from it, holds the params types, the typed
// interface (methodHandlers) each handler is a function of, and the
// routes that decode a method's params, check its required members and
// call its handler. Nothing here spells a method's name or keeps a map
// of the methods.
//
// The Server holds the lifecycle (gate.go: initialize first, the
// counters), the config and the store, and per feature a small component
// with the state that feature keeps between requests and the work that
// reads it, so a handler is its route and a few calls: transformState
// (chat.messages.transform's bases, interned names and guidance, and the
// work on a history: derived parts, guidance, frozen blocks, thrown
// tasks), modelRouter over modelChoice (what OpenCode can reach, the
// decisions' counts, OpenCode 2's pending subagent calls; the model
// decisions and runtime fallback; the choices are core's),
// unknownResumes, and cacheAccounting (usage into the store's cache
// figures, cache.bust to the client).
//
// handlers never touch the transport (framing, ids, writing replies: that
// is rpc's) and never hold decision logic that belongs in core.
package handlers
