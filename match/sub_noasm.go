//go:build !amd64 || noasm

package match

// subScaled sets row[d] −= a·k[d] for d < len(k) (subScaledGo).
func subScaled(row, k []float32, a float32) { subScaledGo(row, k, a) }
