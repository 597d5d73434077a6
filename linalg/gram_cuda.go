package linalg

import (
	_ "embed"
	"fmt"
	"math"

	"dspk/compute"
)

//go:embed kernels/gram.cu
var gramSource string

// GramMethod selects how a [GPUGram] forms the product X Xᵀ on the GPU.
type GramMethod int

// GramMethod values. All but GramGEMMInPlace first copy the window
// (centred for a covariance) into an aligned buffer, so the result depends
// only on the values, not on c0 or ld; every method finishes with one
// kernel that adds its product slices in a fixed order in float64 and
// divides by the true sample count. The result is exactly symmetric.
const (
	// GramDefault picks, for the device and sample type, the fastest
	// method measured that meets float32 accuracy: GramDGEMM for float32
	// and GramBlocked for float64 samples where FP64 runs at full rate
	// (H200: 0.42 ms per centred 384 × 60000 window), GramGEMM elsewhere.
	GramDefault GramMethod = iota
	// GramSplit copies the columns into a split-major buffer
	// [splits][C][GPUSplitLen] (last split zero-padded), forms every
	// split's product with one strided batched GEMM and sums the split
	// products in float64.
	GramSplit
	// GramGEMM copies the columns into a contiguous [C][n'] buffer (n'
	// = n rounded up to 32) and forms X Xᵀ with one GEMM (cuBLAS splits
	// the inner dimension itself).
	GramGEMM
	// GramBlocked is GramGEMM for the upper triangle only: the channels
	// are cut into GPUGramOptions.Blocks row blocks (default 2) and one
	// GEMM forms each block pair p ≤ q, so 2 blocks do 3/4 of the
	// arithmetic and 3 blocks 2/3.
	GramBlocked
	// GramSYRK forms the upper triangle with one symmetric rank-k update
	// (cuBLAS SYRK). Float64 only: cuBLAS's float32 SYRK sums the whole
	// window in one float32 accumulator per element (relative error
	// ~4e-6 at 60000 samples, docs/perf-gpu.md).
	GramSYRK
	// GramGEMMInPlace multiplies an uncentred window where it lies, with
	// no copy; its result may depend on c0's alignment. Covariances use
	// GramGEMM.
	GramGEMMInPlace
	// GramDGEMM widens float32 samples to float64 in the copy and forms
	// the product with DGEMM (FP64 tensor cores, faster than FP32 SGEMM
	// on an H200): the result is the float64 product of the float32
	// values (relative error ~1e-15).
	GramDGEMM
	// GramTiles forms the upper triangle with dspk's own kernel (tiles in
	// kernels/gram.cu): 64×64 tiles, float64 fused multiply-adds over the
	// samples in order, in splits of a length set by n and C alone, summed
	// in a fixed order, so the result is the same on every GPU. It reads
	// an uncentred window where it lies and calls no cuBLAS, whose first
	// product in a process costs 40–60 ms of library start-up on an H200.
	GramTiles
)

// GPUSplitLen is the split length of GramSplit on the GPU. It is shorter
// than the CPU's SplitLen: cuBLAS accumulates each split's dot products in
// one float32 sum, and 4096-sample splits measured a relative error of
// 1.0e-6 on 4 channels with DC offsets (the CPU sums at most 256 samples in
// float32).
const GPUSplitLen = 1024

// String returns the method's name.
func (m GramMethod) String() string {
	switch m {
	case GramDefault:
		return "default"
	case GramSplit:
		return "split"
	case GramGEMM:
		return "gemm"
	case GramBlocked:
		return "blocked"
	case GramSYRK:
		return "syrk"
	case GramGEMMInPlace:
		return "gemm-inplace"
	case GramDGEMM:
		return "dgemm"
	case GramTiles:
		return "tiles"
	}
	return fmt.Sprintf("GramMethod(%d)", int(m))
}

