package preprocess

import (
	"fmt"
	"runtime"
	"time"

	"dspk/internal/par"
	"dspk/linalg"
)

// cpuPreprocessor is the CPU back end of [Preprocessor]: pure Go, its work
// spread over GOMAXPROCS goroutines. It owns all the scratch space it
// needs and runs one window at a time.
type cpuPreprocessor struct {
	p       Params
	c, t    int // channels used and padded window length
	cf      int // channels in the file
	chanMap []int
	workers int
	groups  [][]int // channels of each CAR group; nil: one group

	sums   [][]int64   // per-worker channel sums over its time range
	sums32 [][]int32   // per-worker int32 sums of a run of ≤ 32768 columns
	mean   []float32   // per-channel mean of the window (sign applied)
	vals   [][]float32 // per-worker blockT columns of C values, [blockT][C]
	sel    [][]float32 // per-worker copy of it for the median (C+16: lowerMedianVec)
	selB   [][]float32 // per-worker second buffer of lowerMedianVec (C+16)
	// run0 ≥ 0 if the channel map is the run of file rows run0 … run0+C−1
	// (the vector conversion then reads them in place); −1 otherwise.
	run0 int
	blk  [][]float32 // per-worker [C][blockT] block of output columns
	filt []*Filter   // per-worker high-pass
	tmp  []float32   // [C][T] before whitening, allocated on first use

	stages Stages // of the last Run

	// Arguments of the Run in progress, read by its workers.
	src []int16
	out []float32

	// The steps' loop and its functions, method values bound once in
	// newCPU so that a Run allocates nothing.
	loop                   par.Loop
	sumFn, refFn, filterFn func(w, lo, hi int)
}

// blockT is the number of time columns a worker converts and references
// before writing them out, one 64-byte line of float32 per channel.
const blockT = 16

// newCPU returns the CPU back end for p, or the error [New] describes.
func newCPU(p Params) (*cpuPreprocessor, error) {
	if p.BatchSize < 1 || p.NT < 0 {
		return nil, fmt.Errorf("preprocess: window of batch_size = %d samples and nt = %d: need batch_size ≥ 1 and nt ≥ 0", p.BatchSize, p.NT)
	}
	if p.NChanFile < 1 {
		return nil, fmt.Errorf("preprocess: %d channels in the file: need at least 1", p.NChanFile)
	}
	if len(p.ChanMap) == 0 {
		return nil, fmt.Errorf("preprocess: empty channel map")
	}
	for i, r := range p.ChanMap {
		if r < 0 || r >= p.NChanFile {
			return nil, fmt.Errorf("preprocess: channel map entry %d is file row %d, outside [0, %d)", i, r, p.NChanFile)
		}
	}
	T := p.T()
	f, err := NewFilter(p.Fs, p.HighpassCutoff, p.HighpassOrder, T)
	if err != nil {
		return nil, err
	}
	p.ChanMap = append([]int(nil), p.ChanMap...)
	C := len(p.ChanMap)
	if p.Groups != nil && len(p.Groups) != C {
		return nil, fmt.Errorf("preprocess: %d group ids for %d channels", len(p.Groups), C)
	}
	pp := &cpuPreprocessor{
		p: p, c: C, t: T, cf: p.NChanFile, chanMap: p.ChanMap,
		workers: max(1, runtime.GOMAXPROCS(0)),
		mean:    make([]float32, C),
		run0:    p.ChanMap[0],
	}
	pp.sumFn, pp.refFn, pp.filterFn = pp.sumRange, pp.referenceRange, pp.filterRange
	for i, r := range p.ChanMap {
		if r != pp.run0+i {
			pp.run0 = -1
			break
		}
	}
	if p.Groups != nil {
		p.Groups = append([]int(nil), p.Groups...)
		pp.p.Groups = p.Groups
		idx := map[int]int{}
		for i, g := range p.Groups {
			k, ok := idx[g]
			if !ok {
				k = len(pp.groups)
				idx[g] = k
				pp.groups = append(pp.groups, nil)
			}
			pp.groups[k] = append(pp.groups[k], i)
		}
		if len(pp.groups) == 1 {
			pp.groups = nil // one group is plain CAR
		}
	}
	for w := range pp.workers {
		pp.sums = append(pp.sums, make([]int64, p.NChanFile))
		pp.sums32 = append(pp.sums32, make([]int32, p.NChanFile))
		pp.vals = append(pp.vals, make([]float32, blockT*C))
		pp.sel = append(pp.sel, make([]float32, C+16))
		pp.selB = append(pp.selB, make([]float32, C+16))
		pp.blk = append(pp.blk, make([]float32, C*blockT))
		if w == 0 {
			pp.filt = append(pp.filt, f)
		} else {
			pp.filt = append(pp.filt, f.Clone())
		}
	}
	return pp, nil
}

