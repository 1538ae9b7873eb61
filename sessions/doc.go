// Package sessions is hookwire's session store: per parent session and
// agent, the remembered task sessions with their aliases; the pending task
// calls; which agent each session runs; the frozen cache-stable blocks; the
// models' health and the prompt-cache figures. The store keeps them in
// memory, as a cache in front of a Backend (backend.go: the interface the
// store declares, and the records it exchanges), when one is attached
// (dbstore.go says how the two agree). It reads time only from
// Config.Now. It is safe for concurrent use. It never speaks the protocol
// and never decides guidance text (that is core's).
//
// The SQLite Backend still lives in this package, in files of its own, to
// be moved to a package of its own: db.go opens the project's database,
// schema.go is its schema and numbered migrations, dbrows.go,
// healthdb.go and cachedb.go its rows (storeDB, the Backend),
// dbwriters.go, dbqueue.go and dbwal.go its writers' turns and WAL bound,
// dblist.go the listing's reads, database.go what the server holds,
// forget.go and inspect.go the CLI's writes and reads, legacy.go the
// one-time import of an earlier release's JSON state file, project.go the
// project's state path.
package sessions
