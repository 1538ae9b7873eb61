//go:build unix

package main

import (
	"syscall"
	"time"
)

// cpuTime is the CPU time (user + system) this process and its waited-for
// children have used. The benchmarks report it per step beside wall time:
// on a shared machine it moves far less than wall time does.
func cpuTime() time.Duration {
	var self, children syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &self) != nil || syscall.Getrusage(syscall.RUSAGE_CHILDREN, &children) != nil {
		return 0
	}
	return time.Duration(self.Utime.Nano() + self.Stime.Nano() + children.Utime.Nano() + children.Stime.Nano())
}
