package match

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestProjectBitIdentical checks project (the AVX-512 or AVX2 kernel
// where the CPU has it) against projectGo and both against a float64 reference of the
// sum, on random blocks of odd sizes, with NaN-poisoned outputs.
func TestProjectBitIdentical(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, uint64(len(t.Name()))))
	for trial := range 60 {
		C, P := 1+rng.IntN(9), 1+rng.IntN(6)
		w := 1 + rng.IntN(300)
		if trial%5 == 0 {
			w = 16 * (1 + rng.IntN(8)) // whole blocks of the kernel
		}
		bc := make([]float32, C*P*w)
		for i := range bc {
			bc[i] = float32(rng.NormFloat64() * math.Pow(10, float64(rng.IntN(5)-2)))
		}
		nch := 1 + rng.IntN(C)
		chans := make([]int32, nch)
		for i, c := range rng.Perm(C)[:nch] {
			chans[i] = int32(c)
		}
		coef := make([]float32, nch*P)
		for i := range coef {
			coef[i] = float32(rng.NormFloat64())
		}
		if trial == 3 {
			coef[0] = float32(math.Copysign(0, -1)) // −0 products: the sum still starts from +0
		}
		r := newProjRows(chans, coef, P)
		n := w - rng.IntN(min(w, 20)) // out may be shorter than the chunk
		got, want := make([]float32, n), make([]float32, n)
		for i := range got {
			got[i], want[i] = float32(math.NaN()), float32(math.NaN())
		}
		project(got, bc, r, w)
		projectGo(want, bc, r, w, 0)
		for i := range got {
			if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
				t.Fatalf("trial %d (C %d P %d w %d n %d): column %d: %g, Go %g", trial, C, P, w, n, i, got[i], want[i])
			}
			var ref float64
			for k, c := range chans {
				for p := range P {
					ref += float64(coef[k*P+p]) * float64(bc[(int(c)*P+p)*w+i])
				}
			}
			if d := math.Abs(float64(got[i]) - ref); d > 1e-5*(1+math.Abs(ref)) {
				t.Fatalf("trial %d: column %d: %g, float64 reference %g", trial, i, got[i], ref)
			}
		}
	}
}

// TestScoreRowBitIdentical checks scoreRow (the AVX-512 or AVX2 kernel
// where the CPU has it) against scoreRowGo on random rows with negative, zero, NaN and
// infinite values, ties and odd spans.
func TestScoreRowBitIdentical(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 3))
	special := []float32{0, float32(math.Copysign(0, -1)), float32(math.NaN()), float32(math.Inf(1)), float32(math.Inf(-1)), 1, 1}
	for trial := range 200 {
		n := 1 + rng.IntN(90)
		row := make([]float32, n)
		for i := range row {
			row[i] = float32(rng.NormFloat64())
			if rng.IntN(6) == 0 {
				row[i] = special[rng.IntN(len(special))]
			}
		}
		s0 := make([]float64, n)
		su0 := make([]int32, n)
		for i := range s0 {
			switch rng.IntN(4) {
			case 0:
				s0[i] = 0
			case 1:
				s0[i] = float64(row[i]) * float64(row[i]) * 0.5 // a tie where inv is 0.5
			default:
				s0[i] = rng.Float64() * 2
			}
			su0[i] = int32(rng.IntN(9))
		}
		lo := rng.IntN(n)
		hi := lo + rng.IntN(n-lo+1)
		inv := []float64{0.5, rng.Float64() * 3, math.Inf(1)}[rng.IntN(3)]
		u := int32(rng.IntN(1000))
		s1, su1 := append([]float64(nil), s0...), append([]int32(nil), su0...)
		s2, su2 := append([]float64(nil), s0...), append([]int32(nil), su0...)
		scoreRow(row, s1, su1, lo, hi, inv, u)
		scoreRowGo(row, s2, su2, lo, hi, inv, u)
		for i := range n {
			if math.Float64bits(s1[i]) != math.Float64bits(s2[i]) || su1[i] != su2[i] {
				t.Fatalf("trial %d [%d, %d) inv %g: column %d (v %g, s %g): kernel (%g, %d), Go (%g, %d)",
					trial, lo, hi, inv, i, row[i], s0[i], s1[i], su1[i], s2[i], su2[i])
			}
		}
	}
}

// TestSubScaledBitIdentical checks subScaled (the AVX2 kernel where the
// CPU has it) against the product rounded to float32 and then subtracted,
// on odd lengths with NaN, infinite and zero values.
func TestSubScaledBitIdentical(t *testing.T) {
	rng := rand.New(rand.NewPCG(12, 4))
	special := []float32{0, float32(math.Copysign(0, -1)), float32(math.NaN()), float32(math.Inf(1)), float32(math.Inf(-1)), 1e-45, 3e38}
	for trial := range 300 {
		n := rng.IntN(140)
		k := make([]float32, n)
		row := make([]float32, n+rng.IntN(3))
		for i := range row {
			row[i] = float32(rng.NormFloat64() * 100)
			if i < n {
				k[i] = float32(rng.NormFloat64())
				if rng.IntN(8) == 0 {
					k[i] = special[rng.IntN(len(special))]
				}
			}
			if rng.IntN(8) == 0 {
				row[i] = special[rng.IntN(len(special))]
			}
		}
		a := float32(rng.NormFloat64() * 3)
		if trial%10 == 0 {
			a = special[rng.IntN(len(special))]
		}
		got := append([]float32(nil), row...)
		subScaled(got, k, a)
		for i := range row {
			want := row[i]
			if i < n {
				want = row[i] - float32(a*k[i])
			}
			if math.Float32bits(got[i]) != math.Float32bits(want) && !(math.IsNaN(float64(got[i])) && math.IsNaN(float64(want))) {
				t.Fatalf("trial %d (n %d, a %g): element %d: %g, want %g", trial, n, a, i, got[i], want)
			}
		}
	}
}
