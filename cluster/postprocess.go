package cluster

import (
	"context"
	"fmt"
	"math"
	"slices"

	"dspk/curate"
	"dspk/detect"
	"dspk/internal/par"
	"dspk/kilosort"
)

// PostprocessTemplates turns the clusters of the first clustering into
// learned templates (Kilosort4's postprocess_templates, kilosort4-sort.md
// §5.9). wall holds n clusters' mean features [n][C][P] (Result.Wall) and
// counts their spikes; tm gives the universal templates (wTEMP) and the
// feature basis (wPCA, P rows).
//
// Align: each cluster's time-domain template ũ_k[c][t] = Σ_p W[k,c,p]·
// wPCA[p,t] is laid end to end with the others on every channel and
// filtered with the K wTEMP rows (centred, zeros outside: responses leak
// across neighbouring templates as in Kilosort4); the peak lag τ_k is the
// first t of template k's samples maximising |response| over channels and
// filters; ũ_k is rolled circularly by nt/2 − τ_k and projected back onto
// wPCA.
//
// Merge duplicates: bases in decreasing spike count (equal counts: higher
// index first), each compared with every other template by the maximum
// over lags of the normalised cross-correlation; candidates in decreasing
// similarity down to kilosort.PostprocessR (equal similarity: higher index
// first); the first whose norm differs by less than
// kilosort.PostprocessNormTol (|2(‖a‖−‖b‖)/(‖a‖+‖b‖)|) is merged into the
// base as the count-weighted mean and the base is examined again.
//
// It returns the surviving templates in their original order, U [n'][P][C]
// float32 (U[(u*P+p)*C+c]), and n'. It panics if the sizes disagree.
func PostprocessTemplates(wall []float32, counts []int, C int, tm *detect.Templates) ([]float32, int) {
	u, n, _ := PostprocessTemplatesContext(context.Background(), wall, counts, C, tm)
	return u, n
}

// PostprocessTemplatesContext is [PostprocessTemplates] that stops once
// ctx is done (between the merge's bases) and then returns the context's
// cause.
func PostprocessTemplatesContext(ctx context.Context, wall []float32, counts []int, C int, tm *detect.Templates) ([]float32, int, error) {
	P, nt := tm.P, tm.NT
	n := len(counts)
	if len(wall) != n*C*P {
		panic(fmt.Sprintf("cluster: PostprocessTemplates: %d values for %d clusters × %d channels × %d features", len(wall), n, C, P))
	}
	u := alignTemplates(wall, n, C, tm)
	stop := func() bool { return ctx.Err() != nil }
	out, m := mergeTemplates(u, counts, C, P, nt, tm.WPCA, kilosort.PostprocessR, kilosort.PostprocessNormTol, stop)
	if stop() {
		return nil, 0, context.Cause(ctx)
	}
	return out, m, nil
}

// timeTemplates returns ũ [n][C][nt] float32 from W [n][C][P].
func timeTemplates(wall []float32, n, C int, tm *detect.Templates) []float32 {
	P, nt := tm.P, tm.NT
	ut := make([]float32, n*C*nt)
	for k := 0; k < n; k++ {
		for c := 0; c < C; c++ {
			w := wall[(k*C+c)*P : (k*C+c+1)*P]
			if allZero(w) {
				continue
			}
			dst := ut[(k*C+c)*nt : (k*C+c+1)*nt]
			for t := range dst {
				s := 0.0
				for p, v := range w {
					s += float64(v) * float64(tm.WPCA[p*nt+t])
				}
				dst[t] = float32(s)
			}
		}
	}
	return ut
}

func allZero(v []float32) bool {
	for _, x := range v {
		if x != 0 {
			return false
		}
	}
	return true
}

