package pipeline

import (
	"context"
	"testing"

	"dspk/compute"
	"dspk/internal/gputest"
)

// TestWarmUp checks that warming up changes nothing: on the CPU it
// returns at once; on the GPU the whitening statistic of a pipeline built
// beside a warm-up (made whatever forms the product) is bit for bit that
// of one built without.
func TestWarmUp(t *testing.T) {
	cpu, _, err := compute.Open("cpu")
	if err != nil {
		t.Fatal(err)
	}
	rec := simRecording(t, 4.2, 8)
	WarmUp(cpu, rec, rec.Probe(), shortConfig())()
	WarmUp(nil, rec, rec.Probe(), shortConfig())()
	warmUp(cpu, rec, rec.Probe(), shortConfig())()
	dev := gputest.Device(t)
	second := func(warm bool) []float64 {
		wait := func() {}
		if warm {
			wait = warmUp(dev, rec, rec.Probe(), shortConfig())
		}
		p, err := New(dev, rec, rec.Probe(), shortConfig())
		if err != nil {
			t.Fatal(err)
		}
		defer p.Close()
		_, cc, _, err := p.Whitening(context.Background())
		wait()
		if err != nil {
			t.Fatal(err)
		}
		return cc
	}
	plain, warmed := second(false), second(true)
	for i := range plain {
		if plain[i] != warmed[i] {
			t.Fatalf("second moment element %d: %v after a warm-up, %v without", i, warmed[i], plain[i])
		}
	}
}
