package detect

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestFilterBankDirect checks FilterBank against a float64 direct
// correlation with zeros outside the row, over odd column ranges, one and
// two rows.
func TestFilterBankDirect(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	const k, nt, T = 5, 61, 3001
	w := make([]float32, k*nt)
	for i := range w {
		w[i] = float32(r.NormFloat64())
	}
	rows := [2][]float32{make([]float32, T), make([]float32, T)}
	for _, row := range rows {
		for i := range row {
			row[i] = float32(r.NormFloat64() * 100)
		}
	}
	for _, bank := range []*FilterBank{NewFilterBank(w, k, nt), NewShortFilterBank(w, k, nt)} {
		checkBank(t, bank, w, rows, k, nt, T)
	}
}

// checkBank compares one bank's correlations with the direct sums.
func checkBank(t *testing.T, bank *FilterBank, w []float32, rows [2][]float32, k, nt, T int) {
	cor := bank.Correlator()
	for _, rg := range [][2]int{{0, T}, {0, 1}, {T - 1, 1}, {17, 1999}, {1000, 1023}, {5, 195}, {5, 197}} {
		e0, n := rg[0], rg[1]
		da, db := make([]float32, k*n), make([]float32, k*n)
		for i := range da {
			da[i], db[i] = float32(math.NaN()), float32(math.NaN())
		}
		cor.Correlate(da, rows[0], db, rows[1], e0, n)
		one := make([]float32, k*n)
		cor.Correlate(one, rows[1], nil, nil, e0, n)
		for f := range k {
			for i := range n {
				for ri, got := range []float32{da[f*n+i], db[f*n+i], one[f*n+i]} {
					row := rows[min(ri, 1)]
					var want float64
					for j := range nt {
						if c := e0 + i + j - nt/2; c >= 0 && c < T {
							want += float64(row[c]) * float64(w[f*nt+j])
						}
					}
					if math.IsNaN(float64(got)) || math.Abs(float64(got)-want) > 1e-5*(1+math.Abs(want)) {
						t.Fatalf("block %d: columns %d+%d filter %d column %d row %d: %g, want %g", bank.n, e0, n, f, i, ri, got, want)
					}
				}
			}
		}
	}
}
