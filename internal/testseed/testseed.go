package testseed

import (
	"math/rand/v2"
	"os"
	"strconv"
	"testing"
)

// Env is the variable that fixes the seed.
const Env = "DSPK_TEST_SEED"

// Seed returns the seed of a test's random inputs: Env's value when it is
// set, else a fresh one each run (so that repeated runs cover more
// inputs). It logs the seed and fails the test on a malformed Env.
func Seed(t testing.TB) uint64 {
	t.Helper()
	seed := rand.Uint64()
	if s := os.Getenv(Env); s != "" {
		v, err := strconv.ParseUint(s, 0, 64)
		if err != nil {
			t.Fatalf("%s=%q: %v", Env, s, err)
		}
		seed = v
	}
	t.Logf("seed %d (%s=%d reproduces this run)", seed, Env, seed)
	return seed
}
