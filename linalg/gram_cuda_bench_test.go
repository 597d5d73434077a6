package linalg

import (
	"math/rand/v2"
	"strings"
	"testing"

	"dspk/compute"
)

// benchGPUGram times one 384 × 60000 window (columns [61, 60061) of a
// 60122-sample padded window, as Kilosort4's) through a GPUGram, including
// the mean, the copy and the slice sum; it reports ms per window and the
// rate of the full-GEMM arithmetic (2·C²·n = 17.69 GFLOP).
func benchGPUGram(b *testing.B, opt GPUGramOptions, centred bool) {
	const C, n, pad = 384, 60000, 61
	ld := n + 2*pad
	rng := rand.New(rand.NewPCG(1, 2))
	x := make([]float32, C*ld)
	for i := range x {
		x[i] = float32(rng.NormFloat64())
	}
	var x64 []float64
	if opt.Float64 {
		x64 = to64(x)
	}
	gpuDo(b, func(c *compute.Ctx) error {
		var dx compute.Mem
		var err error
		if opt.Float64 {
			dx, err = upload(c, x64)
		} else {
			dx, err = upload(c, x)
		}
		if err != nil {
			return err
		}
		defer c.Free(dx)
		dst, err := c.Alloc(C * C * 8)
		if err != nil {
			return err
		}
		defer c.Free(dst)
		g, err := NewGPUGram(c, C, n, opt)
		if err != nil {
			return err
		}
		defer g.Free(c)
		one := func() error {
			if centred {
				return g.Covariance(c, dst.Ptr, dx.Ptr, ld, pad, pad+n)
			}
			return g.SecondMoment(c, dst.Ptr, dx.Ptr, ld, pad, pad+n)
		}
		for range 3 {
			if err := one(); err != nil {
				return err
			}
		}
		if err := c.Sync(); err != nil {
			return err
		}
		b.ResetTimer()
		for range b.N {
			if err := one(); err != nil {
				return err
			}
		}
		err = c.Sync()
		b.StopTimer()
		sec := b.Elapsed().Seconds() / float64(b.N)
		b.ReportMetric(sec*1e3, "ms/window")
		b.ReportMetric(2*C*C*n/sec/1e12, "TFLOP/s")
		return err
	})
}

// BenchmarkGPUCovariance times a centred covariance of 384 × 60000
// (mean, centred copy, product, slice sum) for each configuration.
func BenchmarkGPUCovariance(b *testing.B) {
	for _, o := range []GPUGramOptions{
		{Method: GramSplit}, {Method: GramGEMM}, {Method: GramBlocked}, {Method: GramBlocked, Blocks: 3},
		{Method: GramBlocked, Blocks: 4}, {Method: GramGEMM, TF32: true}, {Method: GramBlocked, TF32: true},
		{Method: GramSplit, Float64: true}, {Method: GramGEMM, Float64: true}, {Method: GramBlocked, Float64: true},
		{Method: GramSYRK, Float64: true}, {Method: GramDGEMM}, {Method: GramTiles}, {Method: GramTiles, Float64: true}, {},
	} {
		b.Run(strings.ReplaceAll(o.name(), " ", "-"), func(b *testing.B) { benchGPUGram(b, o, true) })
	}
}

// BenchmarkGPUSecondMoment times an uncentred second moment of 384 × 60000.
func BenchmarkGPUSecondMoment(b *testing.B) {
	for _, o := range []GPUGramOptions{
		{Method: GramSplit}, {Method: GramGEMM}, {Method: GramBlocked}, {Method: GramBlocked, Blocks: 3},
		{Method: GramGEMMInPlace}, {Method: GramGEMMInPlace, TF32: true}, {Method: GramDGEMM}, {Method: GramTiles}, {},
	} {
		b.Run(strings.ReplaceAll(o.name(), " ", "-"), func(b *testing.B) { benchGPUGram(b, o, false) })
	}
}
