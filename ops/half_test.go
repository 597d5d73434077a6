package ops

import (
	"math"
	"math/rand/v2"
	"sort"
	"testing"
)

// halfFormat describes a 16-bit float format for the independent reference
// below: exponent bias and fraction width.
type halfFormat struct {
	name      string
	fracBits  int
	bias      int
	infBits   uint16 // bit pattern of +Inf
	toFloat32 func(uint16) float32
	from32    func(float32) uint16
	from64    func(float64) uint16
}

var halfFormats = []halfFormat{
	{"Float16", 10, 15, 0x7c00,
		func(b uint16) float32 { return Float16(b).Float32() },
		func(f float32) uint16 { return uint16(Float16FromFloat32(f)) },
		func(x float64) uint16 { return uint16(Float16FromFloat64(x)) }},
	{"BFloat16", 7, 127, 0x7f80,
		func(b uint16) float32 { return BFloat16(b).Float32() },
		func(f float32) uint16 { return uint16(BFloat16FromFloat32(f)) },
		func(x float64) uint16 { return uint16(BFloat16FromFloat64(x)) }},
}

// value returns the value of the non-negative finite pattern b computed from
// the format's definition with math.Ldexp, independently of the code under
// test. The +Inf pattern yields 2^(emax+1), the next value of the grid, which
// is what rounding must compare against.
func (f halfFormat) value(b uint16) float64 {
	e := int(b >> f.fracBits)
	m := float64(int(b) & (1<<f.fracBits - 1))
	if e == 0 {
		return math.Ldexp(m, 1-f.bias-f.fracBits)
	}
	return math.Ldexp(1+m/float64(int(1)<<f.fracBits), e-f.bias)
}

// grid returns the values of the non-negative patterns 0 … +Inf in order.
func (f halfFormat) grid() []float64 {
	g := make([]float64, int(f.infBits)+1)
	for b := range g {
		g[b] = f.value(uint16(b))
	}
	return g
}

// round is the reference rounding of x to the format: nearest grid value,
// ties to the even pattern; at or beyond the Inf grid point it is Inf.
func (f halfFormat) round(g []float64, x float64) uint16 {
	if math.IsNaN(x) {
		panic("round: NaN")
	}
	var sign uint16
	if math.Signbit(x) {
		sign = 0x8000
		x = -x
	}
	if x >= g[len(g)-1] {
		return sign | f.infBits
	}
	i := sort.SearchFloat64s(g, x) // g[i-1] < x <= g[i]
	if g[i] == x {
		return sign | uint16(i)
	}
	lo, hi := g[i-1], g[i]
	mid := lo + (hi-lo)/2 // exact: the grid has few bits
	switch {
	case x < mid:
		return sign | uint16(i-1)
	case x > mid:
		return sign | uint16(i)
	case (i-1)&1 == 0:
		return sign | uint16(i-1)
	default:
		return sign | uint16(i)
	}
}

func isNaN16(f halfFormat, b uint16) bool {
	return b&0x7fff > f.infBits
}

// TestHalfToFloat32Exhaustive checks every one of the 65536 patterns against
// the definition, and that rounding the value back gives the same pattern.
func TestHalfToFloat32Exhaustive(t *testing.T) {
	for _, f := range halfFormats {
		t.Run(f.name, func(t *testing.T) {
			for i := 0; i < 1<<16; i++ {
				b := uint16(i)
				got := f.toFloat32(b)
				if isNaN16(f, b) {
					if !math.IsNaN(float64(got)) || math.Signbit(float64(got)) != (b&0x8000 != 0) {
						t.Fatalf("%#04x: got %v, want NaN with sign %v", b, got, b&0x8000 != 0)
					}
					back := f.from32(got)
					if !isNaN16(f, back) || back&0x8000 != b&0x8000 {
						t.Fatalf("%#04x: NaN round trip gave %#04x", b, back)
					}
					if back2 := f.from64(float64(got)); !isNaN16(f, back2) || back2&0x8000 != b&0x8000 {
						t.Fatalf("%#04x: NaN round trip via float64 gave %#04x", b, back2)
					}
					continue
				}
				want := f.value(b & 0x7fff)
				if b&0x7fff == f.infBits {
					want = math.Inf(1)
				}
				if b&0x8000 != 0 {
					want = -want
				}
				if float64(got) != want || math.Signbit(float64(got)) != math.Signbit(want) {
					t.Fatalf("%#04x: got %v, want %v", b, got, want)
				}
				if back := f.from32(got); back != b {
					t.Fatalf("%#04x: round trip via float32 gave %#04x", b, back)
				}
				if back := f.from64(float64(got)); back != b {
					t.Fatalf("%#04x: round trip via float64 gave %#04x", b, back)
				}
			}
		})
	}
}

