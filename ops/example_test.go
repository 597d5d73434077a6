package ops_test

import (
	"fmt"

	"dspk/ops"
)

func ExampleCausalTrailingMean() {
	// Two rows of five samples, window of three.
	x := []float32{
		1, 2, 3, 4, 5,
		10, 0, 20, 0, 30,
	}
	y := make([]float32, len(x))
	ops.CausalTrailingMean(y, x, 2, 5, 3)
	fmt.Println(y[:5])
	fmt.Println(y[5:])

	// In place, bfloat16 storage.
	b := []ops.BFloat16{ops.BFloat16FromFloat32(1), ops.BFloat16FromFloat32(2), ops.BFloat16FromFloat32(4)}
	ops.CausalTrailingMean(b, b, 1, 3, 2)
	fmt.Println(b[0].Float32(), b[1].Float32(), b[2].Float32())
	// Output:
	// [1 1.5 2 3 4]
	// [10 5 10 6.6666665 16.666666]
	// 1 1.5 3
}

func ExampleTrailingMean() {
	// The op on a device: the CPU here (nil or compute.Open("cpu")); with
	// a CUDA device from compute.Open("cuda:0") the same calls run one
	// kernel launch each.
	tm, err := ops.NewTrailingMean[float32](nil, 1, 6, 2)
	if err != nil {
		panic(err)
	}
	defer tm.Close()
	x := []float32{2, 4, 6, 8, 10, 12}
	y := make([]float32, len(x))
	if err := tm.Apply(y, x); err != nil {
		panic(err)
	}
	fmt.Println(y)
	// Output:
	// [2 3 5 7 9 11]
}
