package detect

import (
	"fmt"
	"math"
	"math/bits"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"

	"dspk/compute"
	"time"
)

// boundSlack is the relative margin of the pruning test U² > Th²·(1 −
// boundSlack). The float32 rounding of U² and of a response (sums of ten
// products) is below 1e-6 relative, so any point whose computed response
// could exceed Th is evaluated.
const boundSlack = 1e-4

// boundBlock is the number of columns of the coarse pruning bound.
const boundBlock = 8

// Stats counts the work of one [Detector.Detect] call.
type Stats struct {
	// Columns is the number of window columns correlated, halos of the
	// chunks included.
	Columns int64
	// ConvFlops is the arithmetic of a direct correlation of those
	// columns, 2·C·K·nt per column (the FFT path does less).
	ConvFlops int64
	// BlockBounds is the number of (centre, block of boundBlock columns)
	// whose coarse bound Σ_{c∈iC(f)} max_{t∈block,k} B[c,k,t]² was
	// computed, and BlockPass the number of those above Th².
	BlockBounds, BlockPass int64
	// BoundEvals is the number of (centre, column) pairs whose bound
	// U² = Σ_{c∈iC(f)} max_k B[c,k,t]² was computed.
	BoundEvals int64
	// Survivors is the number of those whose bound exceeded Th² (all of
	// them without pruning): their per-shape bounds were computed.
	Survivors int64
	// ShapeEvals is the number of (centre, column, shape k) whose S
	// responses were computed.
	ShapeEvals int64
	// Strong is the number of (centre, column) with a response above Th.
	Strong int64
	// Spikes is the number of detections kept.
	Spikes int64
	// FFTFlops is the arithmetic of the correlation as done: per FFT
	// block of a channel pair, 1 + K transforms of (n/4)·log₄n radix-4
	// butterflies of 34 flops and K spectrum products of 6n flops.
	FFTFlops int64
	// RespBlocks is the number of blocks of boundBlock columns whose
	// bounds and responses were formed together (the vector path's unit
	// of evaluation work: K·(S+1)·NC·8 multiply-adds each).
	RespBlocks int64
	// ConvTime, EvalTime and SuppressTime are the time the goroutines
	// spent, summed, in the correlation, in the bounds and responses, and
	// in the suppression and the features; not written to JSON (they vary
	// from run to run).
	ConvTime, EvalTime, SuppressTime time.Duration `json:"-"`
}

// Add adds the counts of o to s (to total the work of several windows).
func (s *Stats) Add(o Stats) {
	s.Columns += o.Columns
	s.ConvFlops += o.ConvFlops
	s.BlockBounds += o.BlockBounds
	s.BlockPass += o.BlockPass
	s.BoundEvals += o.BoundEvals
	s.Survivors += o.Survivors
	s.ShapeEvals += o.ShapeEvals
	s.Strong += o.Strong
	s.Spikes += o.Spikes
	s.FFTFlops += o.FFTFlops
	s.RespBlocks += o.RespBlocks
	s.ConvTime += o.ConvTime
	s.EvalTime += o.EvalTime
	s.SuppressTime += o.SuppressTime
}

// Detector runs Kilosort4's universal-template detection (kilosort4.md
// §9–§10) on whitened windows of one shape. It is built once and reused
// for every window; Detect allocates nothing once the output has grown.
// A Detector is not safe for concurrent use.
type Detector struct {
	dev *compute.Device
	g   *Grid
	tm  *Templates

	c, t, nt, nt0, half int
	k, s, nc, nc2, p, f int
	th, thr2            float32

	chunk, workers int
	noPrune        bool
	gpu            *gpuDetector // the CUDA back end, nil on the CPU

	// The started windows awaiting Finish, oldest first from pend[head]:
	// whether each went to the GPU and, on the CPU, its spikes and counts.
	pend        [StartDepth]pendingWindow
	head, npend int

	spec []complex128
	wt   []float32 // the grid's weights transposed: wt[(f*nc+j)*S+s]
	// ring is the number of channels whose B a worker keeps: channel c
	// in slot c % ring. The centres whose
	// highest channel lies in group g (channels g·blockGroup …) are
	// fg[fgOff[g]:fgOff[g+1]], in increasing order; all their channels
	// are still in the ring when group g has been correlated.
	ring      int
	fg, fgOff []int32
	ws        []*worker
	res       []Spikes

	// The current call.
	x        []float32
	ownStart int64
	owned    int
	nchunks  int
	next     atomic.Int64
	wid      atomic.Int64
	wg       sync.WaitGroup
	runFn    func()
}