// defaultGramMethod is what GramDefault means on a device (measured on an
// H200, docs/perf-gpu.md). Where FP64 runs at full rate (compute
// capability 6.0, 7.0, 8.0, 9.0, 10.0: the data-centre chips) float32
// samples go through GramDGEMM, which on an H200 is both faster than FP32
// SGEMM and exact to ~1e-15, and float64 samples through GramBlocked;
// elsewhere (FP64 at 1/32 to 1/64 rate) both use GramGEMM.
func defaultGramMethod(info compute.GPUInfo, float64Samples bool) GramMethod {
	fullFP64 := info.Minor == 0 && (info.Major == 6 || info.Major == 7 || info.Major == 8 || info.Major == 9 || info.Major == 10)
	switch {
	case !fullFP64:
		return GramGEMM
	case float64Samples:
		return GramBlocked
	}
	return GramDGEMM
}

// secondMomentMethod is the method of [SecondMoment]'s accumulator on a
// device: GramTiles where the default is GramDGEMM. A pipeline adds a few
// windows per process (2 to 12 in a detect run), and cuBLAS's first
// product in a process costs 40–60 ms on an H200 (its library starting),
// where the own kernel, 0.5 ms a window slower, loads in well under one.
func secondMomentMethod(info compute.GPUInfo) GramMethod {
	if m := defaultGramMethod(info, false); m != GramDGEMM {
		return m
	}
	return GramTiles
}

// SecondMomentUsesBLAS reports whether a [SecondMoment] on dev forms its
// products with cuBLAS, whose first product in a process costs 40–60 ms
// (a GPU without full-rate FP64); on the CPU, or where dspk's own kernel
// forms them, it reports false.
func SecondMomentUsesBLAS(dev *compute.Device) bool {
	return dev != nil && dev.Kind() == compute.CUDA && secondMomentMethod(dev.GPU()) != GramTiles
}

// GPUGramOptions configures a GPUGram.
type GPUGramOptions struct {
	// Float64 selects float64 samples, multiplied in float64 (DGEMM or
	// DSYRK); the default is float32 samples with float32 products.
	Float64 bool
	// Method selects the formulation; zero is GramDefault.
	Method GramMethod
	// Blocks is GramBlocked's number of row blocks (0 means 2).
	Blocks int
	// TF32 lets cuBLAS round float32 inputs to TF32 on tensor cores
	// (GEMM-based methods only). It is about 5–8× faster and about 100×
	// less accurate: relative error ~3e-5 to 1e-4 instead of ~2e-7
	// (docs/perf-gpu.md). Opt-in only; never for whitening.
	TF32 bool
}

// gramPackTile is the row alignment, in elements, of GramGEMM's and
// GramSYRK's packed buffer (32 float32 = 128 bytes).
const gramPackTile = 32

// GPUGram computes, on a CUDA device, the centred covariance and the
// uncentred second moment of windows that already live in device memory:
// the GPU counterpart of [Covariance32], [Covariance64] and
// [SecondMoment]'s per-window product. It is bound to a channel count and a
// maximum window length, allocates its buffers once, and allocates nothing
// per window. All its methods must be called inside the device's Do; it is
// not safe for concurrent use.
type GPUGram struct {
	c, maxN int
	opt     GPUGramOptions
	method  GramMethod
	elem    int         // bytes per input sample
	pelem   int         // bytes per packed sample
	ws      compute.Mem // packed samples
	prod    compute.Mem // product slices
	mean    compute.Mem // C float64 means
	fMean   *compute.Prepared
	fPack   *compute.Prepared
	fFinish *compute.Prepared
	// GramTiles' kernel on the window where it lies, and on the packed
	// (centred) copy.
	fTiles, fTilesPacked *compute.Prepared
}

// splitsFor is the number of GPUSplitLen splits of n samples.
func splitsFor(n int) int { return (n + GPUSplitLen - 1) / GPUSplitLen }

