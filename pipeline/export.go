package pipeline

import (
	"fmt"

	"gonum.org/v1/gonum/mat"

	"dspk/linalg"
)

// InverseRidge is the ridge Kilosort4 adds before inverting the whitening
// matrix for Phy: whitening_mat_inv = inv(Wrot + 1e-5·I).
const InverseRidge = 1e-5

// WhiteningMatrices returns the dense whitening matrix and Kilosort4's
// inverse of it, both C×C row-major float32, as Phy reads them.
func WhiteningMatrices(w *linalg.Whitening) (dense, inv []float32, err error) {
	d := w.Dense()
	c := w.C
	m := mat.NewDense(c, c, nil)
	for i := 0; i < c; i++ {
		for j := 0; j < c; j++ {
			v := d[i*c+j]
			if i == j {
				v += InverseRidge
			}
			m.Set(i, j, v)
		}
	}
	var mi mat.Dense
	if err := mi.Inverse(m); err != nil {
		// A mat.Condition error still leaves the inverse computed; only a
		// singular matrix is fatal.
		if _, ill := err.(mat.Condition); !ill {
			return nil, nil, fmt.Errorf("inverting the whitening matrix: %w", err)
		}
	}
	dense = make([]float32, c*c)
	inv = make([]float32, c*c)
	for i := 0; i < c; i++ {
		for j := 0; j < c; j++ {
			dense[i*c+j] = float32(d[i*c+j])
			inv[i*c+j] = float32(mi.At(i, j))
		}
	}
	return dense, inv, nil
}
