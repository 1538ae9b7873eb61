// Package sessions is hookwire's session store: per parent session and
// agent, the remembered task sessions with their aliases; the pending task
// calls; which agent each session runs; the frozen cache-stable blocks; and
// their persistence in the project's SQLite database, shared with every
// other process on the project (db.go opens it, schema.go is its schema
// and numbered migrations, dbstore.go is the store's side of it,
// database.go what the server holds, legacy.go the one-time import of an
// earlier release's JSON state file). It is safe for concurrent use. It
// never speaks the protocol and never decides guidance text (that is
// core's).
package sessions
