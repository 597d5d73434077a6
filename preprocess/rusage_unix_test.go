//go:build unix

package preprocess

import (
	"syscall"
	"time"
)

// cpuTime returns the user+system CPU time of the process so far, so that
// benchmarks can report CPU seconds, which a shared, loaded machine
// inflates far less than wall time.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return -1
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
