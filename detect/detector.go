package detect

import (
	"fmt"
	"math"
	"runtime"
	"slices"
	"time"

	"dspk/compute"
	"dspk/internal/par"
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
	loop     par.Loop
	chunkFn  func(w, ci int) // runChunk, bound once so that a window allocates nothing
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
	tm.check()
	d, err := newDetector(dev, g, tm.K, tm.P, tm.NT, T, prm)
	if err != nil {
		return nil, err
	}
	if err := d.SetTemplates(tm); err != nil {
		d.Close()
		return nil, err
	}
	return d, nil
}

// PrepareDetector is [NewDetector] for templates not known yet:
// prm.NTemplates templates and prm.NPCs features of prm.NT samples. On a
// GPU it builds what depends on those sizes alone (the kernels, the
// buffers, the grid on the device), so that a pipeline can build it
// beside the template learning; [Detector.SetTemplates] then gives it the
// templates, before its first window. It panics where NewDetector does.
func PrepareDetector(dev *compute.Device, g *Grid, T int, prm Params) (*Detector, error) {
	return newDetector(dev, g, prm.NTemplates, prm.NPCs, prm.NT, T, prm)
}

// SetTemplates gives a detector from [PrepareDetector] its templates,
// uploading them on a GPU. It returns an error, leaving d without
// templates, if tm's sizes are not those d was prepared for, or the
// device fails; it panics if d has its templates already.
func (d *Detector) SetTemplates(tm *Templates) error {
	if d.tm != nil {
		panic("detect: SetTemplates of a detector that has its templates")
	}
	tm.check()
	if tm.K != d.k || tm.P != d.p || tm.NT != d.nt {
		return fmt.Errorf("detect: %d templates and %d features of %d samples for a detector prepared for %d, %d and %d",
			tm.K, tm.P, tm.NT, d.k, d.p, d.nt)
	}
	if d.gpu != nil {
		if err := d.gpu.setTemplates(tm); err != nil {
			return err
		}
	}
	d.tm = tm
	if d.gpu == nil {
		d.cpuInit() // a GPU detector sets up its CPU path at its first Detect
	}
	return nil
}

// hasTemplates panics if d has no templates yet (PrepareDetector without
// SetTemplates).
func (d *Detector) hasTemplates() {
	if d.tm == nil {
		panic("detect: a prepared Detector used before SetTemplates")
	}
}

// newDetector is NewDetector without the templates' values: k templates
// and p features of nt samples.
func newDetector(dev *compute.Device, g *Grid, k, p, nt, T int, prm Params) (*Detector, error) {
	if err := prm.Validate(); err != nil {
		panic(err.Error())
	}
	if nt != prm.NT {
		panic(fmt.Sprintf("detect: templates of %d samples for nt = %d", nt, prm.NT))
	}
	if T <= 2*prm.NT {
		panic(fmt.Sprintf("detect: window of %d columns with %d of padding on each side", T, prm.NT))
	}
	if k*g.S > math.MaxInt16 {
		panic(fmt.Sprintf("detect: %d templates × %d sizes", k, g.S))
	}
	d := &Detector{
		dev: dev, g: g,
		c: g.C(), t: T, nt: prm.NT, nt0: prm.NT0Min, half: prm.NT / 2,
		k: k, s: g.S, nc: g.NC, nc2: g.NC2, p: p, f: g.F(),
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
		if d.gpu, err = newGPUDetectorSized(dev, g, k, p, T, prm, gpuDetectConfigFor(dev.GPU().Major, dev.GPU().Minor)); err != nil {
			return nil, err
		}
	}
	d.chunkFn = d.runChunk
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
	d.hasTemplates()
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
	d.hasTemplates()
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
	d.hasTemplates()
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
	nw := min(d.workers, d.nchunks)
	for _, w := range d.ws[:nw] {
		w.st = Stats{}
	}
	d.loop.Each(d.nchunks, nw, d.chunkFn)
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
