package batch

import "math"

// Estimate returns the expected wall time and host memory of detecting
// seconds of a recording of channels per sample at rate Hz, in windows
// of batch samples and templates of nt, on a GPU (gpu) or the CPU, by
// the rule of docs/cluster-running.md: time
// at a fixed multiple of real time (cpuSpeed or gpuSpeed) plus a start of
// 30 s; memory the loader's three raw windows, the window's float32
// copies (four), the detector's working set (a window's worth twice) and
// 1 GiB of process and output buffers.
func Estimate(seconds float64, channels int, rate float64, batch, nt int, gpu bool) (float64, int64) {
	speed := cpuSpeed
	if gpu {
		speed = gpuSpeed
	}
	T := int64(batch + 2*nt)
	mem := 3*T*int64(channels)*2 + 6*T*int64(channels)*4 + 1<<30
	return 30 + seconds/speed, mem
}

// The speeds (× real time) the estimates assume: the CPU figure is a
// 2-core share of this project's development machine for NP1, the GPU
// figure a conservative share of the H200's (docs/perf.md).
const (
	cpuSpeed = 1.0
	gpuSpeed = 100.0
)

// EstimateSort returns the expected wall time and host memory of sorting
// seconds of a recording, by the rule of docs/cluster-running.md: time
// 60 s of start plus the recording at sortGPUSpeed or sortCPUSpeed times
// real time; memory detection's ([Estimate]) plus 2 GiB for clustering
// and matching plus 2 MB per second of recording for the spike tables.
func EstimateSort(seconds float64, channels int, rate float64, batch, nt int, gpu bool) (float64, int64) {
	speed := sortCPUSpeed
	if gpu {
		speed = sortGPUSpeed
	}
	_, mem := Estimate(seconds, channels, rate, batch, nt, gpu)
	return 60 + seconds/speed, mem + 2<<30 + int64(2e6*seconds)
}

// The speeds (× real time) the sort estimates assume: a half and a third
// of the slowest measured (10-min NP1 sorts on the H200: 20–35× on the
// GPU, 1.6× on 2 CPU cores; docs/cluster-running.md).
const (
	sortCPUSpeed = 0.5
	sortGPUSpeed = 10.0
)

// shardRanges splits windows [0, n) into shards of at most per windows
// each, as evenly as possible.
func shardRanges(n, per int) [][2]int {
	k := max(1, int(math.Ceil(float64(n)/float64(max(per, 1)))))
	var out [][2]int
	for i := range k {
		out = append(out, [2]int{i * n / k, (i + 1) * n / k})
	}
	return out
}