// worker is one goroutine's scratch.
type worker struct {
	cor *correlator
	b   []float32 // B of the ring's channels: b[((c%ring)*K+k)*W+i]
	m   []float32 // max_k B² of the ring's channels: m[(c%ring)*W+i]
	mb  []float32 // block maxima of max_k B² of the ring: mb[(c%ring)*nb+blk]
	sb  []float32 // coarse bounds of one centre: sb[blk]
	// The blocks whose coarse bound passes: bit blk%64 of pass[blk/64].
	pass []uint64
	u    []float32 // fine bounds of one block: u[i−i0]
	// The offsets of one centre's channels in mb, m and b.
	boffs, moffs, bfoffs []int
	goffs                []int // offsets in b of one (f, i)'s channels
	// The blocks of a centre or a batch (evalResp) with passing columns:
	// their numbers and passing columns (room for every block), then their bounds and responses (respGo, respSize floats
	// each) and their choices (chooseGo, chooseRows·respStride each).
	bblk   []int32
	bcols  []uint32
	resp   []float32
	choice []float32
	acc    []float32 // the S responses of one (f, i, k)
	// The strong points, centre by centre, each centre's in column order:
	// centre f's are strong[run[2f]:run[2f+1]]. bv holds the nc values
	// B[iC(j,f), k, i] of the chosen shape k of each strong point that can
	// be kept, for its position (emit).
	strong []strongPt
	run    []int32
	bv     []float32
	dets   []strongPt
	st     Stats
}

// strongPt is a (centre, column) whose best response exceeds Th; its B
// values are bv[v : v+nc] of its worker, v = −1 if it cannot be kept.
type strongPt struct {
	f, i int32
	a    float32
	v    int32
	q    int16
	sign int8
}

// NewDetector returns a detector on dev (nil means the CPU) for whitened
// windows of g.C() channels × T columns (T = NT + 2·nt, the window's owned
// columns starting at column nt), with the templates tm and the
// thresholds of prm. On a CUDA device, [Detector.DetectWindow] detects
// on the GPU from the window's working array there (gpuDetector in
// cuda.go: the same spikes, bit for bit but for float32 rounding ties of
// the filter bank) and only the spikes come back; [Detector.Detect] of a
// host window always runs on the CPU. The error is for a device back
// end's failures. On the CPU, work is
// split into chunks of owned columns (two FFT blocks less the ±nt0min
// halo: 1888 columns for Kilosort4's sizes) taken by GOMAXPROCS
// goroutines; each goroutine keeps (K+1)·W floats of B and max_k B² and
// W/8 block maxima for each channel of its ring (W = chunk + 2·nt0min;
// the ring reaches from the lowest channel of any centre to the end of
// the blockGroup-channel group of its highest: 15 channels and 0.8 MB
// for NP1) and the strong points of a chunk. It panics
// if prm is invalid, tm does not have prm.NT samples, or T ≤ 2·nt.
func NewDetector(dev *compute.Device, g *Grid, tm *Templates, T int, prm Params) (*Detector, error) {
	if err := prm.Validate(); err != nil {
		panic(err.Error())
	}
	tm.check()
	if tm.NT != prm.NT {
		panic(fmt.Sprintf("detect: templates of %d samples for nt = %d", tm.NT, prm.NT))
	}
	if T <= 2*prm.NT {
		panic(fmt.Sprintf("detect: window of %d columns with %d of padding on each side", T, prm.NT))
	}
	if tm.K*g.S > math.MaxInt16 {
		panic(fmt.Sprintf("detect: %d templates × %d sizes", tm.K, g.S))
	}
	d := &Detector{
		dev: dev, g: g, tm: tm,
		c: g.C(), t: T, nt: prm.NT, nt0: prm.NT0Min, half: prm.NT / 2,
		k: tm.K, s: g.S, nc: g.NC, nc2: g.NC2, p: tm.P, f: g.F(),
		th: float32(prm.ThUniversal),
	}
	d.thr2 = float32(prm.ThUniversal * prm.ThUniversal * (1 - boundSlack))
	d.wt = make([]float32, len(g.Weights))
	ng := (d.c + blockGroup - 1) / blockGroup
	d.fgOff = make([]int32, ng+1)
	d.ring = 1
	for f := range d.f {
		ic := g.IC[f*d.nc : (f+1)*d.nc]
		hi := int(slices.Max(ic)) / blockGroup
		// Channels lowest … the last of the group are in the ring.
		end := min(d.c, (hi+1)*blockGroup)
		d.ring = max(d.ring, end-int(slices.Min(ic)))
		d.fgOff[hi+1]++
	}
	for i := range ng {
		d.fgOff[i+1] += d.fgOff[i]
	}
	d.fg = make([]int32, d.f)
	next := slices.Clone(d.fgOff[:ng])
	for f := range d.f {
		hi := int(slices.Max(g.IC[f*d.nc:(f+1)*d.nc])) / blockGroup
		d.fg[next[hi]] = int32(f)
		next[hi]++
	}
	for f := range d.f {
		for s := range d.s {
			for j := range d.nc {
				d.wt[(f*d.nc+j)*d.s+s] = g.Weights[(f*d.s+s)*d.nc+j]
			}
		}
	}
	if dev != nil && dev.Kind() == compute.CUDA {
		var err error
		if d.gpu, err = newGPUDetector(dev, g, tm, T, prm, gpuDetectConfigFor(dev.GPU().Major, dev.GPU().Minor)); err != nil {
			return nil, err
		}
	}
	d.runFn = d.run
	if d.gpu == nil {
		d.cpuInit() // a GPU detector sets up its CPU path at its first Detect
	}
	return d, nil
}

