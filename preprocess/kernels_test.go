package preprocess

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// The vector conversion and median against the Go code, bit for bit. Without
// the kernels (other architectures, -tags noasm) the tests check the
// plumbing only.

func TestKernelConvert(t *testing.T) {
	rng := rand.New(rand.NewPCG(19, 11))
	for _, n := range []int{1, 7, 15, 16, 17, 383, 384} {
		for _, off := range []int{0, 1} {
			src := make([]int16, n+off)[off:]
			mean := make([]float32, n+off)[off:]
			for i := range src {
				src[i] = int16(rng.IntN(65536) - 32768)
				mean[i] = float32(rng.NormFloat64() * 100)
			}
			src[0], mean[0] = 0, 0
			for _, sign := range []float32{1, -1} {
				a, b := make([]float32, n+off)[off:], make([]float32, n)
				for i := range a {
					a[i], b[i] = float32(math.NaN()), float32(math.NaN())
				}
				if !convertVec(a, src, mean, sign) {
					for i := range a {
						a[i] = sign*float32(src[i]) - mean[i]
					}
				}
				for i := range b {
					b[i] = sign*float32(src[i]) - mean[i]
				}
				for i := range a {
					if math.Float32bits(a[i]) != math.Float32bits(b[i]) {
						t.Fatalf("n %d sign %g: dst[%d] = %g, Go %g", n, sign, i, a[i], b[i])
					}
				}
			}
		}
	}
}

func TestKernelLowerMedian(t *testing.T) {
	rng := rand.New(rand.NewPCG(19, 12))
	for _, n := range []int{1, 2, 3, 16, 17, 33, 100, 383, 384, 385} {
		for rep := range 30 {
			x := make([]float32, n)
			for i := range x {
				switch rep % 3 {
				case 0:
					x[i] = float32(rng.NormFloat64())
				case 1: // many ties
					x[i] = float32(rng.IntN(5) - 2)
				default: // counts minus a mean, as referenceRange makes
					x[i] = float32(rng.IntN(200)-100) - 0.25
				}
			}
			orig := append([]float32(nil), x...)
			a, b := make([]float32, n+16), make([]float32, n+16)
			got, ok := lowerMedianVec(x, a, b)
			want := LowerMedian(append([]float32(nil), x...))
			for i := range x {
				if math.Float32bits(x[i]) != math.Float32bits(orig[i]) {
					t.Fatalf("n %d: lowerMedianVec changed its input", n)
				}
			}
			if ok && math.Float32bits(got) != math.Float32bits(want) {
				t.Fatalf("n %d rep %d: median %g, Go %g", n, rep, got, want)
			}
			if !ok && useAsm && (avx512 || havePOPCNT) && want != 0 {
				t.Fatalf("n %d rep %d: no vector median for %g", n, rep, want)
			}
		}
	}
}

// TestRunVectorMatchesGo runs whole windows with and without the kernels:
// CAR or not, inverted or not, contiguous and shuffled channel maps, zero
// means (so that −0 and +0 meet in the median).
func TestRunVectorMatchesGo(t *testing.T) {
	rng := rand.New(rand.NewPCG(19, 13))
	for _, cmap := range [][]int{iota(20), {3, 1, 0, 2, 4, 5, 6, 9, 8, 7, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19}} {
		for _, car := range []bool{true, false} {
			for _, inv := range []bool{false, true} {
				for _, zero := range []bool{false, true} {
					p := small(cmap, 21, 300, 61)
					p.DoCAR, p.InvertSign = car, inv
					name := fmt.Sprintf("map%d_car%v_inv%v_zero%v", cmap[0], car, inv, zero)
					src := randWindow(rng, p.T(), p.NChanFile, false)
					if zero {
						for i := range src {
							// Most samples zero, and file rows 1–12
							// entirely: their means are 0, so with
							// Invert they give −0 beside +0.
							if rng.IntN(3) > 0 || (i%p.NChanFile >= 1 && i%p.NChanFile <= 12) {
								src[i] = 0
							}
						}
					}
					run := func() []float32 {
						pp, err := newCPU(p)
						if err != nil {
							t.Fatal(err)
						}
						dst := nanWindow(len(cmap) * p.T())
						pp.Run(dst, src, nil)
						return dst
					}
					a := run()
					old := useAsm
					useAsm = false
					b := run()
					useAsm = old
					for i := range a {
						if math.Float32bits(a[i]) != math.Float32bits(b[i]) {
							t.Fatalf("%s: dst[%d] = %g, Go %g", name, i, a[i], b[i])
						}
					}
				}
			}
		}
	}
}

