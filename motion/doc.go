// Package motion estimates and corrects probe motion as Kilosort4's
// datashift does (docs/motion.md, ../shared/docs/kilosort4-sort.md §3).
//
// An [Estimator] bins the first detection pass of each window into a
// depth × amplitude histogram (§3.1), registers the windows rigidly to an
// iterated reference (§3.2), then per block with smoothing and sub-bin
// refinement (§3.3), and returns the [Estimate]: dshift [windows, blocks]
// in µm and the blocks' depths. A [Corrector] turns an Estimate into one
// kriging matrix per window (§3.4) and applies it to a whitened window,
// on the CPU in place of host slices and on a CUDA device on the window's
// device buffer.
//
// Both types have a CPU and a CUDA back end beside each other (cpu.go,
// cuda.go, kernels/motion.cu) with the same results: the estimate is
// deterministic and equal between back ends (the registration scores are
// float64 sums in a fixed order on both), and the corrected windows agree
// to float32 rounding.
package motion