// peakLags returns each template's τ_k: the first t in [0, nt) maximising
// max over channels and wTEMP rows of |Σ_j s[k·nt + t + j − nt/2]·
// wTEMP[f, j]|, s a channel's templates laid end to end (zero outside).
func peakLags(ut []float32, n, C int, tm *detect.Templates) []int {
	nt, K := tm.NT, tm.K
	half := nt / 2
	lags := make([]int, n)
	best := make([]float64, nt)
	seg := make([]float64, 3*nt) // templates k−1, k, k+1 of one channel
	for k := 0; k < n; k++ {
		clear(best)
		for c := 0; c < C; c++ {
			nz := false
			for j := -1; j <= 1; j++ {
				kk := k + j
				dst := seg[(j+1)*nt : (j+2)*nt]
				if kk < 0 || kk >= n {
					clear(dst)
					continue
				}
				src := ut[(kk*C+c)*nt : (kk*C+c+1)*nt]
				for t, v := range src {
					dst[t] = float64(v)
					nz = nz || v != 0
				}
			}
			if !nz {
				continue
			}
			for t := 0; t < nt; t++ {
				for f := 0; f < K; f++ {
					w := tm.WTEMP[f*nt : (f+1)*nt]
					s := 0.0
					for j, wj := range w {
						s += seg[nt+t+j-half] * float64(wj)
					}
					best[t] = max(best[t], math.Abs(s))
				}
			}
		}
		for t := 1; t < nt; t++ {
			if best[t] > best[lags[k]] {
				lags[k] = t
			}
		}
	}
	return lags
}

// alignTemplates returns the aligned templates U [n][P][C] (float32).
func alignTemplates(wall []float32, n, C int, tm *detect.Templates) []float32 {
	P, nt := tm.P, tm.NT
	ut := timeTemplates(wall, n, C, tm)
	lags := peakLags(ut, n, C, tm)
	u := make([]float32, n*P*C)
	for k := 0; k < n; k++ {
		shift := nt/2 - lags[k]
		for c := 0; c < C; c++ {
			src := ut[(k*C+c)*nt : (k*C+c+1)*nt]
			if allZero(src) {
				continue
			}
			for p := 0; p < P; p++ {
				wp := tm.WPCA[p*nt : (p+1)*nt]
				s := 0.0
				for t := 0; t < nt; t++ {
					// rolled[t] = src[(t − shift) mod nt]
					s += float64(wp[t]) * float64(src[((t-shift)%nt+nt)%nt])
				}
				u[(k*P+p)*C+c] = float32(s)
			}
		}
	}
	return u
}

// wtw returns WtW[p][q][ℓ] = Σ_t wPCA[p,t]·wPCA[q,t+ℓ−nt], ℓ = 0…2nt.
func wtw(wpca []float32, P, nt int) []float64 {
	L := 2*nt + 1
	out := make([]float64, P*P*L)
	for p := 0; p < P; p++ {
		for q := 0; q < P; q++ {
			for l := 0; l < L; l++ {
				s := 0.0
				for t := 0; t < nt; t++ {
					if j := t + l - nt; j >= 0 && j < nt {
						s += float64(wpca[p*nt+t]) * float64(wpca[q*nt+j])
					}
				}
				out[(p*P+q)*L+l] = s
			}
		}
	}
	return out
}

// pairSim returns the similarity of templates a and b ([P][C], norms na
// and nb, a non-zero on channels ca): the maximum over lags of the
// cross-correlation of their time-domain forms scaled to unit norm,
// Σ_c Σ_{p,q} â[p,c]·b̂[q,c]·WtW[p,q,ℓ]. utu is P×P scratch.
func pairSim(a, b []float64, na, nb float64, ca []int, C, P int, ww, utu []float64) float64 {
	L := len(ww) / (P * P)
	clear(utu)
	for _, c := range ca {
		for p := 0; p < P; p++ {
			x := a[p*C+c] / (1e-6 + na)
			for q := 0; q < P; q++ {
				utu[p*P+q] += x * b[q*C+c] / (1e-6 + nb)
			}
		}
	}
	best := math.Inf(-1)
	for l := 0; l < L; l++ {
		s := 0.0
		for pq, v := range utu {
			s += v * ww[pq*L+l]
		}
		best = max(best, s)
	}
	return best
}