// TestKernelHighpassLanes filters hpLanes rows at once with the vector
// kernels (AVX-512 and, forced, AVX2) and compares each with Apply, bit
// for bit: odd lengths, random rows, an all-zero row, a row of −0 and
// one of a few values between zeros, so that signed zeros meet the
// recurrences.
func TestKernelHighpassLanes(t *testing.T) {
	rng := rand.New(rand.NewPCG(19, 14))
	for _, n := range []int{1999, 2345, 4097, 60122} {
		f, err := NewFilter(30000, 300, 3, n)
		if err != nil {
			t.Fatal(err)
		}
		if !f.canLanes() {
			if useHPAsm {
				t.Fatalf("n %d: no vector path (context %d)", n, f.Context())
			}
			continue
		}
		var src [hpLanes][]float32
		for k := range src {
			src[k] = randRow(rng, n)
		}
		src[3] = make([]float32, n)
		src[5] = make([]float32, n)
		for i := range src[5] {
			src[5][i] = float32(math.Copysign(0, -1))
		}
		src[7] = make([]float32, n)
		for range 5 {
			src[7][rng.IntN(n)] = float32(rng.IntN(7) - 3)
		}
		want := make([][]float32, hpLanes)
		for k := range want {
			want[k] = make([]float32, n)
			f.Apply(want[k], src[k])
		}
		old := hpAVX512
		for _, avx512 := range []bool{true, false} {
			if avx512 && !old {
				continue
			}
			hpAVX512 = avx512
			block := make([]float32, 0, hpLanes*n)
			for k := range src {
				block = append(block, src[k]...)
			}
			f.applyLanes(block)
			for k := range src {
				for i, v := range block[k*n : (k+1)*n] {
					if math.Float32bits(v) != math.Float32bits(want[k][i]) {
						hpAVX512 = old
						t.Fatalf("n %d avx512 %v: row %d [%d] = %g, Apply %g", n, avx512, k, i, v, want[k][i])
					}
				}
			}
		}
		hpAVX512 = old
	}
}

// TestKernelCentre compares the vector centring transpose with the Go
// loop of referenceRange, bit for bit, on channel counts around
// multiples of 16 and random columns, medians and signed zeros.
func TestKernelCentre(t *testing.T) {
	rng := rand.New(rand.NewPCG(19, 15))
	for _, C := range []int{1, 15, 16, 17, 33, 47, 389} {
		T := 3*blockT + 5
		cols := make([]float32, blockT*C)
		var med [blockT]float32
		for i := range cols {
			cols[i] = float32(rng.NormFloat64() * 50)
			if rng.IntN(9) == 0 {
				cols[i] = float32(math.Copysign(0, float64(rng.IntN(2)*2-1)))
			}
		}
		for k := range med {
			med[k] = float32(rng.IntN(5) - 2)
		}
		med[3] = float32(math.Copysign(0, -1))
		got, want := nanRow(C*T), nanRow(C*T)
		t0 := blockT + 3
		n := centreVec(got[t0:], T, cols, C, &med)
		if n != 0 && (!useAsm || (avx512 && n != C&^15) || (!avx512 && n != C&^7)) {
			t.Fatalf("C %d: centreVec did %d channels", C, n)
		}
		for i := range C {
			for k := range blockT {
				if i >= n {
					got[i*T+t0+k] = cols[k*C+i] - med[k]
				}
				want[i*T+t0+k] = cols[k*C+i] - med[k]
			}
		}
		for i := range got {
			if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
				t.Fatalf("C %d: out[%d] = %g, Go %g", C, i, got[i], want[i])
			}
		}
	}
}

// TestKernelSumRows compares the vector int16 column sums with int64
// sums in Go, on odd channel counts, at the extremes of int16 and over
// the longest run sumRowsVec takes.
func TestKernelSumRows(t *testing.T) {
	rng := rand.New(rand.NewPCG(19, 16))
	for _, tc := range []struct{ cf, rows int }{{1, 5}, {16, 3}, {17, 7}, {385, 61}, {33, 1 << 15}} {
		src := make([]int16, tc.cf*tc.rows)
		for i := range src {
			switch rng.IntN(3) {
			case 0:
				src[i] = int16(rng.IntN(65536) - 32768)
			case 1:
				src[i] = -32768
			default:
				src[i] = 32767
			}
		}
		acc := make([]int32, tc.cf)
		n := sumRowsVec(acc, src, tc.cf, tc.rows)
		if n != 0 && (!useAsm || n != tc.cf&^15) {
			t.Fatalf("cf %d: sumRowsVec did %d channels", tc.cf, n)
		}
		for c := range n {
			var s int64
			for r := range tc.rows {
				s += int64(src[r*tc.cf+c])
			}
			if int64(acc[c]) != s {
				t.Fatalf("cf %d rows %d: sum of channel %d = %d, Go %d", tc.cf, tc.rows, c, acc[c], s)
			}
		}
	}
}

// TestKernelsAVX2 runs the kernel tests and the whole-window comparison
// again with the AVX2 kernels on a machine that has AVX-512.
func TestKernelsAVX2(t *testing.T) {
	if !useAsm || !avx512 {
		t.Skip("no AVX-512 to switch off: the other tests ran the kernels this CPU has")
	}
	old, oldHP := avx512, hpAVX512
	avx512, hpAVX512 = false, false
	defer func() { avx512, hpAVX512 = old, oldHP }()
	for name, f := range map[string]func(*testing.T){
		"Convert": TestKernelConvert, "LowerMedian": TestKernelLowerMedian, "Centre": TestKernelCentre,
		"SumRows": TestKernelSumRows, "RunVectorMatchesGo": TestRunVectorMatchesGo,
	} {
		t.Run(name, f)
	}
}
