package preprocess

import (
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"
	"unsafe"

	"dspk/compute"
	"dspk/linalg"
)

// The GPU benchmarks use an NP1 window: 385 interleaved int16 channels,
// 384 used, T = 60122, CAR on, a random sparse whitening with 32 entries
// per row. Device times come from CUDA events around the kernels.
var (
	gpuBenchOnce sync.Once
	gpuBenchSrc  []int16
	gpuBenchW    *linalg.Whitening
)

func gpuBenchData() ([]int16, *linalg.Whitening) {
	gpuBenchOnce.Do(func() {
		rng := rand.New(rand.NewPCG(71, 72))
		gpuBenchSrc = extremeWindow(rng, 60122, 385)
		gpuBenchW = randWhiteningK(rng, 384, 32)
	})
	return gpuBenchSrc, gpuBenchW
}

// newBenchGPU returns a cudaPreprocessor for the NP1 window with k pinned
// windows holding copies of the benchmark window.
func newBenchGPU(b *testing.B, k int, cfg gpuConfig) (*cudaPreprocessor, [][]int16) {
	dev := testGPU(b)
	src, _ := gpuBenchData()
	p := DefaultParams()
	p.ChanMap, p.NChanFile = iota(384), 385
	g, err := newCUDA(dev, p, cfg)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { g.Close() })
	alloc, err := g.PinnedWindows(k)
	if err != nil {
		b.Fatal(err)
	}
	wins := make([][]int16, k)
	for i := range wins {
		wins[i] = alloc(len(src))
		copy(wins[i], src)
	}
	return g, wins
}

func unsafePointer(x []int16) unsafe.Pointer { return unsafe.Pointer(&x[0]) }

// BenchmarkGPUPreprocess times the device work of one NP1 window (sums
// and means, CAR, forward and backward high-pass, whitening) with CUDA
// events between the stages, uploading from pinned memory before each
// window, for the default configuration and for each kernel variant.
// Metrics are milliseconds per window on the device, total and by stage.
func BenchmarkGPUPreprocess(b *testing.B) {
	d := defaultGPUConfig
	with := func(f func(c *gpuConfig)) gpuConfig {
		c := d
		f(&c)
		return c
	}
	for _, tc := range []struct {
		name        string
		white, band bool // whiten; by a local (banded) operator
		cfg         gpuConfig
	}{
		{"default", true, false, d},
		{"band-whiten", true, true, d},
		{"band-whiten-one-group", true, true, with(func(c *gpuConfig) { c.whiteRows = -1 })},
		{"chunk256", false, false, with(func(c *gpuConfig) { c.chunk = 256 })},
		{"chunk384", false, false, with(func(c *gpuConfig) { c.chunk = 384 })},
		{"tail1e-10", false, false, with(func(c *gpuConfig) { c.tailTol = 1e-10 })},
		{"no-whiten", false, false, d},
		{"dense-whiten", true, false, with(func(c *gpuConfig) { c.dense = true })},
		{"white-cols1", true, false, with(func(c *gpuConfig) { c.whiteCols = 1 })},
		{"white-cols2", true, false, with(func(c *gpuConfig) { c.whiteCols = 2 })},
		{"white-cols4", true, false, with(func(c *gpuConfig) { c.whiteCols = 4 })},
		{"car-cpw1-bits1", false, false, with(func(c *gpuConfig) { c.carCPW, c.carBits = 1, 1 })},
		{"car-cpw2-bits1", false, false, with(func(c *gpuConfig) { c.carCPW, c.carBits = 2, 1 })},
		{"car-cpw1-bits2", false, false, with(func(c *gpuConfig) { c.carCPW, c.carBits = 1, 2 })},
		{"car-cpw2-bits2", false, false, with(func(c *gpuConfig) { c.carCPW, c.carBits = 2, 2 })},
		{"chunk-auto", false, false, with(func(c *gpuConfig) { c.chunk = 0 })},
		{"chunk512", false, false, with(func(c *gpuConfig) { c.chunk = 512 })},
		{"chunk1024", false, false, with(func(c *gpuConfig) { c.chunk = 1024 })},
		{"chunk2048", false, false, with(func(c *gpuConfig) { c.chunk = 2048 })},
	} {
		b.Run(tc.name, func(b *testing.B) {
			g, wins := newBenchGPU(b, 1, tc.cfg)
			_, w := gpuBenchData()
			if tc.band {
				w = bandWhiteningK(rand.New(rand.NewPCG(73, 74)), 384, 32)
			}
			var total float64
			stage := make([]float64, len(stageNames))
			err := g.dev.Do(func(c *compute.Ctx) error {
				g.stages = make([]compute.Event, len(stageNames)+1)
				for i := range g.stages {
					var err error
					if g.stages[i], err = c.NewEvent(); err != nil {
						return err
					}
				}
				if tc.white {
					if err := g.SetWhitening(c, w); err != nil {
						return err
					}
				}
				run := func() error {
					if err := g.Upload(c, wins[0]); err != nil {
						return err
					}
					if _, err := g.Process(c); err != nil {
						return err
					}
					return c.Sync()
				}
				if err := run(); err != nil { // warm-up
					return err
				}
				b.ResetTimer()
				for range b.N {
					if err := run(); err != nil {
						return err
					}
					ms, err := c.Elapsed(g.stages[0], g.stages[len(stageNames)])
					if err != nil {
						return err
					}
					total += float64(ms)
					for i := range stageNames {
						ms, err := c.Elapsed(g.stages[i], g.stages[i+1])
						if err != nil {
							return err
						}
						stage[i] += float64(ms)
					}
				}
				return nil
			})
			if err != nil {
				b.Fatal(err)
			}
			n := float64(b.N)
			b.ReportMetric(total/n, "device-ms")
			b.ReportMetric(float64(g.hpL), "chunk")
			for i, s := range stageNames {
				b.ReportMetric(stage[i]/n, s+"-ms")
			}
		})
	}
}

