//go:build unix

package rpc

import (
	"syscall"
	"time"
)

// processCPU is the CPU time (user + system) this process has used. The
// benchmarks report it per op beside wall time: on a shared machine it
// moves far less than wall time does.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
