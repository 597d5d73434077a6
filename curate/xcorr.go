package curate

import (
	"context"
	"fmt"
	"math"
)

// Units are cluster templates in wPCA coordinates: W[(k·C + c)·P + p] is
// PC p of unit k on channel c (Kilosort4's Wall [N, C, P]).
type Units struct {
	N, C, P int
	W       []float32
}

// check panics if the sizes disagree.
func (u *Units) check() {
	if u.N < 0 || u.C < 1 || u.P < 1 || len(u.W) != u.N*u.C*u.P {
		panic(fmt.Sprintf("curate: units N=%d C=%d P=%d with %d values", u.N, u.C, u.P, len(u.W)))
	}
}

// Basis is the feature basis and its lagged products: WtW[(p·P + q)·L + ℓ]
// = Σ_t wPCA[p, t]·wPCA[q, t + ℓ − NT] for ℓ = 0…2·NT (L = 2·NT + 1 = 123
// lags for NT = 61), in float64.
type Basis struct {
	P, NT int
	// WPCA is [P, NT] row-major, as detect.Templates.WPCA.
	WPCA []float32
	// WtW is [P, P, L].
	WtW []float64
}

// NewBasis returns the Basis of wpca ([p, nt] row-major). It panics if the
// length is not p·nt.
func NewBasis(wpca []float32, p, nt int) *Basis {
	if p < 1 || nt < 1 || len(wpca) != p*nt {
		panic(fmt.Sprintf("curate: wPCA P=%d NT=%d with %d values", p, nt, len(wpca)))
	}
	L := 2*nt + 1
	b := &Basis{P: p, NT: nt, WPCA: wpca, WtW: make([]float64, p*p*L)}
	for a := range p {
		for q := range p {
			for l := range L {
				var s float64
				for t := range nt {
					if u := t + l - nt; u >= 0 && u < nt {
						s += float64(wpca[a*nt+t]) * float64(wpca[q*nt+u])
					}
				}
				b.WtW[(a*p+q)*L+l] = s
			}
		}
	}
	return b
}

// Lags returns the number of lags of WtW, 2·NT + 1.
func (b *Basis) Lags() int { return 2*b.NT + 1 }

// normalised returns W_k/(10⁻⁶ + ‖W_k‖) for every unit, in float64, and
// the channels on which each unit is non-zero.
func normalised(u *Units) (w [][]float64, support [][]int) {
	m := u.C * u.P
	w = make([][]float64, u.N)
	support = make([][]int, u.N)
	for k := range u.N {
		w[k], support[k] = normalise(u.W[k*m:(k+1)*m], u.C, u.P)
	}
	return w, support
}

// normalise returns x/(10⁻⁶ + ‖x‖) and the channels where x is non-zero.
func normalise(x []float32, C, P int) ([]float64, []int) {
	inv := 1 / (1e-6 + norm2(x))
	out := make([]float64, len(x))
	var sup []int
	for c := range C {
		nz := false
		for p := range P {
			v := float64(x[c*P+p])
			out[c*P+p] = v * inv
			nz = nz || v != 0
		}
		if nz {
			sup = append(sup, c)
		}
	}
	return out, sup
}

// xcorr returns the maximum over lags of the cross-correlation
// Σ_c Σ_pq a[c,p]·b[c,q]·WtW[p,q,ℓ] of two normalised templates and the
// first lag ℓ (0…L−1) that attains it. sup lists the channels where a is
// non-zero (the others contribute nothing); M is P·P scratch.
func (bs *Basis) xcorr(a, b []float64, sup []int, M []float64) (best float64, lag int) {
	P, L := bs.P, bs.Lags()
	clear(M)
	any := false
	for _, c := range sup {
		ac, bc := a[c*P:(c+1)*P], b[c*P:(c+1)*P]
		for q, bv := range bc {
			if bv == 0 {
				continue
			}
			any = true
			for p, av := range ac {
				M[p*P+q] += av * bv
			}
		}
	}
	if !any {
		return 0, 0
	}
	best = math.Inf(-1)
	for l := range L {
		var s float64
		for pq, m := range M {
			s += m * bs.WtW[pq*L+l]
		}
		if s > best {
			best, lag = s, l
		}
	}
	return best, lag
}

// onSite returns, per channel, the units non-zero there.
func onSite(sup [][]int, C int) [][]int {
	out := make([][]int, C)
	for k, cs := range sup {
		for _, c := range cs {
			out[c] = append(out[c], k)
		}
	}
	return out
}

