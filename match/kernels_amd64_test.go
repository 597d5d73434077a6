//go:build amd64 && !noasm

package match

import "testing"

// TestScoreRowAVX2Only repeats TestScoreRowBitIdentical with the AVX-512
// kernel off, so the AVX2 kernel is checked on CPUs that have both.
func TestScoreRowAVX2Only(t *testing.T) {
	saved := useScoreAVX512
	defer func() { useScoreAVX512 = saved }()
	useScoreAVX512 = false
	TestScoreRowBitIdentical(t)
}

// TestProjectAVX2Only repeats TestProjectBitIdentical with the AVX-512
// kernel off.
func TestProjectAVX2Only(t *testing.T) {
	saved := useProjAVX512
	defer func() { useProjAVX512 = saved }()
	useProjAVX512 = false
	TestProjectBitIdentical(t)
}
