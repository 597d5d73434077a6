package figure

import (
	"context"
	"math/rand/v2"
	"path/filepath"
	"testing"
)

// BenchmarkWriteRaster draws the drift raster of a 10-minute Neuropixels
// detect run (575 854 spikes, as on the H200's 10-minute simulation;
// 200 000 of them drawn) into a PNG.
func BenchmarkWriteRaster(b *testing.B) {
	const n = 575854
	rng := rand.New(rand.NewPCG(7, 8))
	d := &Raster{SampleRate: 30000, Seconds: 600, Threshold: 9, Title: "bench"}
	for i := range 192 {
		d.ChanY = append(d.ChanY, float32(20*i), float32(20*i))
	}
	d.Times = make([]int64, n)
	d.Y = make([]float32, n)
	d.Amp = make([]float32, n)
	for i := range n {
		d.Times[i] = int64(i) * 600 * 30000 / n
		d.Y[i] = float32(rng.Float64() * 3820)
		d.Amp[i] = float32(9 * (1 + 4*rng.ExpFloat64()))
	}
	path := filepath.Join(b.TempDir(), "r.png")
	for b.Loop() {
		if err := writeRaster(context.Background(), path, d, nil); err != nil {
			b.Fatal(err)
		}
	}
}
