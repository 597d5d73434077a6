package detect

import (
	"math"
	"math/rand/v2"
	"testing"
)

// The vector kernels against their Go references on random inputs, bit for
// bit: odd sizes, unaligned starts (slices from odd offsets), tails, and
// outputs poisoned with NaN so that anything left unwritten shows. Without
// the vector kernels (other architectures, -tags noasm, no AVX-512) the
// tests compare the Go kernels with themselves and only check the plumbing.

// withGo runs fn with the Go kernels selected.
func withGo(fn func()) {
	old := useAsm
	useAsm = false
	defer func() { useAsm = old }()
	fn()
}

func randComplex(rng *rand.Rand, n int) []complex128 {
	x := make([]complex128, n)
	for i := range x {
		x[i] = complex(rng.NormFloat64()*math.Exp(rng.NormFloat64()*4), rng.NormFloat64())
	}
	return x
}

func randF32(rng *rand.Rand, n int) []float32 {
	x := make([]float32, n)
	for i := range x {
		x[i] = float32(rng.NormFloat64() * math.Exp(rng.NormFloat64()*3))
	}
	return x
}

// sameC reports the first index where a and b differ in bits, NaNs of any
// payload or sign counting as equal (an infinite input may give NaNs
// whose sign differs: Go forms x·(−d), the kernels −(x·d)); −1 if none.
func sameC(a, b []complex128) int {
	eq := func(x, y float64) bool {
		return math.Float64bits(x) == math.Float64bits(y) || (x != x && y != y)
	}
	for i := range a {
		if !eq(real(a[i]), real(b[i])) || !eq(imag(a[i]), imag(b[i])) {
			return i
		}
	}
	return -1
}

// sameF reports the first index where a and b differ in bits, NaNs of any
// payload counting as equal; −1 if none.
func sameF(a, b []float32) int {
	for i := range a {
		if math.Float32bits(a[i]) != math.Float32bits(b[i]) && !(a[i] != a[i] && b[i] != b[i]) {
			return i
		}
	}
	return -1
}

func nanC(n int) []complex128 {
	x := make([]complex128, n)
	for i := range x {
		x[i] = complex(math.NaN(), math.NaN())
	}
	return x
}

func nanF(n int) []float32 {
	x := make([]float32, n)
	for i := range x {
		x[i] = float32(math.NaN())
	}
	return x
}

func TestKernelFFT(t *testing.T) {
	if !haveAsm {
		t.Log("no vector kernels in this build or on this CPU: Go against Go")
	}
	rng := rand.New(rand.NewPCG(19, 1))
	for _, n := range []int{4, 16, 64, 256, 1024, 4096} {
		f := newFFT4(n)
		for rep := range 3 {
			for _, off := range []int{0, 1} {
				buf := randComplex(rng, n+off)
				if rep == 2 {
					buf[off+n/3] = complex(math.Inf(1), 0)
				}
				x := buf[off:]
				a := append([]complex128(nil), x...)
				b := append([]complex128(nil), x...)
				f.forward(a)
				f.forwardGo(b)
				if i := sameC(a, b); i >= 0 {
					t.Fatalf("forward n %d: at %d %v, Go %v", n, i, a[i], b[i])
				}
				// The forward left in transpose16 order.
				if xt := append(nanC(off), x...)[off:]; fftForwardTVec(f, xt) {
					tb := make([]complex128, n)
					transpose16(tb, b)
					if i := sameC(xt, tb); i >= 0 {
						t.Fatalf("forward, transpose16, n %d: at %d %v, Go %v", n, i, xt[i], tb[i])
					}
				}
				f.inverse(a)
				f.inverseGo(b)
				if i := sameC(a, b); i >= 0 {
					t.Fatalf("inverse n %d: at %d %v, Go %v", n, i, a[i], b[i])
				}
				// The product fused into the inverse.
				s := randComplex(rng, n)
				p, q := nanC(n + off)[off:], nanC(n)
				if !mulInverseVec(f, p, a, s) {
					cmulGo(p, a, s)
					f.inverse(p)
				}
				cmulGo(q, b, s)
				f.inverseGo(q)
				if i := sameC(p, q); i >= 0 {
					t.Fatalf("product and inverse n %d: at %d %v, Go %v", n, i, p[i], q[i])
				}
				// The product, the inverse in the split layout and the
				// rounding to float32, for output lengths with and
				// without a tail, into NaN-poisoned rows one longer.
				for _, nout := range []int{1, 7, 8, 9, n - 60, n - 1, n} {
					if nout < 1 || nout > n {
						continue
					}
					for _, pair := range []bool{true, false} {
						da, db := nanF(nout + 1 + off)[off:], nanF(nout + 1 + off)[off:]
						ga, gb := nanF(nout+1), nanF(nout+1)
						dbo, gbo := db[:nout], gb[:nout]
						if !pair {
							dbo, gbo = nil, nil
						}
						ps := nanC(n + off)[off:]
						// The factors in transpose16 order, as
						// fftForwardTVec leaves the forward.
						zt, st := make([]complex128, n), make([]complex128, n)
						transpose16(zt, a)
						transpose16(st, s)
						if !mulInverseCvtVec(f, da[:nout], dbo, ps, zt, st) {
							cmulGo(ps, a, s)
							f.inverse(ps)
							cvtGo(da[:nout], dbo, ps[:nout])
						}
						cvtGo(ga[:nout], gbo, q[:nout])
						if j := sameF(da, ga); j >= 0 {
							t.Fatalf("split inverse n %d nout %d: real at %d %g, Go %g", n, nout, j, da[j], ga[j])
						}
						if j := sameF(db, gb); pair && j >= 0 {
							t.Fatalf("split inverse n %d nout %d: imag at %d %g, Go %g", n, nout, j, db[j], gb[j])
						}
					}
				}
			}
		}
	}
}

