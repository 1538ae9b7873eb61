package main

import (
	"runtime"
	"runtime/debug"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestMemoryLimitFor(t *testing.T) {
	for _, tt := range []struct {
		live uint64
		want int64
	}{
		{0, gcMinLimit},
		{3 << 20, gcMinLimit},
		{12 << 20, gcMinLimit},
		{16 << 20, 28 << 20},
		{20 << 20, 34 << 20},
		{40 << 20, 64 << 20},
		{1 << 62, 3<<39 + gcLimitSlack},
	} {
		assert.Equal(t, tt.want, memoryLimitFor(tt.live), "live %d", tt.live)
	}
}

// TestWatchGCFollowsTheLiveHeap: after a collection with a large live
// heap, the soft limit stands above it, so the collector does not run
// back to back.
func TestWatchGCFollowsTheLiveHeap(t *testing.T) {
	t.Setenv("GOGC", "")
	t.Setenv("GOMEMLIMIT", "")
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(-1))
	defer tuneGC()()
	assert.Equal(t, gcPercent, debug.SetGCPercent(gcPercent))
	live := make([]byte, 48<<20)
	for i := range live {
		live[i] = byte(i)
	}
	var limit int64
	for range 50 {
		runtime.GC()
		time.Sleep(10 * time.Millisecond) // the cleanup runs on its own goroutine
		if limit = debug.SetMemoryLimit(-1); limit > 72<<20 {
			break
		}
	}
	require.Greater(t, limit, int64(72<<20), "1.5 times the 48 MiB live heap")
	runtime.KeepAlive(live)
}
