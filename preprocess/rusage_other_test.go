//go:build !unix

package preprocess

import "time"

// cpuTime is not measured on this system.
func cpuTime() time.Duration { return -1 }