func TestKernelCmulCvt(t *testing.T) {
	rng := rand.New(rand.NewPCG(19, 2))
	for _, n := range []int{4, 8, 12, 964, 1024} {
		for _, off := range []int{0, 1, 3} {
			z := randComplex(rng, n+off)[off:]
			s := randComplex(rng, n+off)[off:]
			p, q := nanC(n + off)[off:], nanC(n)
			if !cmulVec(p, z, s) {
				cmulGo(p, z, s)
			}
			cmulGo(q, z, s)
			if i := sameC(p, q); i >= 0 {
				t.Fatalf("cmul n %d off %d: at %d %v, Go %v", n, off, i, p[i], q[i])
			}
		}
	}
	for _, n := range []int{1, 7, 8, 9, 17, 964, 1000} {
		for _, off := range []int{0, 1, 5} {
			p := randComplex(rng, n+off)[off:]
			for _, pair := range []bool{true, false} {
				a, b := nanF(n + off)[off:], nanF(n + off)[off:]
				ga, gb := nanF(n), nanF(n)
				if !pair {
					b, gb = nil, nil
				}
				i := cvtVec(a, b, p)
				var bt []float32
				if pair {
					bt = b[i:]
				}
				cvtGo(a[i:], bt, p[i:])
				cvtGo(ga, gb, p)
				if j := sameF(a, ga); j >= 0 {
					t.Fatalf("cvt real n %d: at %d %g, Go %g", n, j, a[j], ga[j])
				}
				if pair {
					if j := sameF(b, gb); j >= 0 {
						t.Fatalf("cvt imag n %d: at %d %g, Go %g", n, j, b[j], gb[j])
					}
				}
			}
		}
	}
}

func TestKernelMaxSqBlockMax(t *testing.T) {
	rng := rand.New(rand.NewPCG(19, 3))
	for _, W := range []int{1, 8, 15, 16, 17, 33, 100, 1928} {
		for _, K := range []int{1, 3, 6} {
			for _, off := range []int{0, 1} {
				b := randF32(rng, K*W+off)[off:]
				if W > 5 {
					b[3] = float32(math.NaN())
					b[(K-1)*W+W-1] = float32(math.Inf(-1))
				}
				m, g := nanF(W + off)[off:], nanF(W)
				i := maxSqVec(m, b, K, W)
				maxSqGo(m[i:], b[i:], K, W)
				maxSqGo(g, b, K, W)
				if j := sameF(m, g); j >= 0 {
					t.Fatalf("maxSq W %d K %d: at %d %g, Go %g", W, K, j, m[j], g[j])
				}
				// Block maxima of the squares and of raw values
				// (negative, ±0, NaN).
				nb := (W + boundBlock - 1) / boundBlock
				for _, src := range [][]float32{m, b[:W]} {
					if W > 9 {
						src[9], src[10] = float32(math.Copysign(0, -1)), 0
					}
					mb, gb := nanF(nb + off)[off:], nanF(nb)
					j := blockMaxVec(mb, src)
					blockMaxGo(mb[j:], src[j*boundBlock:])
					blockMaxGo(gb, src)
					if k := sameF(mb, gb); k >= 0 {
						t.Fatalf("blockMax W %d: at %d %g, Go %g", W, k, mb[k], gb[k])
					}
				}
			}
		}
	}
}

