package main

import (
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync/atomic"
)

// The sidecar's heap is small and long-lived (the store, the transform
// bases) while its large requests are short-lived garbage. Go's default
// (GOGC=100) collects several times during one 5 MB transform, which is
// most of its cost; measured (scripts/bench/RESULTS.md), GOGC=400 alone
// cuts that but leaves RSS 1.4x higher. So: GOGC=400, bounded by a soft
// memory limit that follows the live heap (1.5 times it plus headroom,
// never below gcMinLimit). The limit keeps RSS below where GOGC=100 had it;
// following the live heap keeps the limit above it, so a full store never
// makes the collector run back to back. gcMinLimit was 28 MiB while each
// large request left its whole buffer behind; since rpc reuses it, 22 MiB
// costs about one more collection in twenty 1-5 MB transforms and no more
// CPU, and RSS after 5 MB transforms went from about 29 to 25 MiB.
const (
	gcPercent    = 400
	gcMinLimit   = 22 << 20
	gcLimitSlack = 4 << 20
)

// tuneGC sets the collector as above, unless GOGC or GOMEMLIMIT is set:
// then the runtime's own reading of them stands (for measuring). stop
// ends the following of the live heap (the settings stay).
func tuneGC() (stop func()) {
	if os.Getenv("GOGC") != "" || os.Getenv("GOMEMLIMIT") != "" {
		return func() {}
	}
	debug.SetGCPercent(gcPercent)
	debug.SetMemoryLimit(gcMinLimit)
	stopped := &atomic.Bool{}
	watchGC(stopped)
	return func() { stopped.Store(true) }
}

// gcSentinel is garbage the collector finds at every cycle: its cleanup
// adjusts the limit to the live heap just measured and arms the next one.
type gcSentinel struct{ _ [32]byte }

func watchGC(stopped *atomic.Bool) {
	runtime.AddCleanup(&gcSentinel{}, func(stopped *atomic.Bool) {
		if stopped.Load() {
			return
		}
		debug.SetMemoryLimit(memoryLimitFor(liveHeap()))
		watchGC(stopped)
	}, stopped)
}

// memoryLimitFor is the soft limit for a live heap of live bytes.
func memoryLimitFor(live uint64) int64 {
	l := int64(min(live, 1<<40))
	return max(gcMinLimit, l+l/2+gcLimitSlack)
}

func liveHeap() uint64 {
	s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return s[0].Value.Uint64()
}
