package preprocess

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

func TestLowerMedian(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(15, 16))
	sizes := []int{1, 2, 3, 4, 5, 12, 13, 14, 31, 32, 100, 383, 384, 385}
	for _, n := range sizes {
		for _, kind := range []string{"normal", "few values", "sorted", "reversed", "equal"} {
			for rep := range 20 {
				x := make([]float32, n)
				for i := range x {
					switch kind {
					case "normal":
						x[i] = float32(rng.NormFloat64())
					case "few values":
						x[i] = float32(rng.IntN(4))
					case "sorted", "reversed":
						x[i] = float32(i)
					case "equal":
						x[i] = 7
					}
				}
				if kind == "reversed" {
					slices.Reverse(x)
				}
				sorted := slices.Clone(x)
				slices.Sort(sorted)
				want := sorted[(n-1)/2]
				got := LowerMedian(x)
				if got != want {
					t.Fatalf("n %d %s rep %d: LowerMedian = %v, want %v", n, kind, rep, got, want)
				}
				slices.Sort(x)
				if !slices.Equal(x, sorted) {
					t.Fatalf("n %d %s rep %d: values not a permutation of the input", n, kind, rep)
				}
			}
		}
	}
	// torch.median semantics on an even count: the lower middle value.
	if got := LowerMedian([]float32{4, 1, 3, 2}); got != 2 {
		t.Errorf("LowerMedian(4 1 3 2) = %v, want 2", got)
	}
}

// TestLowerMedianNaN only requires LowerMedian to return on NaN input.
func TestLowerMedianNaN(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(17, 18))
	nan := float32(math.NaN())
	for _, n := range []int{1, 2, 20, 384} {
		for range 50 {
			x := make([]float32, n)
			for i := range x {
				if rng.IntN(3) == 0 {
					x[i] = nan
				} else {
					x[i] = float32(rng.NormFloat64())
				}
			}
			LowerMedian(x)
		}
	}
	defer func() {
		if recover() == nil {
			t.Error("LowerMedian of nothing did not panic")
		}
	}()
	LowerMedian(nil)
}

// BenchmarkLowerMedian384 selects the median of 384 values as CAR does:
// int16 counts minus fractional channel means, 1024 different columns.
func BenchmarkLowerMedian384(b *testing.B) {
	rng := rand.New(rand.NewPCG(19, 20))
	const cols = 1024
	src := make([]float32, 384*cols)
	for i := range src {
		src[i] = float32(math.Round(30*rng.NormFloat64())) - float32(rng.Float64())
	}
	x := make([]float32, 384)
	i := 0
	for b.Loop() {
		copy(x, src[i*384:(i+1)*384])
		LowerMedian(x)
		i = (i + 1) % cols
	}
}