func TestKernelRowSumResp(t *testing.T) {
	rng := rand.New(rand.NewPCG(19, 4))
	for _, n := range []int{1, 3, 8, 15, 16, 17, 241} {
		for _, nr := range []int{1, 2, 10} {
			src := randF32(rng, 20*n+7)
			offs := make([]int, nr)
			for j := range offs {
				offs[j] = rng.IntN(19*n + 7)
			}
			d, g := nanF(n), nanF(n)
			if !rowSumVec(d, src, offs) {
				rowSumGo(d, src, offs)
			}
			rowSumGo(g, src, offs)
			if i := sameF(d, g); i >= 0 {
				t.Fatalf("rowSum n %d rows %d: at %d %g, Go %g", n, nr, i, d[i], g[i])
			}
			d = nanF(n)
			if !rowSumOffs(d, src, newRowOffs(offs)) {
				rowSumGo(d, src, offs)
			}
			if i := sameF(d, g); i >= 0 {
				t.Fatalf("rowSumOffs n %d rows %d: at %d %g, Go %g", n, nr, i, d[i], g[i])
			}
		}
	}
	for _, K := range []int{1, 5, 6, 7, 8, 12, 13} {
		for _, S := range []int{1, 5} {
			for _, n := range []int{1, 5, 8} {
				for _, nc := range []int{1, 10} {
					W := 37
					C := 12
					b := randF32(rng, C*K*W)
					if n > 2 {
						b[rng.IntN(len(b))] = float32(math.NaN())
					}
					wt := randF32(rng, nc*S)
					offs := make([]int, nc)
					for j := range offs {
						offs[j] = rng.IntN(C)*K*W + rng.IntN(W-n+1)
					}
					// Thresholds that keep every shape, some, or none.
					for _, th := range []struct {
						thr2    float32
						noPrune bool
					}{{0, false}, {30, false}, {1e4, false}, {float32(math.Inf(1)), false}, {float32(math.Inf(1)), true}} {
						sz := (K + K%2) * respRows * respStride
						d, g := nanF(sz), nanF(sz)
						if !respOffs(d, b, newRowOffs(offs), K, S, W, n, wt, th.thr2, th.noPrune) {
							respGo(d, b, offs, K, S, W, n, wt, th.thr2, th.noPrune)
						}
						respGo(g, b, offs, K, S, W, n, wt, th.thr2, th.noPrune)
						for k := range K {
							for r := range respRows {
								row := (k*respRows + r) * respStride
								if i := sameF(d[row:row+n], g[row:row+n]); i >= 0 {
									t.Fatalf("resp K %d S %d n %d nc %d thr2 %g noPrune %v: shape %d row %d col %d: %g, Go %g",
										K, S, n, nc, th.thr2, th.noPrune, k, r, i, d[row+i], g[row+i])
								}
							}
							if r1 := g[(k*respRows+1)*respStride]; th.thr2 == float32(math.Inf(1)) && (r1 == r1) == !th.noPrune {
								t.Fatalf("resp thr2 %g noPrune %v: shape %d responses %g", th.thr2, th.noPrune, k, r1)
							}
						}
					}
				}
			}
		}
	}
}

// TestDetectVectorMatchesGo runs every detector case with the vector and
// the Go kernels and requires the same spikes and counts. It switches the
// kernels for the whole package (withGo), so it must not run in parallel
// with other tests: a detector running beside it would mix the two.
func TestDetectVectorMatchesGo(t *testing.T) {
	if !haveAsm {
		t.Skip("no vector kernels in this build or on this CPU")
	}
	for _, c := range detCases() {
		for _, noPrune := range []bool{false, true} {
			prm, g, tm, x, T := buildCase(c, 5)
			run := func() (Spikes, Stats) {
				var s Spikes
				d := newCPUDetector(g, tm, T, prm)
				d.setChunk(c.chunk, c.workers)
				d.noPrune = noPrune
				poison(d)
				st := d.Detect(&s, x, 1000, c.owned)
				st.ConvTime, st.EvalTime, st.SuppressTime = 0, 0, 0
				return s, st
			}
			a, sa := run()
			var b Spikes
			var sb Stats
			withGo(func() { b, sb = run() })
			if sa != sb {
				t.Errorf("%s noPrune %v: stats %+v, Go %+v", c.name, noPrune, sa, sb)
			}
			if a.Len() == 0 {
				t.Fatalf("%s: no spikes: bad test data", c.name)
			}
			same := a.Len() == b.Len() && len(a.Features) == len(b.Features)
			for i := 0; same && i < a.Len(); i++ {
				same = a.Sample[i] == b.Sample[i] && a.Center[i] == b.Center[i] && a.Template[i] == b.Template[i] &&
					a.Sign[i] == b.Sign[i] && math.Float32bits(a.Amplitude[i]) == math.Float32bits(b.Amplitude[i]) &&
					math.Float32bits(a.X[i]) == math.Float32bits(b.X[i]) && math.Float32bits(a.Y[i]) == math.Float32bits(b.Y[i])
			}
			for i := 0; same && i < len(a.Features); i++ {
				same = math.Float32bits(a.Features[i]) == math.Float32bits(b.Features[i])
			}
			if !same {
				t.Errorf("%s noPrune %v: %d spikes with the vector kernels, %d with Go; they differ", c.name, noPrune, a.Len(), b.Len())
			}
		}
	}
}