// Params returns the parameters the cpuPreprocessor was built with.
func (pp *cpuPreprocessor) Params() Params {
	p := pp.p
	p.ChanMap = append([]int(nil), p.ChanMap...)
	if p.Groups != nil {
		p.Groups = append([]int(nil), p.Groups...)
	}
	return p
}

// Channels returns C, the number of channels in the output.
func (pp *cpuPreprocessor) Channels() int { return pp.c }

// Len returns T, the number of samples of a padded window.
func (pp *cpuPreprocessor) Len() int { return pp.t }

// Filter returns the high-pass the cpuPreprocessor applies to each channel
// row (shared with it: do not use it while Run is in progress).
func (pp *cpuPreprocessor) Filter() *Filter { return pp.filt[0] }

// Run preprocesses one padded window. src holds the window as stored,
// interleaved: src[t*NChanFile+c] for t in [0, T) (a recording.Batch's
// Data); dst receives the result channel-major, dst[c*T+t] for the C
// channels of the map. The steps follow Kilosort4 (kilosort4.md §4):
//
//  1. select the mapped rows and convert to float32;
//  2. negate if Invert;
//  3. subtract each channel's mean over the T samples;
//  4. if CAR, subtract from each time column its lower median across
//     channels ([LowerMedian]);
//  5. high-pass each channel row ([Filter]);
//  6. if w is not nil, whiten: dst = W·(the result of 5).
//
// Means are exact (integer sums); the values of steps 3 and 4 are rounded
// to float32 as Kilosort4's float32 tensors are; the high-pass runs in
// float64. Run panics if len(src) ≠ T·NChanFile, len(dst) ≠ C·T, or
// w.C ≠ C. With a whitening, Run allocates a [C][T] scratch buffer on
// first use and keeps it.
func (pp *cpuPreprocessor) Run(dst []float32, src []int16, w *linalg.Whitening) {
	C, T := pp.c, pp.t
	if len(src) != T*pp.cf {
		panic(fmt.Sprintf("preprocess: Run: len(src) = %d, want T·NChanFile = %d·%d", len(src), T, pp.cf))
	}
	if len(dst) != C*T {
		panic(fmt.Sprintf("preprocess: Run: len(dst) = %d, want C·T = %d·%d", len(dst), C, T))
	}
	if w != nil && w.C != C {
		panic(fmt.Sprintf("preprocess: Run: whitening of %d channels for %d", w.C, C))
	}
	out := dst
	if w != nil {
		if pp.tmp == nil {
			pp.tmp = make([]float32, C*T)
		}
		out = pp.tmp
	}
	t0 := time.Now()
	pp.reference(out, src)
	t1 := time.Now()
	pp.src, pp.out = nil, out
	pp.loop.Split(C, pp.workers, pp.filterFn)
	pp.out = nil
	t2 := time.Now()
	if w != nil {
		w.Apply(dst, out, T)
	}
	pp.stages = Stages{Reference: t1.Sub(t0), Highpass: t2.Sub(t1), Whiten: time.Since(t2),
		HighpassFlops: pp.filt[0].flops() * int64(C)}
}

// Stages is the wall time of each step of the CPU back end's last Run,
// every step spread over all workers: Reference for steps 1–4 (int16
// selection and conversion, mean, CAR median), Highpass for step 5 and
// Whiten for step 6 (0 without a whitening). HighpassFlops counts the
// high-pass's float64 additions and multiplications (0 on its FFT path,
// which is not timed against a floor).
type Stages struct {
	Reference, Highpass, Whiten time.Duration
	HighpassFlops               int64
}

// flops returns the float64 additions and multiplications of one row's
// order-3 periodic high-pass: per sample of the extended row, the third
// difference (2 multiplications, 3 additions) and the all-pole part
// (3 and 3) in each direction, and the gain on the way out; 0 for the
// other paths.
func (f *Filter) flops() int64 {
	if !f.fast || !f.order3 {
		return 0
	}
	return 22*int64(f.n+2*f.ctx) + int64(f.n)
}

// reference runs steps 1–4 of Run (selection, sign, mean removal, CAR)
// from src into out.
func (pp *cpuPreprocessor) reference(out []float32, src []int16) {
	pp.src, pp.out = src, out
	pp.loop.Split(pp.t, pp.workers, pp.sumFn)
	pp.finishMean()
	pp.loop.Split((pp.t+blockT-1)/blockT, pp.workers, pp.refFn)
	pp.src, pp.out = nil, nil
}

