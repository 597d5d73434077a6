package cluster

import (
	"math/rand/v2"
	"os"
	"strconv"
	"testing"
)

// testSeed returns the seed of a test's random inputs: DSPK_TEST_SEED
// when it is set, else a fresh one each run (so that repeated runs cover
// more inputs). It logs the seed, so that a failure is reproduced by
// running the test again with DSPK_TEST_SEED set to it.
func testSeed(t testing.TB) uint64 {
	t.Helper()
	seed := rand.Uint64()
	if s := os.Getenv("DSPK_TEST_SEED"); s != "" {
		v, err := strconv.ParseUint(s, 0, 64)
		if err != nil {
			t.Fatalf("DSPK_TEST_SEED=%q: %v", s, err)
		}
		seed = v
	}
	t.Logf("seed %d (DSPK_TEST_SEED=%d reproduces this run)", seed, seed)
	return seed
}
