//go:build !amd64 || noasm

package cluster

// useDots512 is false without the amd64 assembly.
var useDots512 = false

// dotsT sets acc[b] = Σ_t x[t]·tr[t·ld + b] for b < m, each sum in order
// (see dotsTGo).
func dotsT(acc, x, tr []float64, ld, m int) { dotsTGo(acc, x, tr, ld, m) }
