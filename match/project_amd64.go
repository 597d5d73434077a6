//go:build amd64 && !noasm

package match

import "golang.org/x/sys/cpu"

// useProjAVX2 selects the AVX2 kernel of project (project_amd64.s); tests
// switch it off to compare with the Go code.
var useProjAVX2 = cpu.X86.HasAVX2

// useProjAVX512 selects the AVX-512 kernel where the CPU has it (and
// useProjAVX2 is on).
var useProjAVX512 = cpu.X86.HasAVX512F

//go:noescape
func projAVX512(out, bc *float32, rows *int32, cfs *float64, k, w, n int)

//go:noescape
func projAVX2(out, bc *float32, rows *int32, cfs *float64, k, w, n int)

// project sets out[t] = float32(Σ_j cfs[j]·float64(bc[rows[j]·w + t])) for
// t < len(out) ≤ w: the sums of projectGo, bit for bit (the kernel does
// the same IEEE operations in the same order, thirty-two or sixteen
// columns at a time).
func project(out, bc []float32, r projRows, w int) {
	if len(out) > w || len(r.rows) != len(r.cfs) {
		panic("match: project: bad sizes")
	}
	n := 0
	if useProjAVX2 && len(r.rows) > 0 {
		for _, row := range r.rows {
			if int(row+1)*w > len(bc) {
				panic("match: project: row outside the block")
			}
		}
		if useProjAVX512 {
			n = len(out) &^ 31
			if n > 0 {
				projAVX512(&out[0], &bc[0], &r.rows[0], &r.cfs[0], len(r.rows), w, n)
			}
		}
		if m := (len(out) - n) &^ 15; m > 0 {
			projAVX2(&out[n], &bc[n], &r.rows[0], &r.cfs[0], len(r.rows), w, m)
			n += m
		}
	}
	projectGo(out, bc, r, w, n)
}
