package sim

import (
	"math"
	"math/rand/v2"
)

// normalStream draws standard normal values with Marsaglia and Tsang's
// 128-layer ziggurat ("The Ziggurat Method for Generating Random
// Variables", J. Stat. Software 5(8), 2000) from a PCG generator held by
// value, so that the common path is a few inlined instructions: one 64-bit
// draw, a table look-up, a compare and a multiply. It replaces
// rand.Rand.NormFloat64 for the noise, where it halves the cost per value.
type normalStream struct {
	pcg rand.PCG
}

// newNormalStream returns the normal stream (seed, kind, index), seeded as
// newRand seeds its generator.
func newNormalStream(seed, kind, index uint64) *normalStream {
	a, b := streamSeeds(seed, kind, index)
	s := &normalStream{}
	s.pcg.Seed(a, b)
	return s
}

// Ziggurat tables (Marsaglia and Tsang's zigset for the normal).
const (
	zigR = 3.442619855899      // start of the tail
	zigV = 9.91256303526217e-3 // area of each layer
	zigM = 2147483648.0        // 2^31
)

var (
	zigK [128]uint32  // |j| < zigK[i] accepts at once
	zigW [128]float32 // scale of layer i
	zigF [128]float32 // density at the layer edges
)

func init() {
	dn, tn := zigR, zigR
	q := zigV / math.Exp(-0.5*dn*dn)
	zigK[0] = uint32(dn / q * zigM)
	zigK[1] = 0
	zigW[0] = float32(q / zigM)
	zigW[127] = float32(dn / zigM)
	zigF[0] = 1
	zigF[127] = float32(math.Exp(-0.5 * dn * dn))
	for i := 126; i >= 1; i-- {
		dn = math.Sqrt(-2 * math.Log(zigV/dn+math.Exp(-0.5*dn*dn)))
		zigK[i+1] = uint32(dn / tn * zigM)
		tn = dn
		zigF[i] = float32(math.Exp(-0.5 * dn * dn))
		zigW[i] = float32(dn / zigM)
	}
}

// uniform returns a value in (0, 1].
func (s *normalStream) uniform() float64 {
	return float64(s.pcg.Uint64()>>11+1) / (1 << 53)
}

// next returns a standard normal value.
func (s *normalStream) next() float32 {
	for {
		u := s.pcg.Uint64()
		j := int32(u)      // signed 32-bit value
		i := u >> 32 & 127 // layer
		aj := j
		if aj < 0 {
			aj = -aj
		}
		x := float32(j) * zigW[i]
		if uint32(aj) < zigK[i] {
			return x
		}
		if i == 0 {
			// Tail beyond zigR.
			for {
				tx := -math.Log(s.uniform()) / zigR
				ty := -math.Log(s.uniform())
				if ty+ty >= tx*tx {
					if j > 0 {
						return float32(zigR + tx)
					}
					return float32(-zigR - tx)
				}
			}
		}
		if zigF[i]+float32(s.uniform())*(zigF[i-1]-zigF[i]) < float32(math.Exp(-0.5*float64(x)*float64(x))) {
			return x
		}
	}
}

// fill sets every element of e to a standard normal value.
func (s *normalStream) fill(e []float32) {
	for i := range e {
		e[i] = s.next()
	}
}
