package cuda

import (
	"testing"
)

// benchDo runs f inside the test device's Do, failing the benchmark on
// error.
func benchDo(b *testing.B, f func(c *Ctx) error) {
	b.Helper()
	if err := device(b).Do(f); err != nil {
		b.Fatal(err)
	}
}

const copyBytes = 256 << 20

// benchCopy times copies of copyBytes between a pinned (or pageable) host
// buffer and the device; b.SetBytes makes MB/s the bandwidth.
func benchCopy(b *testing.B, up, pinned bool) {
	benchDo(b, func(c *Ctx) error {
		d, err := c.Alloc(copyBytes)
		if err != nil {
			return err
		}
		defer c.Free(d)
		h, err := c.AllocHost(copyBytes)
		if err != nil {
			return err
		}
		defer c.FreeHost(h)
		page := make([]byte, copyBytes)
		one := func() error {
			switch {
			case up && pinned:
				return c.CopyHtoD(d.Ptr, h, 0, copyBytes)
			case pinned:
				return c.CopyDtoH(h, 0, d.Ptr, copyBytes)
			case up:
				return Upload(c, d.Ptr, page)
			default:
				return Download(c, page, d.Ptr)
			}
		}
		if err := one(); err != nil { // warm-up
			return err
		}
		if err := c.Sync(); err != nil {
			return err
		}
		b.SetBytes(copyBytes)
		b.ResetTimer()
		for range b.N {
			if err := one(); err != nil {
				return err
			}
		}
		err = c.Sync()
		b.StopTimer()
		return err
	})
}

// BenchmarkUploadPinned: host→device from cuMemHostAlloc memory.
func BenchmarkUploadPinned(b *testing.B) { benchCopy(b, true, true) }

// BenchmarkDownloadPinned: device→host into cuMemHostAlloc memory.
func BenchmarkDownloadPinned(b *testing.B) { benchCopy(b, false, true) }

// BenchmarkUploadPageable: host→device from an ordinary Go slice.
func BenchmarkUploadPageable(b *testing.B) { benchCopy(b, true, false) }

// BenchmarkDownloadPageable: device→host into an ordinary Go slice.
func BenchmarkDownloadPageable(b *testing.B) { benchCopy(b, false, false) }

// BenchmarkCopyDtoD: device-to-device copy (SetBytes counts read + write).
func BenchmarkCopyDtoD(b *testing.B) {
	benchDo(b, func(c *Ctx) error {
		const n = 1 << 30
		x, err := c.Alloc(n)
		if err != nil {
			return err
		}
		defer c.Free(x)
		y, err := c.Alloc(n)
		if err != nil {
			return err
		}
		defer c.Free(y)
		if err := c.CopyDtoD(y.Ptr, x.Ptr, n); err != nil {
			return err
		}
		if err := c.Sync(); err != nil {
			return err
		}
		b.SetBytes(2 * n)
		b.ResetTimer()
		for range b.N {
			if err := c.CopyDtoD(y.Ptr, x.Ptr, n); err != nil {
				return err
			}
		}
		err = c.Sync()
		b.StopTimer()
		return err
	})
}

// BenchmarkLaunchPrepared: host cost of one Prepared launch of an empty
// kernel (launches queued back to back, one synchronisation at the end).
func BenchmarkLaunchPrepared(b *testing.B) {
	benchDo(b, func(c *Ctx) error {
		m, err := c.Compile("test.cu", testKernels)
		if err != nil {
			return err
		}
		f, err := m.Function("empty")
		if err != nil {
			return err
		}
		p := f.Prepare(D1(1), D1(32), 0)
		defer p.Free()
		b.ReportAllocs()
		b.ResetTimer()
		for range b.N {
			if err := p.Launch(c); err != nil {
				return err
			}
		}
		err = c.Sync()
		b.StopTimer()
		return err
	})
}

