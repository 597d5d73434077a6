package motion

import (
	"fmt"

	"dspk/internal/par"
	"dspk/linalg"
)

// Fold returns window w's correction folded into the whitening W, for
// the CPU: the sparse operator of M_w·W kept banded as [Corrector.Apply]
// keeps M_w (each row drops its smallest entries whose magnitudes add up
// to at most BandTol of the row's), so that one sparse product of the
// preprocessor (preprocess.Preprocessor.SetWhitening before the window)
// whitens and corrects at once, as Kilosort4 multiplies by M_i·Wrot
// (kilosort4-sort.md §3.4). M_w·W is computed in float64 from the
// float32 entries of both and rounded once. The result is cached and
// returned again while the window's shifts and W are unchanged; the
// caller must not modify it. It panics if W's channels are not the
// corrector's or w is out of range.
func (k *Corrector) Fold(W *linalg.Whitening, w int) *linalg.Whitening {
	C := len(k.x)
	if W.C != C {
		panic(fmt.Sprintf("motion: Fold: whitening of %d channels, corrector of %d", W.C, C))
	}
	k.matrix(w)
	if k.fold != nil && k.foldW == W && k.foldGen == k.gen {
		return k.fold
	}
	p := make([]float32, C*C)
	par.Split(C, par.Workers(C), func(_, c0, c1 int) {
		row := make([]float64, C)
		for c := c0; c < c1; c++ {
			clear(row)
			for j, m := range k.m[c*C : (c+1)*C] {
				if m == 0 {
					continue
				}
				for e := j * W.K; e < (j+1)*W.K; e++ {
					row[W.Index[e]] += float64(m) * float64(W.Value[e])
				}
			}
			for i, v := range row {
				p[c*C+i] = float32(v)
			}
		}
	})
	k.fold, k.foldW, k.foldGen = newBanded(p, C), W, k.gen
	return k.fold
}
