package preprocess

import "fmt"

// hpLanes is the number of channel rows the vector high-pass filters at
// once: two AVX-512 registers (four AVX2 registers) of float64.
const hpLanes = 16

// hpState is the state a fused pass of the order-3 high-pass carries
// from one step to the next, lane by lane: the last three inputs x1, x2,
// x3 (before the third difference), the all-pole pair's last two outputs
// y1, y2 and the first-order part's last output z1. Its layout is the
// vector kernels' (kernels_avx*_amd64.s).
type hpState [6][hpLanes]float64

// canLanes reports whether the Filter has the vector order-3 path of
// applyLanes on this machine.
func (f *Filter) canLanes() bool {
	return useHPAsm && f.fast && f.order3 && f.n+2*f.ctx >= 4
}

// applyLanes filters in place the hpLanes rows of block, row k being
// block[k·Len() : (k+1)·Len()], each as Apply would, bit for bit: the
// rows are interleaved, lane k holding row k, into a float64 buffer with
// the periodic context; the third difference and the all-pole part run
// fused in one forward and one backward pass of the vector kernel, every
// lane doing the Go code's operations in its order (diff3, allPole3,
// diff3Back, allPole3Back) without fused multiply-add; the gain is
// applied on the way out. The buffer is allocated on first use and kept.
// It panics unless canLanes holds and len(block) = hpLanes·Len().
func (f *Filter) applyLanes(block []float32) {
	if !f.canLanes() {
		panic("preprocess: Filter.applyLanes without the vector path")
	}
	n, L := f.n, f.ctx
	N := n + 2*L
	if len(block) != hpLanes*n {
		panic(fmt.Sprintf("preprocess: Filter.applyLanes: block of %d values, want %d·%d", len(block), hpLanes, n))
	}
	if len(f.lanes) != N*hpLanes {
		f.lanes = make([]float64, N*hpLanes)
	}
	e := f.lanes
	// Extended step j holds row sample (j − L) mod n.
	lanesIn(e[:L*hpLanes], block, n, n-L)
	lanesIn(e[L*hpLanes:(L+n)*hpLanes], block, n, 0)
	lanesIn(e[(L+n)*hpLanes:], block, n, 0)
	var st hpState
	c := [4]float64{3, f.p1, f.p2, f.q1}
	f.laneStart(e, 0, 1, &st)
	hpPass(e, 3, N-3, 1, &st, &c)
	f.laneStart(e, N-1, -1, &st)
	hpPass(e, N-4, N-3, -1, &st, &c)
	lanesOut(block, n, e[L*hpLanes:(L+n)*hpLanes], f.g2)
}

// lanesInGo sets e[j·hpLanes+k] = float64(block[k·n+s0+j]) for the
// len(e)/hpLanes steps j.
func lanesInGo(e []float64, block []float32, n, s0 int) {
	m := len(e) / hpLanes
	for k := range hpLanes {
		r := block[k*n+s0 : k*n+s0+m]
		for j, v := range r {
			e[j*hpLanes+k] = float64(v)
		}
	}
}

// lanesOutGo sets block[k·n+i] = float32(g·e[i·hpLanes+k]) for the
// len(e)/hpLanes steps i, as Filter.output rounds.
func lanesOutGo(block []float32, n int, e []float64, g float64) {
	m := len(e) / hpLanes
	for k := range hpLanes {
		r := block[k*n : k*n+m]
		for i := range r {
			r[i] = float32(g * e[i*hpLanes+k])
		}
	}
}

// laneStart runs, in every lane, the first three steps of a fused pass
// over the extended rows in e, at the steps i0, i0+s, i0+2s (s = ±1),
// where the third difference still has fewer than three earlier inputs,
// exactly as diff3 (diff3Back) and allPole3 (allPole3Back) compute them
// from zero state; it writes the results to e and leaves in st the state
// the kernel continues from at step i0+3s.
func (f *Filter) laneStart(e []float64, i0, s int, st *hpState) {
	p1, p2, q1 := f.p1, f.p2, f.q1
	for k := range hpLanes {
		j0, j1, j2 := i0*hpLanes+k, (i0+s)*hpLanes+k, (i0+2*s)*hpLanes+k
		x0, x1, x2 := e[j0], e[j1], e[j2]
		d := [3]float64{x0, x1 - 3*x0, (x2 - 3*x1) + 3*x0}
		var y1, y2, z1 float64
		for i, v := range d {
			y := (v - p2*y2) - p1*y1
			z := y - q1*z1
			y2, y1, z1 = y1, y, z
			e[[3]int{j0, j1, j2}[i]] = z
		}
		st[0][k], st[1][k], st[2][k] = x2, x1, x0
		st[3][k], st[4][k], st[5][k] = y1, y2, z1
	}
}