// NewGPUGram compiles the kernels (once per process) and allocates the
// buffers of a GPUGram for C channels and windows of at most maxN samples.
// It panics on C < 1, C > 65535, maxN < 1, or TF32 with float64 samples or
// GramSYRK.
func NewGPUGram(c *compute.Ctx, C, maxN int, opt GPUGramOptions) (*GPUGram, error) {
	if C < 1 || C > 65535 || maxN < 1 {
		panic(fmt.Sprintf("linalg: NewGPUGram: C=%d maxN=%d: need 1 ≤ C ≤ 65535 and maxN ≥ 1", C, maxN))
	}
	if opt.TF32 && opt.Float64 {
		panic("linalg: NewGPUGram: TF32 needs float32 samples")
	}
	method := opt.Method
	switch {
	case method == GramDefault && opt.TF32:
		method = GramGEMM
	case method == GramDefault:
		method = defaultGramMethod(c.Device().GPU(), opt.Float64)
	}
	if method < GramSplit || method > GramTiles {
		panic(fmt.Sprintf("linalg: NewGPUGram: unknown method %v", opt.Method))
	}
	if opt.TF32 && (opt.Float64 || method == GramSYRK || method == GramDGEMM || method == GramTiles) {
		panic("linalg: NewGPUGram: TF32 needs float32 samples and a GEMM method")
	}
	if method == GramSYRK && !opt.Float64 {
		panic("linalg: NewGPUGram: GramSYRK is float64 only (float32 SYRK is not accurate to 1e-6)")
	}
	if opt.Blocks < 0 {
		panic(fmt.Sprintf("linalg: NewGPUGram: %d blocks", opt.Blocks))
	}
	g := &GPUGram{c: C, maxN: maxN, opt: opt, method: method, elem: 4, pelem: 4}
	in := "_f32"
	if opt.Float64 {
		g.elem, g.pelem, in = 8, 8, "_f64"
	}
	pack, finish := "pack"+in, "finish"+in
	switch method {
	case GramDGEMM, GramTiles:
		g.pelem, finish = 8, "finish_f64"
		if !opt.Float64 {
			pack = "pack_f32_f64"
		}
	}
	var wsElems, prodElems int
	switch method {
	case GramSplit:
		s := splitsFor(maxN)
		wsElems, prodElems = s*C*GPUSplitLen, s*C*C
	case GramTiles:
		// The packed copy only for centred products, allocated by the
		// first (tiles).
		s, _ := tilesSplits(maxN, C)
		wsElems, prodElems = 0, s*C*C
	default: // GEMM, blocked, SYRK, DGEMM, in place (which packs for covariances)
		wsElems, prodElems = C*roundUp(maxN, gramPackTile), C*C
	}
	if C*roundUp(maxN, gramPackTile) > math.MaxInt32 {
		panic(fmt.Sprintf("linalg: NewGPUGram: C=%d maxN=%d needs %d packed samples, more than 2³¹−1", C, maxN, wsElems))
	}
	mod, err := c.Compile("linalg/kernels/gram.cu", gramSource)
	if err != nil {
		return nil, err
	}
	fns := map[string]*compute.Kernel{}
	names := map[string]string{"row_means": "row_means" + in, "pack": pack, "finish": finish}
	if method == GramTiles {
		names["tiles"], names["tiles_packed"] = "tiles"+in, "tiles_f64"
	}
	for key, name := range names {
		f, err := mod.Kernel(name)
		if err != nil {
			return nil, err
		}
		fns[key] = f
	}
	if wsElems > 0 {
		g.ws, err = c.Alloc(wsElems * g.pelem)
	}
	if err == nil {
		if g.prod, err = c.Alloc(prodElems * g.pelem); err == nil {
			g.mean, err = c.Alloc(C * 8)
		}
	}
	if err != nil {
		g.Free(c)
		return nil, err
	}
	var null compute.Ptr
	g.fMean = fns["row_means"].Prepare(compute.D1(C), compute.D1(256), 0,
		g.mean, null, int64(0), int64(0), int32(0))
	g.fPack = fns["pack"].Prepare(compute.Dim3{X: 1, Y: C}, compute.D1(256), 0,
		g.ws, null, null, int32(C), int64(0), int64(0), int32(0), int32(0), int32(0))
	g.fFinish = fns["finish"].Prepare(compute.D1((C*C+255)/256), compute.D1(256), 0,
		null, g.prod, int32(C), int32(0), int64(0), float64(0), float64(0))
	if method == GramTiles {
		nt := (C + gramTile - 1) / gramTile
		grid, block := compute.Dim3{X: nt * (nt + 1) / 2, Y: 1}, compute.Dim3{X: 16, Y: 16}
		g.fTiles = fns["tiles"].Prepare(grid, block, 0, g.prod, null, int64(0), int64(0), int32(C), int32(0), int32(0))
		g.fTilesPacked = fns["tiles_packed"].Prepare(grid, block, 0, g.prod, g.ws, int64(0), int64(0), int32(C), int32(0), int32(0))
	}
	return g, nil
}