func TestKernelChoose(t *testing.T) {
	rng := rand.New(rand.NewPCG(19, 6))
	// Small integers make ties in |A| and in the bounds common.
	for rep := range 3000 {
		K := 1 + rep%7
		resp := make([]float32, (K+K%2)*respRows*respStride)
		for k := range K {
			for i := range respStride {
				row := resp[k*respRows*respStride+i:]
				row[0] = float32(rng.IntN(28)-4) / 2
				switch rng.IntN(30) {
				case 0, 1:
					row[0] = float32(math.NaN())
				case 2:
					row[0] = float32(math.Inf(1))
				}
				row[respStride] = float32(rng.IntN(9) - 4)
				switch rng.IntN(40) {
				case 0:
					row[respStride] = float32(math.Inf(1 - 2*rng.IntN(2)))
				case 1:
					row[respStride] = float32(math.NaN())
				case 2:
					// best·best overflows to +Inf.
					row[respStride] = float32(3e19 * float64(1-2*rng.IntN(2)))
				case 3:
					row[respStride] = float32(math.Copysign(0, -1))
				}
				row[2*respStride] = float32(rng.IntN(6) - 1)
			}
		}
		// thr2 < 0 as well: then the skip test decides for u ≤ 0 too.
		thr2, c := float32(rng.IntN(13)-2)/2, float32(1-boundSlack)
		for _, noPrune := range []bool{false, true} {
			a, b := nanF(chooseRows*respStride), nanF(chooseRows*respStride)
			if !chooseVec(a, resp, K, thr2, c, noPrune) {
				chooseGo(a, resp, K, thr2, c, noPrune)
			}
			chooseGo(b, resp, K, thr2, c, noPrune)
			if i := sameF(a, b); i >= 0 {
				t.Fatalf("K %d noPrune %v: out[%d] = %g, Go %g", K, noPrune, i, a[i], b[i])
			}
		}
	}
}

func TestKernelPassBits(t *testing.T) {
	rng := rand.New(rand.NewPCG(19, 8))
	for _, n := range []int{1, 15, 16, 17, 63, 64, 65, 100, 241} {
		for _, off := range []int{0, 1} {
			v := randF32(rng, n+off)[off:]
			thr2 := float32(0.5)
			v[0] = thr2 // equal: not above
			if n > 3 {
				v[1], v[2], v[3] = float32(math.NaN()), float32(math.Inf(1)), float32(math.Inf(-1))
			}
			nw := (n + 63) / 64
			a, g := make([]uint64, nw+1), make([]uint64, nw+1)
			for i := range a {
				a[i], g[i] = ^uint64(0), ^uint64(0) // poisoned
			}
			if !passBitsVec(a[:nw], v, thr2) {
				passBitsGo(a[:nw], v, thr2)
			}
			passBitsGo(g[:nw], v, thr2)
			for i := range a {
				if a[i] != g[i] {
					t.Fatalf("passBits n %d: word %d %#x, Go %#x", n, i, a[i], g[i])
				}
			}
			for j, x := range v {
				if got := g[j/64]>>(j%64)&1 == 1; got != (x > thr2) {
					t.Fatalf("passBitsGo n %d: bit %d is %v for %g", n, j, got, x)
				}
			}
		}
	}
}

func TestKernelFill(t *testing.T) {
	rng := rand.New(rand.NewPCG(19, 7))
	for _, n := range []int{1, 7, 8, 9, 23, 1024} {
		for _, off := range []int{0, 1, 3} {
			a, b := randF32(rng, n+off)[off:], randF32(rng, n+off)[off:]
			a[0] = float32(math.Copysign(0, -1))
			for _, pair := range []bool{true, false} {
				bb := b
				if !pair {
					bb = nil
				}
				z, g := nanC(n + off)[off:], nanC(n)
				j := fillVec(z, a, bb)
				rest := bb
				if rest != nil {
					rest = rest[j:]
				}
				fillGo(z[j:], a[j:], rest)
				fillGo(g, a, bb)
				if i := sameC(z, g); i >= 0 {
					t.Fatalf("fill n %d pair %v: at %d %v, Go %v", n, pair, i, z[i], g[i])
				}
			}
		}
	}
}