// BenchmarkGPUUpload times the host-to-device copy of one NP1 window
// (46.3 MB of int16) from pinned memory with events, and from pageable Go
// memory by the wall clock; the metric is GB/s.
func BenchmarkGPUUpload(b *testing.B) {
	b.Run("pinned", func(b *testing.B) {
		g, wins := newBenchGPU(b, 1, defaultGPUConfig)
		bytes := len(wins[0]) * 2
		var total float64
		err := g.dev.Do(func(c *compute.Ctx) error {
			e0, err := c.NewEvent()
			if err != nil {
				return err
			}
			e1, err := c.NewEvent()
			if err != nil {
				return err
			}
			h, off, ok := g.pinnedOf(unsafePointer(wins[0]), bytes)
			if !ok {
				return fmt.Errorf("window not pinned")
			}
			b.SetBytes(int64(bytes))
			b.ResetTimer()
			for range b.N {
				c.Record(e0)
				if err := c.CopyHtoD(g.in[0].Ptr, h, off, bytes); err != nil {
					return err
				}
				c.Record(e1)
				if err := c.Sync(); err != nil {
					return err
				}
				ms, err := c.Elapsed(e0, e1)
				if err != nil {
					return err
				}
				total += float64(ms)
			}
			c.DestroyEvent(e0)
			return c.DestroyEvent(e1)
		})
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(bytes)/(total/float64(b.N)*1e-3)/1e9, "GB/s")
	})
	b.Run("pageable", func(b *testing.B) {
		g, _ := newBenchGPU(b, 1, defaultGPUConfig)
		src, _ := gpuBenchData()
		b.SetBytes(int64(len(src) * 2))
		err := g.dev.Do(func(c *compute.Ctx) error {
			t0 := time.Now()
			for range b.N {
				if err := compute.Upload(c, g.in[0].Ptr, src); err != nil {
					return err
				}
			}
			b.ReportMetric(float64(len(src)*2*b.N)/time.Since(t0).Seconds()/1e9, "GB/s")
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
	})
}

// BenchmarkGPUOverlap processes 8 NP1 windows from 8 pinned buffers (with
// whitening) two ways: serially (upload, process, wait, per window) and
// pipelined (the upload of window i+1 enqueued on the copy stream before
// the processing of window i). The metric is wall milliseconds per window.
func BenchmarkGPUOverlap(b *testing.B) {
	const windows = 8
	for _, pipelined := range []bool{false, true} {
		name := "serial"
		if pipelined {
			name = "pipelined"
		}
		b.Run(name, func(b *testing.B) {
			g, wins := newBenchGPU(b, windows, defaultGPUConfig)
			_, w := gpuBenchData()
			err := g.dev.Do(func(c *compute.Ctx) error {
				if err := g.SetWhitening(c, w); err != nil {
					return err
				}
				batch := func() error {
					if pipelined {
						if err := g.Upload(c, wins[0]); err != nil {
							return err
						}
					}
					for i := range windows {
						if pipelined && i+1 < windows {
							if err := g.Upload(c, wins[i+1]); err != nil {
								return err
							}
						}
						if !pipelined {
							if err := g.Upload(c, wins[i]); err != nil {
								return err
							}
						}
						if _, err := g.Process(c); err != nil {
							return err
						}
						if !pipelined {
							if err := c.Sync(); err != nil {
								return err
							}
						}
					}
					return c.SyncDevice()
				}
				if err := batch(); err != nil { // warm-up
					return err
				}
				b.ResetTimer()
				t0 := time.Now()
				for range b.N {
					if err := batch(); err != nil {
						return err
					}
				}
				b.ReportMetric(time.Since(t0).Seconds()*1e3/float64(b.N*windows), "ms/window")
				return nil
			})
			if err != nil {
				b.Fatal(err)
			}
		})
	}
}

// BenchmarkGPURun times Run end to end on one NP1 window with whitening,
// from and to pinned host buffers (upload, process, download of 92 MB of
// float32, wait).
func BenchmarkGPURun(b *testing.B) {
	g, wins := newBenchGPU(b, 1, defaultGPUConfig)
	_, w := gpuBenchData()
	dst, err := g.PinnedOutput()
	if err != nil {
		b.Fatal(err)
	}
	if err := g.Run(dst, wins[0], w); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for range b.N {
		if err := g.Run(dst, wins[0], w); err != nil {
			b.Fatal(err)
		}
	}
}
