// Package gputest provides the CUDA device that GPU tests run on: it is
// opened once per test binary, and tests are skipped with a clear message
// where no GPU, driver or CUDA library is present.
package gputest

import (
	"errors"
	"sync"
	"testing"

	"dspk/compute"
)

var (
	once sync.Once
	dev  *compute.Device
	err  error
)

// Device returns the test GPU (cuda:0, NVRTC loaded; cuBLAS loads on its
// first call). It
// skips the test where there is none and fails it if the GPU is present
// but cannot be opened. The device stays open for the life of the test
// binary.
func Device(t testing.TB) *compute.Device {
	t.Helper()
	once.Do(func() { dev, _, err = compute.Open("cuda:0") })
	if errors.Is(err, compute.ErrNotFound) {
		t.Skipf("no CUDA GPU: %v", err)
	}
	if err != nil {
		t.Fatalf("opening cuda:0: %v", err)
	}
	return dev
}
