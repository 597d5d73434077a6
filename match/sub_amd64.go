//go:build amd64 && !noasm

package match

import "golang.org/x/sys/cpu"

// useSubAVX2 selects the AVX2 kernel of subScaled (sub_amd64.s); tests
// switch it off to compare with the Go code.
var useSubAVX2 = cpu.X86.HasAVX2

//go:noescape
func subScaledAVX2(row, k *float32, n int, a float32)

// subScaled sets row[d] −= a·k[d] for d < len(k): subScaledGo's float32
// operations, eight at a time where the CPU has AVX2.
func subScaled(row, k []float32, a float32) {
	n := len(k)
	if len(row) < n {
		panic("match: subScaled: row shorter than k")
	}
	mid := 0
	if useSubAVX2 && n >= 8 {
		mid = n &^ 7
		subScaledAVX2(&row[0], &k[0], mid, a)
	}
	subScaledGo(row[mid:n], k[mid:], a)
}