// gramTile is the tile side of GramTiles (GT_TILE in kernels/gram.cu).
const gramTile = 64

// tilesSplits returns GramTiles' split of n samples of C channels: S
// splits of K samples (the last shorter), K a multiple of 16 (the kernel's
// step), 2048 unless the S slices of C×C float64 would pass 256 MiB. It
// depends on n and C alone, so that the sums' order does too.
func tilesSplits(n, C int) (S, K int) {
	K = 2048
	maxS := max(1, (256<<20)/(8*C*C))
	if (n+K-1)/K > maxS {
		K = roundUp((n+maxS-1)/maxS, 16)
	}
	return (n + K - 1) / K, K
}

func roundUp(n, m int) int { return (n + m - 1) / m * m }

// C returns the number of channels.
func (g *GPUGram) C() int { return g.c }

// MaxN returns the largest window length.
func (g *GPUGram) MaxN() int { return g.maxN }

// Method returns the formulation in use (never GramDefault).
func (g *GPUGram) Method() GramMethod { return g.method }

// Free releases the device buffers; g must not be used afterwards.
func (g *GPUGram) Free(c *compute.Ctx) error {
	var first error
	for _, b := range []*compute.Mem{&g.ws, &g.prod, &g.mean} {
		if err := c.Free(*b); err != nil && first == nil {
			first = err
		}
		*b = compute.Mem{}
	}
	for _, p := range []*compute.Prepared{g.fMean, g.fPack, g.fFinish, g.fTiles, g.fTilesPacked} {
		if p != nil {
			p.Free()
		}
	}
	g.fMean, g.fPack, g.fFinish, g.fTiles, g.fTilesPacked = nil, nil, nil, nil, nil
	return first
}

// Covariance writes to dst (C×C float64, row-major, on the device) the
// centred covariance of columns [c0, c1) of the C×ld row-major window x on
// the device (float32, or float64 with Options.Float64):
//
//	dst[i*C+j] = (1/n) Σ_t (x_i(t) − μ_i)(x_j(t) − μ_j),  n = c1 − c0,
//
// with the means μ in float64, as [Covariance32] defines it. The work is
// enqueued on c's stream. It panics unless 0 ≤ c0 < c1 ≤ ld and
// c1 − c0 ≤ MaxN; x must hold (C−1)·ld + c1 samples.
func (g *GPUGram) Covariance(c *compute.Ctx, dst, x compute.Ptr, ld, c0, c1 int) error {
	return g.product(c, "Covariance", dst, x, ld, c0, c1, true, 0)
}

// SecondMoment writes to dst (C×C float64 on the device) the uncentred
// second moment X Xᵀ / n of columns [c0, c1) of x (see Covariance).
func (g *GPUGram) SecondMoment(c *compute.Ctx, dst, x compute.Ptr, ld, c0, c1 int) error {
	return g.product(c, "SecondMoment", dst, x, ld, c0, c1, false, 0)
}

// AddSecondMoment adds X Xᵀ / n of columns [c0, c1) of x to the C×C
// float64 sum at dst (see SecondMoment).
func (g *GPUGram) AddSecondMoment(c *compute.Ctx, dst, x compute.Ptr, ld, c0, c1 int) error {
	return g.product(c, "AddSecondMoment", dst, x, ld, c0, c1, false, 1)
}