// cpuInit prepares the CPU path: the templates' spectra and the
// per-goroutine scratch.
func (d *Detector) cpuInit() {
	n := fftLen(d.nt)
	d.spec = convSpectra(d.tm.WTEMP, d.k, d.nt, n)
	d.setChunk(2*(n-d.nt+1)-2*d.nt0, runtime.GOMAXPROCS(0))
}

// Device returns the device d was built for (nil for NewDetector(nil, …)).
func (d *Detector) Device() *compute.Device { return d.dev }

// Close releases d's device resources; it may be called more than once.
func (d *Detector) Close() error {
	if d.gpu == nil {
		return nil
	}
	return d.gpu.Close()
}

// DetectWindow is [Detector.Detect] on the working array of win (C×T,
// whitened), a window on d's device: win's owned columns start at file
// sample ownStart. It returns an error if the window cannot be read back
// from its device.
func (d *Detector) DetectWindow(dst *Spikes, win *compute.Window, ownStart int64, owned int) (Stats, error) {
	if d.gpu != nil && win.Device() == d.dev {
		if win.Channels() != d.c || win.Len() != d.t {
			panic(fmt.Sprintf("detect: DetectWindow of a %d×%d window for %d channels × %d columns", win.Channels(), win.Len(), d.c, d.t))
		}
		var st Stats
		err := d.dev.Do(func(c *compute.Ctx) error {
			var err error
			st, err = d.gpu.DetectDevice(c, dst, win.DataMem().Ptr, ownStart, owned)
			return err
		})
		return st, err
	}
	x, err := win.Data()
	if err != nil {
		return Stats{}, err
	}
	return d.Detect(dst, x, ownStart, owned), nil
}

// StartDepth is the number of windows that may be started ([Detector.Start])
// and not yet finished: on a GPU the next window's detection is then
// queued behind the current one's, so that the device never waits for
// the host between windows.
const StartDepth = 2

// pendingWindow is one started window of a Detector.
type pendingWindow struct {
	onGPU bool
	s     Spikes // on the CPU: its spikes
	st    Stats  // on the CPU: its counts
}

// Start begins the detection of win's working array (as DetectWindow);
// Finish completes the oldest started window. On a GPU, Start enqueues
// the work on the detector's own stream, on the window's working array,
// which it takes in exchange for one of its own
// ([compute.Window.SwapDataMem]: the window's array then holds no
// defined values until written again), and returns at once: the window
// may then be reloaded and preprocessed (on the window's stream,
// alongside the detection) and the next window started before Finish
// waits for the first one's spikes. On the CPU, Start detects and
// Finish hands the spikes over. At most StartDepth windows may await
// Finish; Start panics on one more.
func (d *Detector) Start(win *compute.Window, ownStart int64, owned int) error {
	if d.npend == StartDepth {
		panic(fmt.Sprintf("detect: Detector.Start with %d windows awaiting Finish", StartDepth))
	}
	if win.Channels() != d.c || win.Len() != d.t {
		panic(fmt.Sprintf("detect: Start of a %d×%d window for %d channels × %d columns", win.Channels(), win.Len(), d.c, d.t))
	}
	p := &d.pend[(d.head+d.npend)%StartDepth]
	if d.gpu != nil && win.Device() == d.dev {
		err := d.dev.Do(func(c *compute.Ctx) error { return d.gpu.Start(c, win, ownStart, owned) })
		if err == nil {
			p.onGPU = true
			d.npend++
		}
		return err
	}
	x, err := win.Data()
	if err != nil {
		return err
	}
	p.s.Reset()
	p.st = d.Detect(&p.s, x, ownStart, owned)
	p.onGPU = false
	d.npend++
	return nil
}

// Finish appends the spikes of the oldest started window to dst and
// returns its work counts.
func (d *Detector) Finish(dst *Spikes) (Stats, error) {
	if d.npend == 0 {
		panic("detect: Detector.Finish without Start")
	}
	p := &d.pend[d.head]
	d.head = (d.head + 1) % StartDepth
	d.npend--
	if !p.onGPU {
		dst.Append(&p.s)
		return p.st, nil
	}
	var st Stats
	err := d.dev.Do(func(c *compute.Ctx) error {
		var err error
		st, err = d.gpu.Finish(c, dst)
		return err
	})
	return st, err
}

// fftLen is the correlation's FFT length: convBlock, or a larger power of
// 4 for templates longer than half of it.
func fftLen(nt int) int {
	n := convBlock
	for n < 2*nt {
		n *= 4
	}
	return n
}

