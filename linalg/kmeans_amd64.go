//go:build amd64 && !noasm

package linalg

import "golang.org/x/sys/cpu"

// useSqDist selects the AVX2 kernel of sqDist32 (kmeans_amd64.s); tests
// compare it with the Go code.
var useSqDist = cpu.X86.HasAVX2

// sqDist32AVX2 is sqDist32Go of the n ≥ 1 values at x and c: lane l of one
// vector accumulates partial sum l (the values j ≡ l mod 4 before the
// tail), each square and sum rounded as in Go (no fused multiply-add),
// the tail goes to sum 0 and the sums are added pairwise.
//
//go:noescape
func sqDist32AVX2(x *float32, c *float64, n int) float64
