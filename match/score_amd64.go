//go:build amd64 && !noasm

package match

import "golang.org/x/sys/cpu"

// useScoreAVX2 selects the AVX2 kernel of scoreRow (score_amd64.s); tests
// switch it off to compare with the Go code.
var useScoreAVX2 = cpu.X86.HasAVX2

// useScoreAVX512 selects the AVX-512 kernel where the CPU has it (and
// useScoreAVX2 is on).
var useScoreAVX512 = cpu.X86.HasAVX512F && cpu.X86.HasAVX512VL

//go:noescape
func scoreAVX512(row *float32, s *float64, su *int32, n int, inv float64, u int32)

//go:noescape
func scoreAVX2(row *float32, s *float64, su *int32, n int, inv float64, u int32)

// scoreRow scores one template over columns [lo, hi): where v = row[t] > 0
// and sc = v·v·inv beats s[t], sc and u replace s[t] and su[t]. The kernels
// do scoreRowGo's IEEE operations eight or four columns at a time.
func scoreRow(row []float32, s []float64, su []int32, lo, hi int, inv float64, u int32) {
	if hi > len(row) || hi > len(s) || hi > len(su) {
		panic("match: scoreRow: columns outside the buffers")
	}
	mid := lo
	if useScoreAVX2 && useScoreAVX512 && hi-lo >= 8 {
		mid = lo + (hi-lo)&^7
		scoreAVX512(&row[lo], &s[lo], &su[lo], mid-lo, inv, u)
		lo = mid
	}
	if useScoreAVX2 && hi-lo >= 4 {
		mid = lo + (hi-lo)&^3
		scoreAVX2(&row[lo], &s[lo], &su[lo], mid-lo, inv, u)
	}
	scoreRowGo(row, s, su, mid, hi, inv, u)
}
