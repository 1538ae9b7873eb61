// Package sessiondb is the session store's persistence: the project's
// SQLite state database, shared by every process on the project, and the
// sessions.Backend over it. db.go opens the database (db_unix.go and
// db_other.go the platform's flags), schema.go is its schema and numbered
// migrations, dbrows.go, healthdb.go and cachedb.go its rows (storeDB, and the
// Backend's parts over it: txRows, parentRows, trackedRows, healthRows,
// cacheRows, upkeepRows), dbwriters.go and dbqueue.go (dbqueue_unix.go,
// dbqueue_other.go) the writers' turns within and across processes,
// dbwal.go the WAL's bound, dblist.go the listing's reads, database.go what
// the server holds (Database: the store attached to the database, its
// mode and warnings; dbwatch.go its watch on the file and the reopen),
// subagentdb.go the subagents' records (subagents.Service: the tables and
// caps in subagentschema.go, the intents in subagentwrite.go, the pages
// in subagentread.go, the observer's revision in subagentrev.go), forget.go and inspect.go the CLI's writes and reads,
// legacy.go the one-time import of an earlier release's JSON state file,
// project.go the project's state path.
//
// The decisions about what is kept (bounds, the byte budget, the order of
// use) are the store's (package sessions); this package reads and writes
// the rows it is given.
package sessiondb