// setChunk sizes the tasks and the per-goroutine scratch.
func (d *Detector) setChunk(chunk, workers int) {
	inner := d.t - 2*d.nt
	d.chunk = max(1, min(chunk, inner))
	maxChunks := (inner + d.chunk - 1) / d.chunk
	d.workers = max(1, min(workers, maxChunks))
	wmax := min(d.chunk+2*d.nt0, inner)
	n := fftLen(d.nt)
	nbmax := (wmax + boundBlock - 1) / boundBlock
	d.ws = make([]*worker, d.workers)
	for i := range d.ws {
		d.ws[i] = &worker{
			cor:    newCorrelator(d.spec, d.k, d.nt, n),
			b:      make([]float32, d.ring*d.k*wmax),
			m:      make([]float32, d.ring*wmax),
			mb:     make([]float32, d.ring*nbmax),
			sb:     make([]float32, nbmax),
			pass:   make([]uint64, (nbmax+63)/64),
			u:      make([]float32, boundBlock),
			bblk:   make([]int32, 0, nbmax),
			bcols:  make([]uint32, 0, nbmax),
			resp:   make([]float32, evalBatch*d.respSize()),
			choice: make([]float32, evalBatch*chooseRows*respStride),
			boffs:  make([]int, d.nc),
			moffs:  make([]int, d.nc),
			bfoffs: make([]int, d.nc),
			goffs:  make([]int, d.nc),
			acc:    make([]float32, d.s),
			run:    make([]int32, 2*d.f),
		}
	}
	d.res = make([]Spikes, maxChunks)
}

// Grid returns the detector's template-centre grid.
func (d *Detector) Grid() *Grid { return d.g }

// Templates returns the detector's universal templates.
func (d *Detector) Templates() *Templates { return d.tm }

// Detect finds the spikes of one whitened window x ([C][T] row-major)
// and appends them to dst in order of response-peak column, then centre;
// it returns counts of the work done.
//
// Column nt of x is file sample ownStart; the window owns columns
// [nt, nt+owned). A spike is kept if its response-peak column t lies in
// [nt, nt+owned) (always within [nt, T−nt), where Kilosort4 can detect);
// its trough sample, stored in dst.Sample, is ownStart + (t−nt) −
// (nt/2 − nt0min), so it may precede ownStart by up to 10 samples. Every
// peak column is owned by exactly one window, so consecutive windows
// neither lose nor duplicate spikes; as in Kilosort4, suppression by a
// larger response sees columns [nt, T−nt) of this window only.
//
// Detect panics if len(x) != C·T or owned is not in [1, T−2·nt].
func (d *Detector) Detect(dst *Spikes, x []float32, ownStart int64, owned int) Stats {
	if len(x) != d.c*d.t {
		panic(fmt.Sprintf("detect: Detect of %d values for %d channels × %d columns", len(x), d.c, d.t))
	}
	if owned < 1 || owned > d.t-2*d.nt {
		panic(fmt.Sprintf("detect: window owning %d of %d columns", owned, d.t-2*d.nt))
	}
	if d.ws == nil {
		d.cpuInit()
	}
	d.x, d.ownStart, d.owned = x, ownStart, owned
	d.nchunks = (owned + d.chunk - 1) / d.chunk
	d.next.Store(0)
	d.wid.Store(0)
	nw := min(d.workers, d.nchunks)
	d.wg.Add(nw)
	for range nw - 1 {
		go d.runFn()
	}
	d.runFn()
	d.wg.Wait()
	var st Stats
	for _, w := range d.ws[:nw] {
		st.Add(w.st)
	}
	if dst.Len() == 0 {
		dst.NC, dst.P = d.nc, d.p
	}
	for i := range d.nchunks {
		dst.Append(&d.res[i])
	}
	d.x = nil
	return st
}

// run is one goroutine of Detect: it takes chunks until none is left.
func (d *Detector) run() {
	defer d.wg.Done()
	w := d.ws[d.wid.Add(1)-1]
	w.st = Stats{}
	for {
		ci := int(d.next.Add(1) - 1)
		if ci >= d.nchunks {
			return
		}
		d.chunkRun(w, ci)
	}
}

// blockGroup is the number of channels correlated before the centres
// whose highest channel is among them are evaluated (an even number: the
// correlation takes channel pairs).
const blockGroup = 4

