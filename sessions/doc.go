// Package sessions is hookwire's session store: per parent session and
// agent, the remembered task sessions with their aliases; the pending task
// calls; which agent each session runs; the frozen cache-stable blocks; the
// models' health and the prompt-cache figures. Each kind of state is a
// type of its own with its rules, pure (Store says which), and callers
// reach it through the store's methods for it (Store.Tasks, Frozen,
// Tracked, ProviderHealth, PromptCache). The store keeps them in memory,
// as a cache in front of a Backend when one is attached (backend.go: what
// each kind of state asks of the database, a small interface each, and
// the records they exchange; persistence.go: how the cache and the
// database agree). Each change the store makes runs in one write
// transaction that the Backend begins and ends; a model failure's records
// are one such change (model_failure.go). It reads time only from
// Config.Now. It is safe for concurrent use. It never speaks the protocol
// and never decides guidance text (that is core's).
//
// The package does no IO (layers_test.go holds it to that): the SQLite
// Backend, the database's paths and checks, the CLI's reads and writes of
// the state and the import of an earlier release's JSON state file are
// package sessiondb. export.go is what that package needs of the store
// beyond the Backend.
package sessions
