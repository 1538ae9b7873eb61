package sessiondb

import "context"

// prepareReads prepares the statements a request's first reads use (the
// read-through of a parent, a tracked session, a session's prompt-cache
// figures, a model's health, and the look for other processes' commits)
// by running each for a key no row has. SQLite compiles a statement on its
// first use on a connection, about 0.2 ms of CPU for these; done at open,
// the first transform of a new sidecar (the one OpenCode waits for) does
// not pay it. Errors are left to the reads that follow.
func (d *storeDB) prepareReads(ctx context.Context) {
	_, _, _ = parentRows{d}.Rev(ctx, "")
	_, _ = d.readParent(ctx, "")
	_, _, _ = trackedRows{d}.Read(ctx, "")
	_, _, _ = cacheRows{d}.Read(ctx, "")
	_, _, _ = healthRows{d}.Read(ctx, "")
	_, _ = d.c.dataVersion(ctx)
}
