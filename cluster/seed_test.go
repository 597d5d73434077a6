package cluster

import (
	"testing"

	"dspk/internal/testseed"
)

// testSeed is [testseed.Seed].
func testSeed(t testing.TB) uint64 { return testseed.Seed(t) }