// scoreAll writes into c and lag the maximum and first maximising lag of
// the cross-correlation of unit k with every unit: units sharing no
// channel with k (found through site, which may list a unit more than
// once or list units now zero) get (0, 0), what the full sum gives them.
// mark is scratch of one int per unit.
func (bs *Basis) scoreAll(w [][]float64, sup [][]int, site [][]int, k int, c []float64, lag []int, M []float64, mark []int) {
	clear(c)
	clear(lag)
	for _, ch := range sup[k] {
		for _, j := range site[ch] {
			if mark[j] == k+1 {
				continue
			}
			mark[j] = k + 1
			c[j], lag[j] = bs.xcorr(w[k], w[j], sup[k], M)
		}
	}
	for _, ch := range sup[k] {
		for _, j := range site[ch] {
			mark[j] = 0
		}
	}
}

// SimilarTemplates returns the N×N similarity of the units (float32,
// row-major; Kilosort4's similar_templates.npy): the maximum over lags of
// the normalised cross-correlation, the quantity of the merge test. The
// diagonal is 1 up to rounding for a non-zero unit; a zero unit's row and
// column are 0.
func SimilarTemplates(u *Units, bs *Basis) []float32 {
	out, _ := similarTemplates(context.Background(), u, bs)
	return out
}

// similarTemplates is [SimilarTemplates], stopping with the context's
// cause once ctx is done (between rows).
func similarTemplates(ctx context.Context, u *Units, bs *Basis) ([]float32, error) {
	u.check()
	if u.P != bs.P {
		panic("curate: units and basis differ in P")
	}
	w, sup := normalised(u)
	site := onSite(sup, u.C)
	out := make([]float32, u.N*u.N)
	err := parallelEach(ctx, u.N, func() func(a int) { // rows are independent
		M := make([]float64, u.P*u.P)
		c := make([]float64, u.N)
		lag := make([]int, u.N)
		mark := make([]int, u.N)
		return func(a int) {
			bs.scoreAll(w, sup, site, a, c, lag, M, mark)
			for b, v := range c {
				out[a*u.N+b] = float32(v)
			}
		}
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// ClusterAmplitude returns ‖W_k‖ (L2 over channels and PCs) of every unit,
// the value of Kilosort4's cluster_Amplitude.tsv.
func ClusterAmplitude(u *Units) []float64 {
	u.check()
	m := u.C * u.P
	out := make([]float64, u.N)
	for k := range out {
		out[k] = norm2(u.W[k*m : (k+1)*m])
	}
	return out
}

// norm2 is the L2 norm of x, its squares summed in float64 in order.
func norm2(x []float32) float64 {
	var ss float64
	for _, v := range x {
		ss += float64(v) * float64(v)
	}
	return math.Sqrt(ss)
}

// DenseTemplates returns the units in the time domain, [N, NT, C]
// float32: Σ_p W[k, c, p]·wPCA[p, t], Kilosort4's templates.npy.
func DenseTemplates(u *Units, bs *Basis) []float32 {
	u.check()
	if u.P != bs.P {
		panic("curate: units and basis differ in P")
	}
	C, P, nt := u.C, u.P, bs.NT
	out := make([]float32, u.N*nt*C)
	for k := range u.N {
		for c := range C {
			w := u.W[(k*C+c)*P : (k*C+c+1)*P]
			for t := range nt {
				var s float64
				for p, v := range w {
					s += float64(v) * float64(bs.WPCA[p*nt+t])
				}
				out[(k*nt+t)*C+c] = float32(s)
			}
		}
	}
	return out
}

// shiftMatrix returns S (P×P) with S[p·P + q] = Σ_t wPCA[p, t]·
// wPCA[q, clamp(t − δ)]: the PC coefficients x' = S·x are those of the
// waveform Σ_q x[q]·wPCA[q, ·] delayed by δ samples, the vacated samples
// filled with the nearest remaining one.
func (bs *Basis) shiftMatrix(delta int) []float64 {
	P, nt := bs.P, bs.NT
	S := make([]float64, P*P)
	for p := range P {
		for q := range P {
			var s float64
			for t := range nt {
				u := min(max(t-delta, 0), nt-1)
				s += float64(bs.WPCA[p*nt+t]) * float64(bs.WPCA[q*nt+u])
			}
			S[p*P+q] = s
		}
	}
	return S
}

// applyShift replaces each P-vector of x by S·x (float64 sums).
func applyShift(x []float32, S []float64, P int, tmp []float64) {
	for off := 0; off+P <= len(x); off += P {
		v := x[off : off+P]
		for p := range P {
			var s float64
			for q, xv := range v {
				s += S[p*P+q] * float64(xv)
			}
			tmp[p] = s
		}
		for p := range P {
			v[p] = float32(tmp[p])
		}
	}
}
