//go:build !amd64 || noasm

package linalg

// useSqDist is false without the amd64 assembly.
var useSqDist = false

func sqDist32AVX2(x *float32, c *float64, n int) float64 { panic("linalg: no sqDist32AVX2") }