// product forms dst = X̃ X̃ᵀ / n + beta·dst, X̃ centred if centred.
func (g *GPUGram) product(c *compute.Ctx, name string, dst, x compute.Ptr, ld, c0, c1 int, centred bool, beta float64) error {
	C := g.c
	if ld < 1 || c0 < 0 || c1 <= c0 || c1 > ld {
		panic(fmt.Sprintf("linalg: GPUGram.%s: ld=%d columns [%d, %d): need 0 ≤ c0 < c1 ≤ ld", name, ld, c0, c1))
	}
	n := c1 - c0
	if n > g.maxN {
		panic(fmt.Sprintf("linalg: GPUGram.%s: %d columns, more than MaxN = %d", name, n, g.maxN))
	}
	if x == 0 || dst == 0 {
		panic(fmt.Sprintf("linalg: GPUGram.%s: null device pointer", name))
	}
	if g.fFinish == nil {
		panic(fmt.Sprintf("linalg: GPUGram.%s after Free", name))
	}
	var mean compute.Ptr
	if centred {
		mean = g.mean.Ptr
		g.fMean.Set(1, x)
		g.fMean.Set(2, int64(ld))
		g.fMean.Set(3, int64(c0))
		g.fMean.Set(4, int32(n))
		if err := g.fMean.Launch(c); err != nil {
			return err
		}
	}
	method := g.method
	if method == GramGEMMInPlace && centred {
		method = GramGEMM
	}
	if method == GramTiles {
		return g.tiles(c, dst, x, ld, c0, n, centred, beta)
	}
	// Layout of the packed buffer: S slices of W samples per channel.
	S, W := 1, roundUp(n, gramPackTile)
	if method == GramSplit {
		S, W = splitsFor(n), GPUSplitLen
	}
	if method != GramGEMMInPlace {
		g.fPack.SetGrid(compute.Dim3{X: min((S*W+255)/256, 64), Y: C})
		g.fPack.Set(1, x)
		g.fPack.Set(2, mean)
		g.fPack.Set(4, int64(ld))
		g.fPack.Set(5, int64(c0))
		g.fPack.Set(6, int32(n))
		g.fPack.Set(7, int32(W))
		g.fPack.Set(8, int32(S))
		if err := g.fPack.Launch(c); err != nil {
			return err
		}
	}
	if err := g.multiply(c, method, x, ld, c0, n, S, W); err != nil {
		return err
	}
	return g.finish(c, dst, S, n, beta)
}