// mergeTemplates merges near-duplicate templates of u [n][P][C] (see
// PostprocessTemplates) and returns the survivors and their number. Once
// stop (if not nil) reports true it skips the bases left, and its result
// means nothing.
func mergeTemplates(u []float32, counts []int, C, P, nt int, wpca []float32, r, tol float64, stop func() bool) ([]float32, int) {
	t := newTemplateMerge(u, counts, C, P, nt, wpca)
	t.loop.Stop = stop
	n := len(counts)
	order := make([]int, n)
	for k := range order {
		order[k] = k
	}
	slices.SortStableFunc(order, func(a, b int) int {
		if counts[a] != counts[b] {
			return counts[b] - counts[a]
		}
		return b - a
	})
	t.loop.Run(order, r, func(k, j int) bool {
		nk, nj := t.nrm[k], t.nrm[j]
		return math.Abs(2*(nk-nj)/(nk+nj)) < tol
	})
	var out []float32
	nOut := 0
	for k := 0; k < n; k++ {
		if t.loop.Alive[k] {
			for _, v := range t.w[k*P*C : (k+1)*P*C] {
				out = append(out, float32(v))
			}
			nOut++
		}
	}
	return out, nOut
}

// templateMerge is the state of one mergeTemplates: the templates in
// float64 as merges change them, their spike counts and norms, and the
// scratch of the similarities.
type templateMerge struct {
	w, cnt, nrm []float64
	ww          []float64 // wtw of the basis
	C, P        int
	sim         []float64 // the similarities to the base last scored
	// The similarities to a base are split between the workers (each
	// value its own, so the split changes nothing); utus[i] is worker
	// i's scratch.
	workers int
	utus    [][]float64
	loop    curate.MergeLoop
}

// newTemplateMerge returns the merge of the n = len(counts) templates of u
// [n][P][C] with counts spikes.
func newTemplateMerge(u []float32, counts []int, C, P, nt int, wpca []float32) *templateMerge {
	n := len(counts)
	t := &templateMerge{w: make([]float64, len(u)), cnt: make([]float64, n), nrm: make([]float64, n),
		ww: wtw(wpca, P, nt), C: C, P: P, sim: make([]float64, n), workers: par.Workers(n / 64)}
	for i, v := range u {
		t.w[i] = float64(v)
	}
	for k, v := range counts {
		t.cnt[k] = float64(v)
	}
	t.loop = curate.MergeLoop{Alive: make([]bool, n), Score: t.score, Join: t.join}
	for k := range n {
		t.loop.Alive[k] = true
		t.nrm[k] = t.norm(k)
	}
	t.utus = make([][]float64, t.workers)
	for i := range t.utus {
		t.utus[i] = make([]float64, P*P)
	}
	return t
}

// norm returns the norm of template k.
func (t *templateMerge) norm(k int) float64 {
	s := 0.0
	for _, v := range t.w[k*t.P*t.C : (k+1)*t.P*t.C] {
		s += v * v
	}
	return math.Sqrt(s)
}

// chans lists the non-zero channels of template k.
func (t *templateMerge) chans(k int) []int {
	var out []int
	for c := 0; c < t.C; c++ {
		for p := 0; p < t.P; p++ {
			if t.w[(k*t.P+p)*t.C+c] != 0 {
				out = append(out, c)
				break
			}
		}
	}
	return out
}

// score returns the similarity of every live template to base k (0 for k
// and the merged ones).
func (t *templateMerge) score(k int) []float64 {
	n, C, P, w := len(t.sim), t.C, t.P, t.w
	nk := t.nrm[k]
	ck := t.chans(k)
	alive := t.loop.Alive
	par.Split(n, t.workers, func(i, j0, j1 int) {
		for j := j0; j < j1; j++ {
			t.sim[j] = 0
			if j == k || !alive[j] {
				continue
			}
			t.sim[j] = pairSim(w[k*P*C:(k+1)*P*C], w[j*P*C:(j+1)*P*C], nk, t.nrm[j], ck, C, P, t.ww, t.utus[i])
		}
	})
	return t.sim
}

// join merges template j into k: their count-weighted mean replaces k,
// and j is cleared.
func (t *templateMerge) join(k, j int) {
	m, w := t.P*t.C, t.w
	tot := t.cnt[k] + t.cnt[j]
	for i := k * m; i < (k+1)*m; i++ {
		w[i] = (t.cnt[k]*w[i] + t.cnt[j]*w[i-k*m+j*m]) / tot
	}
	clear(w[j*m : (j+1)*m])
	t.nrm[k], t.nrm[j] = t.norm(k), 0
	t.cnt[k] = tot
}