// BenchmarkLaunchGraph: one op is a launch of a captured graph of 100
// empty kernels; ns/kernel is the cost per kernel.
func BenchmarkLaunchGraph(b *testing.B) {
	benchDo(b, func(c *Ctx) error {
		m, err := c.Compile("test.cu", testKernels)
		if err != nil {
			return err
		}
		f, err := m.Function("empty")
		if err != nil {
			return err
		}
		p := f.Prepare(D1(1), D1(32), 0)
		defer p.Free()
		const per = 100
		g, err := c.Capture(func(c *Ctx) error {
			for range per {
				if err := p.Launch(c); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return err
		}
		defer c.DestroyGraph(g)
		if err := c.LaunchGraph(g); err != nil { // warm-up
			return err
		}
		if err := c.Sync(); err != nil {
			return err
		}
		b.ResetTimer()
		for range b.N {
			if err := c.LaunchGraph(g); err != nil {
				return err
			}
		}
		err = c.Sync()
		b.StopTimer()
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*per), "ns/kernel")
		return err
	})
}

// BenchmarkSgemmStridedBatchedGram: 15 × [384×4096]·[4096×384] fp32 Gram
// products, gemm(T,N), as gpu.md §6 (18.12 GFLOP); reports TFLOP/s.
func BenchmarkSgemmStridedBatchedGram(b *testing.B) {
	const C, K, S = 384, 4096, 15
	benchDo(b, func(c *Ctx) error {
		x, err := c.Alloc(4 * C * K * S)
		if err != nil {
			return err
		}
		defer c.Free(x)
		y, err := c.Alloc(4 * C * C * S)
		if err != nil {
			return err
		}
		defer c.Free(y)
		if err := c.Memset32(x.Ptr, 0x3f800000, C*K*S); err != nil {
			return err
		}
		one := func() error {
			return c.SgemmStridedBatched(Trans, NoTrans, C, C, K, 1, x.Ptr, K, C*K, x.Ptr, K, C*K, 0, y.Ptr, C, C*C, S)
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
		b.ReportMetric(2*C*C*K*S/sec/1e12, "TFLOP/s")
		return err
	})
}

// BenchmarkGram384x60000 times raw cuBLAS Gram products of one contiguous
// 384 × 60000 float32 window (no copy, no finish): one SGEMM (T,N), one
// SSYRK (upper), and TF32 GemmEx; TFLOP/s counts the full GEMM's
// 2·384²·60000 = 17.69 GFLOP for each.
func BenchmarkGram384x60000(b *testing.B) {
	const C, K = 384, 60000
	for _, v := range []string{"sgemm", "ssyrk", "tf32", "dgemm", "dsyrk"} {
		b.Run(v, func(b *testing.B) {
			benchDo(b, func(c *Ctx) error {
				x, err := c.Alloc(8 * C * K)
				if err != nil {
					return err
				}
				defer c.Free(x)
				y, err := c.Alloc(8 * C * C)
				if err != nil {
					return err
				}
				defer c.Free(y)
				if err := c.Memset32(x.Ptr, 0x3f800000, 2*C*K); err != nil {
					return err
				}
				one := func() error {
					switch v {
					case "sgemm":
						return c.Sgemm(Trans, NoTrans, C, C, K, 1, x.Ptr, K, x.Ptr, K, 0, y.Ptr, C)
					case "ssyrk":
						return c.Ssyrk(Upper, Trans, C, K, 1, x.Ptr, K, 0, y.Ptr, C)
					case "tf32":
						return c.GemmStridedBatchedEx(Trans, NoTrans, C, C, K, 1, x.Ptr, R32F, K, 0, x.Ptr, R32F, K, 0, 0, y.Ptr, R32F, C, 0, 1, Compute32FFastTF32)
					case "dgemm":
						return c.Dgemm(Trans, NoTrans, C, C, K, 1, x.Ptr, K, x.Ptr, K, 0, y.Ptr, C)
					default:
						return c.Dsyrk(Upper, Trans, C, K, 1, x.Ptr, K, 0, y.Ptr, C)
					}
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
				b.ReportMetric(sec*1e3, "ms/op")
				b.ReportMetric(2*C*C*K/sec/1e12, "TFLOP/s")
				return err
			})
		})
	}
}
