//go:build !amd64 || noasm

package match

// scoreRow scores one template over columns [lo, hi) (scoreRowGo).
func scoreRow(row []float32, s []float64, su []int32, lo, hi int, inv float64, u int32) {
	scoreRowGo(row, s, su, lo, hi, inv, u)
}