// chunkRun detects the spikes whose peak column lies in chunk ci.
func (d *Detector) chunkRun(w *worker, ci int) {
	C, T, K := d.c, d.t, d.k
	R := d.nt0
	c0 := d.nt + ci*d.chunk
	c1 := min(c0+d.chunk, d.nt+d.owned)
	e0, e1 := max(c0-R, d.nt), min(c1+R, T-d.nt)
	W := e1 - e0

	// Temporal correlation of every channel over the chunk and its halo,
	// blockGroup channels at a time (in pairs), into the worker's ring
	// of channels (b, m: ring·(K+1)·W floats, in L2), with the
	// per-channel block maxima of max_k B². After each group the centres
	// whose highest channel lies in it are evaluated: their channels are
	// all in the ring, and the B they read is still in cache.
	//
	// Bound, then the exact responses where the bound allows Th. The
	// bound U² is first taken over blocks of boundBlock columns with the
	// per-channel block maxima of max_k B²; float addition is monotone,
	// so a block whose coarse sum is ≤ Th²(1−boundSlack) has every fine
	// sum ≤ it too, and skipping it changes nothing. The order in which
	// (f, i) are evaluated changes nothing: each is evaluated once, the
	// suppression looks points up by centre and column, and the
	// detections are sorted by (column, centre) below.
	nb := (W + boundBlock - 1) / boundBlock
	ring := d.ring
	b, m := w.b[:ring*K*W], w.m[:ring*W]
	mb := w.mb[:ring*nb]
	w.strong, w.bv = w.strong[:0], w.bv[:0]
	var tConvSum, tEvalSum time.Duration
	for gi, g0 := 0, 0; g0 < C; gi, g0 = gi+1, g0+blockGroup {
		tConv := time.Now()
		ng := min(blockGroup, C-g0)
		for j := 0; j < ng; j += 2 {
			c := g0 + j
			sa := c % ring
			if j+1 < ng {
				sb := (c + 1) % ring
				w.cor.correlate(b[sa*K*W:(sa+1)*K*W], m[sa*W:(sa+1)*W], d.x[c*T:(c+1)*T],
					b[sb*K*W:(sb+1)*K*W], m[sb*W:(sb+1)*W], d.x[(c+1)*T:(c+2)*T], e0, W)
			} else {
				w.cor.correlate(b[sa*K*W:(sa+1)*K*W], m[sa*W:(sa+1)*W], d.x[c*T:(c+1)*T], nil, nil, nil, e0, W)
			}
		}
		for c := g0; c < g0+ng; c++ {
			sl := c % ring
			row, rb := m[sl*W:(sl+1)*W], mb[sl*nb:(sl+1)*nb]
			jb := blockMaxVec(rb, row)
			blockMaxGo(rb[jb:], row[jb*boundBlock:])
		}
		tEval := time.Now()
		tConvSum += tEval.Sub(tConv)
		for _, f32 := range d.fg[d.fgOff[gi]:d.fgOff[gi+1]] {
			d.evalCentre(w, int(f32), W, nb)
		}
		tEvalSum += time.Since(tEval)
	}
	w.st.Columns += int64(W)
	w.st.ConvFlops += int64(2*C*K*d.nt) * int64(W)
	nfft := w.cor.n
	w.st.FFTFlops += int64((C+1)/2) * int64((W+w.cor.l-1)/w.cor.l) *
		(int64(1+K)*int64(nfft/4*(bitsLen(nfft)-1)/2*34) + int64(K*6*nfft))
	w.st.BlockBounds += int64(d.f * nb)
	w.st.ConvTime += tConvSum
	w.st.EvalTime += tEvalSum
	tSup := time.Now()

	// Local maxima over the nc2 nearest centres × ±nt0min columns: a
	// strong point p of an owned column is kept unless a strong point of
	// one of p's nc2 nearest centres (p's own among them) within R
	// columns has a larger response. The points of p's own centre were
	// checked by keepB (p.v < 0: not kept); those of the others are
	// looked up in their centre's run of w.strong, in column order.
	w.dets = w.dets[:0]
	strong := w.strong
	for _, p := range strong {
		if p.v < 0 {
			continue
		}
		if col := e0 + int(p.i); col < c0 || col >= c1 {
			continue
		}
		if d.suppressed(w, p, R) {
			continue
		}
		w.dets = append(w.dets, p)
	}
	slices.SortFunc(w.dets, func(a, b strongPt) int {
		if a.i != b.i {
			return int(a.i - b.i)
		}
		return int(a.f - b.f)
	})
	w.st.Strong += int64(len(w.strong))
	w.st.Spikes += int64(len(w.dets))
	d.emit(&d.res[ci], w, e0, W)
	w.st.SuppressTime += time.Since(tSup)
}

// suppressed reports whether a strong point of one of p's nc2 nearest
// centres other than p's own lies within R columns of p with a larger
// response (w.run holds each centre's run of w.strong).
func (d *Detector) suppressed(w *worker, p strongPt, R int) bool {
	lo, hi := p.i-int32(R), p.i+int32(R)
	for _, g := range d.g.IC2[int(p.f)*d.nc2 : int(p.f+1)*d.nc2] {
		if g == p.f {
			continue
		}
		run := w.strong[w.run[2*g]:w.run[2*g+1]]
		// The first point at column ≥ lo, then those up to hi.
		j, k := 0, len(run)
		for j < k {
			h := int(uint(j+k) >> 1)
			if run[h].i < lo {
				j = h + 1
			} else {
				k = h
			}
		}
		for ; j < len(run) && run[j].i <= hi; j++ {
			if run[j].a > p.a {
				return true
			}
		}
	}
	return false
}