// TestHalfRounding checks rounding from float32 and float64 against the
// reference at every midpoint of consecutive patterns, just either side of
// it (one float32 or float64 step, the cases double rounding gets wrong),
// at random points in between, beyond the largest finite value and below
// the smallest subnormal, for both signs.
func TestHalfRounding(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	for _, f := range halfFormats {
		t.Run(f.name, func(t *testing.T) {
			g := f.grid()
			check64 := func(x float64) {
				t.Helper()
				for _, v := range []float64{x, -x} {
					want := f.round(g, v)
					if got := f.from64(v); got != want {
						t.Fatalf("from64(%v = %#x): got %#04x, want %#04x", v, math.Float64bits(v), got, want)
					}
					if v32 := float32(v); float64(v32) == v {
						if got := f.from32(v32); got != want {
							t.Fatalf("from32(%v): got %#04x, want %#04x", v32, got, want)
						}
					}
				}
			}
			for i := 0; i+1 < len(g); i++ {
				lo, hi := g[i], g[i+1]
				mid := lo + (hi-lo)/2
				check64(mid)
				check64(math.Nextafter(mid, 0))
				check64(math.Nextafter(mid, math.Inf(1)))
				m32 := float32(mid)
				check64(float64(math.Nextafter32(m32, 0)))
				check64(float64(math.Nextafter32(m32, float32(math.Inf(1)))))
				check64(lo + (hi-lo)*rng.Float64())
			}
			// Log-uniform magnitudes from far below the subnormals to far
			// beyond the largest finite value.
			for range 200000 {
				check64(math.Ldexp(1+rng.Float64(), rng.IntN(400)-200))
			}
			for _, x := range []float64{0, math.SmallestNonzeroFloat64, 1e-300, math.MaxFloat32, 1e300, math.MaxFloat64, math.Inf(1)} {
				check64(x)
			}
		})
	}
}

// TestRoundToOdd32 checks the round-to-odd property against the rounding of
// float64 (exact → same value; inexact → the odd one of the two float32
// neighbours).
func TestRoundToOdd32(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for range 100000 {
		x := math.Ldexp(rng.Float64()*2-1, rng.IntN(320)-170)
		got := roundToOdd32(x)
		if float64(float32(x)) == x {
			if got != float32(x) {
				t.Fatalf("%v exact: got %v", x, got)
			}
			continue
		}
		// The two neighbours: truncation towards zero and the next one out.
		tr := float32(x)
		if math.Abs(float64(tr)) > math.Abs(x) {
			tr = math.Nextafter32(tr, 0)
		}
		away := math.Nextafter32(tr, float32(math.Copysign(math.Inf(1), x)))
		want := tr
		if math.Float32bits(tr)&1 == 0 {
			want = away
		}
		if math.Float32bits(got) != math.Float32bits(want) {
			t.Fatalf("%v: got %v, want %v", x, got, want)
		}
	}
	if got := roundToOdd32(1e300); got != math.MaxFloat32 {
		t.Fatalf("overflow: got %v, want MaxFloat32", got)
	}
	if got := roundToOdd32(-1e-300); math.Float32bits(got) != 0x80000001 {
		t.Fatalf("underflow: got %#x, want 0x80000001", math.Float32bits(got))
	}
}