// multiply forms the product slices of the packed buffer (of x in place
// for GramGEMMInPlace: columns [c0, c0+n) with stride ld) with cuBLAS as
// method says: S slices of W samples per channel.
func (g *GPUGram) multiply(c *compute.Ctx, method GramMethod, x compute.Ptr, ld, c0, n, S, W int) error {
	C := g.c
	ws, prod := g.ws.Ptr, g.prod.Ptr
	var err error
	switch method {
	case GramSplit:
		sa, sc := int64(C*W), int64(C*C)
		switch {
		case g.opt.Float64:
			err = c.DgemmStridedBatched(compute.Trans, compute.NoTrans, C, C, W, 1, ws, W, sa, ws, W, sa, 0, prod, C, sc, S)
		case g.opt.TF32:
			err = c.GemmStridedBatchedEx(compute.Trans, compute.NoTrans, C, C, W, 1, ws, compute.R32F, W, sa, ws, compute.R32F, W, sa,
				0, prod, compute.R32F, C, sc, S, compute.Compute32FFastTF32)
		default:
			err = c.SgemmStridedBatched(compute.Trans, compute.NoTrans, C, C, W, 1, ws, W, sa, ws, W, sa, 0, prod, C, sc, S)
		}
	case GramGEMM, GramGEMMInPlace:
		a, lda := ws, W
		if method == GramGEMMInPlace {
			a, lda = x.Add(c0*g.elem), ld
		}
		switch {
		case g.opt.Float64:
			err = c.Dgemm(compute.Trans, compute.NoTrans, C, C, n, 1, a, lda, a, lda, 0, prod, C)
		case g.opt.TF32:
			err = c.GemmStridedBatchedEx(compute.Trans, compute.NoTrans, C, C, n, 1, a, compute.R32F, lda, 0, a, compute.R32F, lda, 0,
				0, prod, compute.R32F, C, 0, 1, compute.Compute32FFastTF32)
		default:
			err = c.Sgemm(compute.Trans, compute.NoTrans, C, C, n, 1, a, lda, a, lda, 0, prod, C)
		}
	case GramBlocked:
		nb := g.opt.Blocks
		if nb == 0 {
			nb = 2
		}
		nb = min(nb, C)
		e := g.pelem
		for p := 0; p < nb && err == nil; p++ {
			p0, p1 := p*C/nb, (p+1)*C/nb
			for q := p; q < nb && err == nil; q++ {
				q0, q1 := q*C/nb, (q+1)*C/nb
				a, b, out := ws.Add(p0*W*e), ws.Add(q0*W*e), prod.Add((q0*C+p0)*e)
				switch {
				case g.opt.Float64:
					err = c.Dgemm(compute.Trans, compute.NoTrans, p1-p0, q1-q0, n, 1, a, W, b, W, 0, out, C)
				case g.opt.TF32:
					err = c.GemmStridedBatchedEx(compute.Trans, compute.NoTrans, p1-p0, q1-q0, n, 1, a, compute.R32F, W, 0, b, compute.R32F, W, 0,
						0, out, compute.R32F, C, 0, 1, compute.Compute32FFastTF32)
				default:
					err = c.Sgemm(compute.Trans, compute.NoTrans, p1-p0, q1-q0, n, 1, a, W, b, W, 0, out, C)
				}
			}
		}
	case GramSYRK:
		err = c.Dsyrk(compute.Upper, compute.Trans, C, n, 1, ws, W, 0, prod, C)
	case GramDGEMM:
		err = c.Dgemm(compute.Trans, compute.NoTrans, C, C, n, 1, ws, W, ws, W, 0, prod, C)
	}
	return err
}

// finish launches the sum of the S product slices into dst = sum/n +
// beta·dst.
func (g *GPUGram) finish(c *compute.Ctx, dst compute.Ptr, S, n int, beta float64) error {
	g.fFinish.Set(0, dst)
	g.fFinish.Set(3, int32(S))
	g.fFinish.Set(4, int64(g.c*g.c))
	g.fFinish.Set(5, 1/float64(n))
	g.fFinish.Set(6, beta)
	return g.fFinish.Launch(c)
}

// tiles is product for GramTiles: an uncentred window is read where it
// lies, a centred one from its packed copy.
func (g *GPUGram) tiles(c *compute.Ctx, dst, x compute.Ptr, ld, c0, n int, centred bool, beta float64) error {
	C := g.c
	f := g.fTiles
	if centred {
		if g.ws.Ptr == 0 {
			var err error
			if g.ws, err = c.Alloc(C * roundUp(g.maxN, gramPackTile) * 8); err != nil {
				return err
			}
			g.fPack.Set(0, g.ws.Ptr)
			g.fTilesPacked.Set(1, g.ws.Ptr)
		}
		W := roundUp(n, gramPackTile)
		g.fPack.SetGrid(compute.Dim3{X: min((W+255)/256, 64), Y: C})
		g.fPack.Set(1, x)
		g.fPack.Set(2, g.mean.Ptr)
		g.fPack.Set(4, int64(ld))
		g.fPack.Set(5, int64(c0))
		g.fPack.Set(6, int32(n))
		g.fPack.Set(7, int32(W))
		g.fPack.Set(8, int32(1))
		if err := g.fPack.Launch(c); err != nil {
			return err
		}
		f, ld, c0 = g.fTilesPacked, W, 0
	} else {
		f.Set(1, x)
	}
	S, K := tilesSplits(n, C)
	nt := (C + gramTile - 1) / gramTile
	f.SetGrid(compute.Dim3{X: nt * (nt + 1) / 2, Y: S})
	f.Set(2, int64(ld))
	f.Set(3, int64(c0))
	f.Set(5, int32(n))
	f.Set(6, int32(K))
	if err := f.Launch(c); err != nil {
		return err
	}
	return g.finish(c, dst, S, n, beta)
}

