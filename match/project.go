package match

// projRows is one template's part of the projection B[u,t] = Σ_{c,p}
// U[u,c,p]·Bc[c,p,t] over a chunk of w columns: rows[j] indexes the row
// (c·P + p) of bc, a [C·P][w] block, and cfs[j] its coefficient.
type projRows struct {
	rows []int32
	cfs  []float64
}

// newProjRows lists template u's rows and coefficients in the order of
// its support channels, then of p.
func newProjRows(chans []int32, coef []float32, P int) projRows {
	r := projRows{rows: make([]int32, 0, len(coef)), cfs: make([]float64, 0, len(coef))}
	for i, c := range chans {
		for p := range P {
			r.rows = append(r.rows, c*int32(P)+int32(p))
			r.cfs = append(r.cfs, float64(coef[i*P+p]))
		}
	}
	return r
}

// projectGo sets out[t] = float32(Σ_j cfs[j]·float64(bc[rows[j]·w + t]))
// for t in [t0, len(out)), each sum from +0 in the order j = 0, 1, …, each
// product rounded and then added (no fused multiply-add): the reference
// the assembly kernels equal bit for bit.
func projectGo(out, bc []float32, r projRows, w, t0 int) {
	for t := t0; t < len(out); t++ {
		var a float64
		for j, row := range r.rows {
			a += r.cfs[j] * float64(bc[int(row)*w+t])
		}
		out[t] = float32(a)
	}
}