// evalCentre evaluates centre f over a chunk of W columns (nb blocks):
// its coarse bound per block from the block maxima, then in each block
// that passes the fine bounds and, where they pass, the responses and
// the choice, appending the strong points to w.strong and their B
// values to w.bv.
func (d *Detector) evalCentre(w *worker, f, W, nb int) {
	K, nc, ring := d.k, d.nc, d.ring
	ic := d.g.IC[f*nc : (f+1)*nc]
	boffs, moffs, bfoffs := w.boffs[:nc], w.moffs[:nc], w.bfoffs[:nc]
	for j, c := range ic {
		sl := int(c) % ring
		boffs[j], moffs[j], bfoffs[j] = sl*nb, sl*W, sl*K*W
	}
	sb := w.sb[:nb]
	rowSum(sb, w.mb, boffs)
	start := len(w.strong)
	mo, bo := newRowOffs(moffs), newRowOffs(bfoffs)
	// The passing blocks as bits (few pass: a branch per block would
	// often be mispredicted).
	pass := w.pass[:(nb+63)/64]
	if d.noPrune {
		for j := range pass {
			pass[j] = ^uint64(0)
		}
		if nb%64 != 0 {
			pass[len(pass)-1] = 1<<(nb%64) - 1
		}
	} else if !passBitsVec(pass, sb, d.thr2) {
		passBitsGo(pass, sb, d.thr2)
	}
	w.bblk, w.bcols = w.bblk[:0], w.bcols[:0]
	if n, ok := finePassVec(w.bblk[:nb], w.bcols[:nb], pass, w.m[:d.ring*W], mo, W, d.thr2, d.noPrune); ok {
		// The fine bounds of every passing block in one kernel call
		// (the blocks' dependent sums overlap), then the responses and
		// choices in batches.
		np := 0
		for _, word := range pass {
			np += bits.OnesCount64(word)
		}
		w.st.BlockPass += int64(np)
		w.st.BoundEvals += int64(np * boundBlock)
		if last := nb - 1; W%boundBlock != 0 && pass[last/64]>>(last%64)&1 != 0 {
			w.st.BoundEvals -= int64(boundBlock - W%boundBlock)
		}
		for s := 0; s < n; s += evalBatch {
			e := min(n, s+evalBatch)
			d.evalResp(w, f, W, bo, w.bblk[s:e], w.bcols[s:e])
		}
	} else {
		for wi, word := range pass {
			for ; word != 0; word &= word - 1 {
				blk := wi*64 + bits.TrailingZeros64(word)
				d.evalBlock(w, f, blk, W, mo, bo)
			}
		}
		if len(w.bblk) > 0 {
			d.evalResp(w, f, W, bo, w.bblk, w.bcols)
		}
	}
	w.bblk, w.bcols = w.bblk[:0], w.bcols[:0]
	d.keepB(w, start, W)
	w.run[2*f], w.run[2*f+1] = int32(start), int32(len(w.strong))
}

// evalBlock evaluates centre f in block blk, whose coarse bound passed:
// its fine bounds and, where they pass, the responses and the choice.
// mo and bo are the offsets of f's channels in the ring's m and b.
func (d *Detector) evalBlock(w *worker, f, blk, W int, mo, bo rowOffs) {
	m := w.m[:d.ring*W]
	w.st.BlockPass++
	i0, i1 := blk*boundBlock, min(W, (blk+1)*boundBlock)
	u := w.u[:i1-i0]
	if !rowSumOffs(u, m[i0:], mo) {
		rowSumGo(u, m[i0:], mo.o)
	}
	w.st.BoundEvals += int64(i1 - i0)
	if !useAsm {
		for _, v := range u {
			if d.noPrune || v > d.thr2 {
				w.st.RespBlocks++
				break
			}
		}
		for ii, v := range u {
			if d.noPrune || v > d.thr2 {
				d.evaluate(w, f, i0+ii, W)
			}
		}
		return
	}
	// The vector path forms every bound and response of the block at
	// once (the same sums as evaluate) and then makes evaluate's choices
	// from them, at the columns whose bound passes (bit ii of cols).
	// The blocks are gathered into batches (evalResp) so that the
	// kernels of consecutive blocks, independent of each other, overlap
	// rather than wait on the branches that follow each.
	var cols uint32
	for ii, v := range u {
		if d.noPrune || v > d.thr2 {
			cols |= 1 << ii
		}
	}
	if cols == 0 {
		return
	}
	w.bblk = append(w.bblk, int32(blk))
	w.bcols = append(w.bcols, cols)
	if len(w.bblk) == evalBatch {
		d.evalResp(w, f, W, bo, w.bblk, w.bcols)
		w.bblk, w.bcols = w.bblk[:0], w.bcols[:0]
	}
}