// cudaSecondMoment is the GPU counterpart of [SecondMoment]: it accumulates
// the mean over windows of X_w X_wᵀ / n_w, in float64 on the device, for
// windows that live in device memory. Its methods must be called inside
// the device's Do.
type cudaSecondMoment struct {
	g   *GPUGram
	sum compute.Mem
	k   int
}

// newCUDASecondMoment returns an empty accumulator for C channels and
// windows of at most maxN samples (see NewGPUGram for the options).
func newCUDASecondMoment(c *compute.Ctx, C, maxN int, opt GPUGramOptions) (*cudaSecondMoment, error) {
	g, err := NewGPUGram(c, C, maxN, opt)
	if err != nil {
		return nil, err
	}
	m := &cudaSecondMoment{g: g}
	if m.sum, err = c.Alloc(C * C * 8); err != nil {
		g.Free(c)
		return nil, err
	}
	if err := m.Reset(c); err != nil {
		m.Free(c)
		return nil, err
	}
	return m, nil
}

// Gram returns the GPUGram the accumulator uses.
func (m *cudaSecondMoment) Gram() *GPUGram { return m.g }

// Windows returns the number of windows added since creation or the last
// Reset.
func (m *cudaSecondMoment) Windows() int { return m.k }

// Reset forgets all windows.
func (m *cudaSecondMoment) Reset(c *compute.Ctx) error {
	m.k = 0
	return c.Memset8(m.sum.Ptr, 0, m.sum.Bytes)
}

// Add adds the window made of columns [c0, c1) of the C×ld row-major
// window x on the device (see GPUGram.SecondMoment); the work is enqueued
// on c's stream.
func (m *cudaSecondMoment) Add(c *compute.Ctx, x compute.Ptr, ld, c0, c1 int) error {
	if err := m.g.AddSecondMoment(c, m.sum.Ptr, x, ld, c0, c1); err != nil {
		return err
	}
	m.k++
	return nil
}

// ResultTo waits for the stream and writes to dst (C*C values, host
// memory) the mean second moment over the windows added; all NaN with no
// windows, as [SecondMoment.ResultTo].
func (m *cudaSecondMoment) ResultTo(c *compute.Ctx, dst []float64) error {
	C := m.g.c
	if len(dst) != C*C {
		panic(fmt.Sprintf("linalg: cudaSecondMoment.ResultTo: len(dst) = %d, want C*C = %d", len(dst), C*C))
	}
	if m.k == 0 {
		for i := range dst {
			dst[i] = math.NaN()
		}
		return c.Sync()
	}
	if err := compute.Download(c, dst, m.sum.Ptr); err != nil {
		return err
	}
	s := 1 / float64(m.k)
	for i := range dst {
		dst[i] *= s
	}
	return nil
}

// Free releases the device buffers.
func (m *cudaSecondMoment) Free(c *compute.Ctx) error {
	err := m.g.Free(c)
	if err2 := c.Free(m.sum); err == nil {
		err = err2
	}
	m.sum = compute.Mem{}
	return err
}

// poison fills g's buffers with NaN (all bits set), so that a test sees
// any element a kernel fails to write.
func (g *GPUGram) poison(c *compute.Ctx) error {
	for _, b := range []compute.Mem{g.ws, g.prod, g.mean} {
		if err := c.Memset8(b.Ptr, 0xff, b.Bytes); err != nil {
			return err
		}
	}
	return nil
}
