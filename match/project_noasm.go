//go:build !amd64 || noasm

package match

// project writes one template's projection of a chunk (projectGo).
func project(out, bc []float32, r projRows, w int) {
	projectGo(out, bc, r, w, 0)
}