// evalBatch is the number of blocks whose responses and then choices
// are formed one kernel call after the other (evalResp); their 9 KB of
// responses stay in L1.
const evalBatch = 16

// respSize is the number of floats of one block's bounds and responses
// (respGo).
func (d *Detector) respSize() int { return (d.k + d.k%2) * respRows * respStride }

// evalResp forms the bounds, responses and choices of the blocks blks
// of centre f (at most evalBatch, their passing columns in bcols) and
// appends their strong points to w.strong in column order.
func (d *Detector) evalResp(w *worker, f, W int, bo rowOffs, blks []int32, bcols []uint32) {
	K, nc := d.k, d.nc
	b := w.b[:d.ring*K*W]
	wt := d.wt[f*nc*d.s : (f+1)*nc*d.s]
	rs, cs := d.respSize(), chooseRows*respStride
	c := float32(1 - boundSlack)
	for bi, blk := range blks {
		i0 := int(blk) * boundBlock
		n := min(W, i0+boundBlock) - i0
		resp := w.resp[bi*rs : (bi+1)*rs]
		if !respOffs(resp, b[i0:], bo, K, d.s, W, n, wt, d.thr2, d.noPrune) {
			respGo(resp, b[i0:], bo.o, K, d.s, W, n, wt, d.thr2, d.noPrune)
		}
	}
	for bi := range blks {
		resp, ch := w.resp[bi*rs:(bi+1)*rs], w.choice[bi*cs:(bi+1)*cs]
		if !chooseVec(ch, resp, K, d.thr2, c, d.noPrune) {
			chooseGo(ch, resp, K, d.thr2, c, d.noPrune)
		}
	}
	w.st.RespBlocks += int64(len(blks))
	for bi, blk := range blks {
		cols := bcols[bi]
		ch := w.choice[bi*cs : (bi+1)*cs]
		i0 := int(blk) * boundBlock
		w.st.Survivors += int64(bits.OnesCount32(cols))
		var shapes float32
		for ; cols != 0; cols &= cols - 1 {
			ii := bits.TrailingZeros32(cols)
			shapes += ch[3*respStride+ii]
			if best := ch[ii]; best > d.th {
				w.strong = append(w.strong, strongPt{f: int32(f), i: int32(i0 + ii), a: best,
					q: int16(ch[respStride+ii]), sign: int8(ch[2*respStride+ii])})
			}
		}
		w.st.ShapeEvals += int64(shapes)
	}
}

// keepB records, for the strong points of one centre (w.strong[start:],
// in column order), the B values that emit needs, of the points that can
// survive the suppression: a point with a larger one of its own centre
// within ±nt0min columns is never kept (the centre is among its own nc2
// nearest), so it gets v = −1 and no values. The centre's channels are
// still in the ring.
func (d *Detector) keepB(w *worker, start, W int) {
	run := w.strong[start:]
	R, K := int32(d.nt0), d.k
	b := w.b
	for a := range run {
		p := &run[a]
		p.v = -1
		// The next points first: within a run of columns most points
		// have a larger neighbour.
		if (a > 0 && run[a-1].i >= p.i-R && run[a-1].a > p.a) ||
			(a+1 < len(run) && run[a+1].i <= p.i+R && run[a+1].a > p.a) {
			continue
		}
		keep := true
		for j := a - 1; j >= 0 && run[j].i >= p.i-R; j-- {
			if run[j].a > p.a {
				keep = false
				break
			}
		}
		for j := a + 1; keep && j < len(run) && run[j].i <= p.i+R; j++ {
			if run[j].a > p.a {
				keep = false
			}
		}
		if !keep {
			continue
		}
		p.v = int32(len(w.bv))
		kw := int(p.q)%K*W + int(p.i)
		for _, o := range w.bfoffs[:d.nc] {
			w.bv = append(w.bv, b[o+kw])
		}
	}
}

