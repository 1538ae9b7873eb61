// Package sessions is hookwire's session store: per parent session and
// agent, the remembered task sessions with their aliases; the pending task
// calls; which agent each session runs; the frozen cache-stable blocks; the
// models' health and the prompt-cache figures. Each is a book of its own
// (Store says which), reached through a face (Store.Tasks, Frozen,
// Tracked, ProviderHealth, PromptCache). The store keeps them in
// memory, as a cache in front of a Backend (backend.go: what each of the
// store's parts asks of the database, a small interface a part, and the
// records they exchange), when one is attached
// (backing.go says how the two agree). It reads time only from
// Config.Now. It is safe for concurrent use. It never speaks the protocol
// and never decides guidance text (that is core's).
//
// The package does no IO (layers_test.go holds it to that): the SQLite
// Backend, the database's paths and checks, the CLI's reads and writes of
// the state and the import of an earlier release's JSON state file are
// package sessiondb. export.go is what that package needs of the store
// beyond the Backend.
package sessions