// sumRange accumulates, in worker w's sums, every file channel over time
// columns [lo, hi): the channels the vector kernel covers in int32 over
// runs of at most 32768 columns (exact), the others in int64.
func (pp *cpuPreprocessor) sumRange(w, lo, hi int) {
	acc, acc32 := pp.sums[w], pp.sums32[w]
	clear(acc)
	cf := pp.cf
	for t0 := lo; t0 < hi; t0 += 1 << 15 {
		t1 := min(t0+1<<15, hi)
		clear(acc32)
		n := sumRowsVec(acc32, pp.src[t0*cf:t1*cf], cf, t1-t0)
		for c, v := range acc32[:n] {
			acc[c] += int64(v)
		}
		for t := t0; t < t1; t++ {
			row := pp.src[t*cf+n : t*cf+cf]
			for c, v := range row {
				acc[n+c] += int64(v)
			}
		}
	}
}

// finishMean combines the workers' sums into the per-channel means of the
// mapped channels, sign applied.
func (pp *cpuPreprocessor) finishMean() {
	W := min(pp.workers, pp.t)
	for i, r := range pp.chanMap {
		var s int64
		for w := range W {
			s += pp.sums[w][r]
		}
		m := float64(s) / float64(pp.t)
		if pp.p.InvertSign {
			m = -m
		}
		pp.mean[i] = float32(m)
	}
}

// referenceRange converts, centres and (if CAR) references the time
// columns of blocks [lo, hi) of blockT columns, writing them to pp.out.
// The columns of a block are gathered in worker w's cols ([blockT][C]);
// without CAR groups each is then written out minus its median, blockT
// columns of 16 channels at a time by the vector transpose where it can.
func (pp *cpuPreprocessor) referenceRange(w, lo, hi int) {
	C, T, cf := pp.c, pp.t, pp.cf
	cols, sel, selB, blk := pp.vals[w], pp.sel[w], pp.selB[w], pp.blk[w]
	mean, cmap := pp.mean, pp.chanMap
	var meds [blockT]float32
	var sign float32 = 1
	if pp.p.InvertSign {
		sign = -1
	}
	grouped := pp.groups != nil && pp.p.DoCAR
	for b := lo; b < hi; b++ {
		t0 := b * blockT
		nb := min(blockT, T-t0)
		for k := range nb {
			vals := cols[k*C : (k+1)*C]
			row := pp.src[(t0+k)*cf : (t0+k)*cf+cf]
			if pp.run0 < 0 || !convertVec(vals, row[pp.run0:pp.run0+C], mean, sign) {
				for i, r := range cmap {
					vals[i] = sign*float32(row[r]) - mean[i]
				}
			}
			if grouped {
				for _, g := range pp.groups {
					s := sel[:len(g)]
					for j, i := range g {
						s[j] = vals[i]
					}
					med := LowerMedian(s)
					for _, i := range g {
						blk[i*blockT+k] = vals[i] - med
					}
				}
				continue
			}
			var med float32
			if pp.p.DoCAR {
				var ok bool
				if med, ok = lowerMedianVec(vals, sel, selB); !ok {
					copy(sel, vals)
					med = LowerMedian(sel[:C])
				}
			}
			meds[k] = med
		}
		if grouped {
			for i := range C {
				copy(pp.out[i*T+t0:i*T+t0+nb], blk[i*blockT:i*blockT+nb])
			}
			continue
		}
		i0 := 0
		if nb == blockT {
			i0 = centreVec(pp.out[t0:], T, cols, C, &meds)
		}
		for i := i0; i < C; i++ {
			o := pp.out[i*T+t0 : i*T+t0+nb]
			for k := range o {
				o[k] = cols[k*C+i] - meds[k]
			}
		}
	}
}

// filterRange high-passes rows [lo, hi) of pp.out in place.
func (pp *cpuPreprocessor) filterRange(w, lo, hi int) {
	f, T := pp.filt[w], pp.t
	c := lo
	if f.canLanes() {
		for ; c+hpLanes <= hi; c += hpLanes {
			f.applyLanes(pp.out[c*T : (c+hpLanes)*T])
		}
	}
	for ; c+1 < hi; c += 2 {
		r0, r1 := pp.out[c*T:c*T+T], pp.out[(c+1)*T:(c+1)*T+T]
		f.apply2(r0, r0, r1, r1)
	}
	if c < hi {
		row := pp.out[c*T : c*T+T]
		f.Apply(row, row)
	}
}