// evaluate computes the best of the S·K responses at centre f, chunk
// column i, and records it if it exceeds Th. Responses are float32 sums
// over the nc channels in nearest-first order; the best is the largest
// |A|, the lowest q = s·K+k on ties (torch.argmax). With pruning a shape
// k is skipped when u_k = Σ_j B[iC(j,f),k,t]² ≤ Th²(1−boundSlack) (its S
// responses are then at most Th) or u_k < best²(1−boundSlack) (they are
// then below the best so far, so they can neither win nor tie).
func (d *Detector) evaluate(w *worker, f, i, W int) {
	K, S, nc := d.k, d.s, d.nc
	b := w.b
	offs := w.goffs[:nc]
	for j, o := range w.bfoffs[:nc] {
		offs[j] = o + i
	}
	wf := d.g.Weights[f*S*nc : (f+1)*S*nc]
	acc := w.acc[:S]
	best, bq, sign := float32(-1), 0, int8(0)
	w.st.Survivors++
	for k := range K {
		kw := k * W
		if !d.noPrune {
			var uk float32
			for _, o := range offs {
				v := b[o+kw]
				uk += v * v
			}
			if !(uk > d.thr2) || (best > 0 && uk < best*best*(1-boundSlack)) {
				continue
			}
		}
		w.st.ShapeEvals++
		if S == 5 {
			// The default sizes, with the sums in registers.
			wt := d.wt[f*nc*5 : (f+1)*nc*5]
			var a0, a1, a2, a3, a4 float32
			for j, o := range offs {
				v := b[o+kw]
				ws := wt[j*5 : j*5+5]
				a0 += ws[0] * v
				a1 += ws[1] * v
				a2 += ws[2] * v
				a3 += ws[3] * v
				a4 += ws[4] * v
			}
			acc[0], acc[1], acc[2], acc[3], acc[4] = a0, a1, a2, a3, a4
		} else {
			clear(acc)
			for j, o := range offs {
				v := b[o+kw]
				for s := range acc {
					acc[s] += wf[s*nc+j] * v
				}
			}
		}
		for s, a := range acc {
			aa := float32(math.Abs(float64(a)))
			if q := s*K + k; aa > best || (aa == best && q < bq) {
				best, bq = aa, q
				sign = 1
				if a < 0 {
					sign = -1
				}
			}
		}
	}
	if best > d.th {
		w.strong = append(w.strong, strongPt{f: int32(f), i: int32(i), a: best, q: int16(bq), sign: sign})
	}
}

// rowSum is rowSumGo, with the vector kernel where there is one.
func rowSum(dst, src []float32, offs []int) {
	if !rowSumVec(dst, src, offs) {
		rowSumGo(dst, src, offs)
	}
}

// emit writes the detections of w.dets (chunk columns from e0) into out.
func (d *Detector) emit(out *Spikes, w *worker, e0, W int) {
	out.Reset()
	out.NC, out.P = d.nc, d.p
	nc, nt, T, P := d.nc, d.nt, d.t, d.p
	g := d.g
	wpca := d.tm.WPCA
	for di, p := range w.dets {
		if di+1 < len(w.dets) {
			// The next detection's samples, requested while this one's
			// features are formed: the rows are far apart in memory.
			q := w.dets[di+1]
			qc := e0 + int(q.i) - d.half
			for _, c := range g.IC[int(q.f)*nc : int(q.f+1)*nc] {
				prefetch(d.x[int(c)*T+qc : int(c)*T+qc+nt])
			}
		}
		col := e0 + int(p.i)
		f := int(p.f)
		out.Sample = append(out.Sample, d.ownStart+int64(col-nt)-int64(d.half-d.nt0))
		out.Center = append(out.Center, p.f)
		out.Template = append(out.Template, p.q)
		out.Sign = append(out.Sign, p.sign)
		out.Amplitude = append(out.Amplitude, p.a)
		ic := g.IC[f*nc : (f+1)*nc]
		var sw, sx, sy float64
		bv := w.bv[p.v : int(p.v)+nc] // p.v ≥ 0: p was kept
		for j, c := range ic {
			v := float64(bv[j]) * float64(p.sign)
			if v > 0 {
				sw += v
				sx += v * g.ChanX[c]
				sy += v * g.ChanY[c]
			}
		}
		out.X = append(out.X, float32(sx/sw))
		out.Y = append(out.Y, float32(sy/sw))
		out.Channels = append(out.Channels, ic...)
		for _, c := range ic {
			xs := d.x[int(c)*T+col-d.half : int(c)*T+col-d.half+nt]
			// Four (then two) features at a time: independent sums, each
			// in sample order as one sum alone, overlap their latencies.
			q := 0
			for ; q+4 <= P; q += 4 {
				w0, w1 := wpca[q*nt:(q+1)*nt], wpca[(q+1)*nt:(q+2)*nt]
				w2, w3 := wpca[(q+2)*nt:(q+3)*nt], wpca[(q+3)*nt:(q+4)*nt]
				var a0, a1, a2, a3 float64
				for j, v := range xs {
					x := float64(v)
					a0 += x * float64(w0[j])
					a1 += x * float64(w1[j])
					a2 += x * float64(w2[j])
					a3 += x * float64(w3[j])
				}
				out.Features = append(out.Features, float32(a0), float32(a1), float32(a2), float32(a3))
			}
			for ; q+2 <= P; q += 2 {
				w0, w1 := wpca[q*nt:(q+1)*nt], wpca[(q+1)*nt:(q+2)*nt]
				var a0, a1 float64
				for j, v := range xs {
					x := float64(v)
					a0 += x * float64(w0[j])
					a1 += x * float64(w1[j])
				}
				out.Features = append(out.Features, float32(a0), float32(a1))
			}
			for ; q < P; q++ {
				wp := wpca[q*nt : (q+1)*nt]
				var acc float64
				for j, v := range xs {
					acc += float64(v) * float64(wp[j])
				}
				out.Features = append(out.Features, float32(acc))
			}
		}
	}
}