// TestKernelsAVX2 runs the kernel tests again with the AVX2 kernels on a
// machine that has AVX-512, so that both widths are compared with the Go
// code.
func TestKernelsAVX2(t *testing.T) {
	if !haveAsm {
		t.Skip("no vector kernels in this build or on this CPU")
	}
	old := useAVX512
	useAVX512 = false
	defer func() { useAVX512 = old }()
	for name, f := range map[string]func(*testing.T){
		"FFT": TestKernelFFT, "CmulCvt": TestKernelCmulCvt, "MaxSqBlockMax": TestKernelMaxSqBlockMax,
		"RowSumResp": TestKernelRowSumResp, "Choose": TestKernelChoose,
		"Fill": TestKernelFill, "PassBits": TestKernelPassBits, "FinePass": TestKernelFinePass, "DetectVectorMatchesGo": TestDetectVectorMatchesGo,
	} {
		t.Run(name, f)
	}
}

func TestKernelFinePass(t *testing.T) {
	rng := rand.New(rand.NewPCG(19, 9))
	thr2 := float32(0.9)
	for _, W := range []int{1, 7, 8, 9, 63, 64, 65, 241, 600} {
		for _, nrows := range []int{1, 2, 5, 13} {
			for _, noPrune := range []bool{false, true} {
				nb := (W + boundBlock - 1) / boundBlock
				stride := W + 3
				m := randF32(rng, nrows*stride+5)
				for i := range m {
					m[i] = m[i] * m[i]
				}
				m[0], m[1], m[2], m[3] = float32(math.NaN()), float32(math.Inf(1)), thr2, float32(math.Copysign(0, -1))
				m[len(m)-1] = float32(math.Inf(-1))
				offs := make([]int, nrows)
				for j := range offs {
					offs[j] = ((j * 7) % nrows) * stride
					if j == nrows-1 {
						offs[j] += 5 // unaligned, up to the end of m
					}
				}
				if nrows == 1 {
					m[offs[0]+0] = thr2 // equal: not above
				}
				nw := (nb + 63) / 64
				for _, density := range []float64{0, 0.3, 1} {
					pass := make([]uint64, nw)
					for j := range nb {
						if rng.Float64() < density {
							pass[j/64] |= 1 << (j % 64)
						}
					}
					ab, ac := make([]int32, nb+1), make([]uint32, nb+1)
					gb, gc := make([]int32, nb+1), make([]uint32, nb+1)
					for i := range ab {
						ab[i], ac[i], gb[i], gc[i] = -7, 0xdead, -7, 0xdead
					}
					g := finePassGo(gb[:nb], gc[:nb], pass, m, offs, W, thr2, noPrune)
					a, ok := finePassVec(ab[:nb], ac[:nb], pass, m, newRowOffs(offs), W, thr2, noPrune)
					if !ok {
						if useAsm && useAVX512 {
							t.Fatalf("finePassVec did nothing")
						}
						continue
					}
					if a != g {
						t.Fatalf("finePass W %d rows %d noPrune %v: %d blocks, Go %d", W, nrows, noPrune, a, g)
					}
					for i := range a {
						if ab[i] != gb[i] || ac[i] != gc[i] {
							t.Fatalf("finePass W %d rows %d: entry %d (%d, %#x), Go (%d, %#x)", W, nrows, i, ab[i], ac[i], gb[i], gc[i])
						}
					}
					if ab[nb] != -7 || ac[nb] != 0xdead {
						t.Fatalf("finePass W %d: wrote past nb", W)
					}
					// The Go kernel against a direct count.
					want := 0
					for j := range nb {
						if pass[j/64]>>(j%64)&1 == 0 {
							continue
						}
						var c uint32
						for ii := 0; ii < boundBlock && j*boundBlock+ii < W; ii++ {
							i := j*boundBlock + ii
							s := m[offs[0]+i]
							for _, o := range offs[1:] {
								s += m[o+i]
							}
							if noPrune || s > thr2 {
								c |= 1 << ii
							}
						}
						if c != 0 {
							if gb[want] != int32(j) || gc[want] != c {
								t.Fatalf("finePassGo W %d: entry %d (%d, %#x), want (%d, %#x)", W, want, gb[want], gc[want], j, c)
							}
							want++
						}
					}
					if want != g {
						t.Fatalf("finePassGo W %d: %d blocks, want %d", W, g, want)
					}
				}
			}
		}
	}
}
