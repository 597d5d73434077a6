package testseed

import "testing"

// TestSeedFromEnv checks that the variable fixes the seed.
func TestSeedFromEnv(t *testing.T) {
	t.Setenv(Env, "42")
	if s := Seed(t); s != 42 {
		t.Errorf("seed %d, want 42", s)
	}
	t.Setenv(Env, "0x10")
	if s := Seed(t); s != 16 {
		t.Errorf("seed %d, want 16", s)
	}
}
