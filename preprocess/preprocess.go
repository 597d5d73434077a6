package preprocess

import (
	"fmt"

	"dspk/compute"
	"dspk/kilosort"
	"dspk/linalg"
)

// Params are the preprocessing settings: Kilosort4's ([kilosort.Settings]:
// Fs, BatchSize, NT, InvertSign, DoCAR and HighpassCutoff are read here; a
// padded window has T = BatchSize + 2·NT samples, NT of context on each
// side), the probe's channel map and the file's channel count.
type Params struct {
	kilosort.Settings
	// ChanMap lists, for each channel used, its 0-based row in the file
	// (chanMap); C = len(ChanMap).
	ChanMap []int
	// NChanFile is the number of channels interleaved in the file
	// (n_chan_bin), counting any sync channel.
	NChanFile int
	// HighpassOrder is the Butterworth order (kilosort.HighpassOrder in
	// Kilosort4).
	HighpassOrder int
	// Groups, if not nil, holds a group id per channel of ChanMap (a
	// probe's shanks): CAR then subtracts each group's own lower median,
	// so that groups that see different cells (tetrodes, stereotrodes,
	// shanks) are referenced independently. nil (Kilosort4) is one
	// group. CAR within groups runs on the CPU only.
	Groups []int
}

// DefaultParams returns Kilosort4's defaults (kilosort.Defaults and its
// third-order high-pass). ChanMap and NChanFile are left for the caller (a
// probe's).
func DefaultParams() Params {
	return Params{Settings: kilosort.Defaults(), HighpassOrder: kilosort.HighpassOrder}
}

// T returns the length of a padded window, BatchSize + 2·NT.
func (p Params) T() int { return p.BatchSize + 2*p.NT }

// Preprocessor applies Kilosort4's preprocessing to padded windows of one
// shape on one device. It is built once per shape by [New] and reused for
// every window; it allocates nothing per window. On the CPU its work is
// spread over GOMAXPROCS goroutines; on a CUDA GPU it runs
// kernels/preprocess.cu, with the CPU's results to about 1e-7 relative
// (the largest difference about 1e-6 of the RMS): selection, sign, mean
// and CAR are bit for bit the CPU's, the high-pass differs by the float32
// rounding of an intermediate and a neglected start-up transient below
// 1e-8, and the sparse whitening sums in the CPU's order without fused
// multiply-adds.
//
// A pass over a recording sets its whitening once ([Preprocessor.SetWhitening],
// uploaded once on a GPU) and preprocesses each [compute.Window] where it
// lives ([Preprocessor.Window]); [Preprocessor.Run] does one window from
// and to host slices. A Preprocessor is not safe for concurrent use.
type Preprocessor struct {
	dev   *compute.Device
	cpu   *cpuPreprocessor
	gpu   *cudaPreprocessor // nil on the CPU
	white *linalg.Whitening // of SetWhitening
	dirty bool              // the GPU holds Run's whitening, not white
}

// New returns a Preprocessor on dev (nil means the CPU) for windows of
// T = BatchSize + 2·NT samples of p.NChanFile interleaved channels, of which
// those in p.ChanMap are used. It returns an error if the window sizes are
// not positive (NT may be 0), ChanMap is empty or names a row outside
// [0, NChanFile), or the high-pass cannot be built (see [NewFilter]); on a
// CUDA device also if C exceeds 1024 (or the device's shared memory), if
// the high-pass needs Kilosort4's cropped taps (short windows) and T
// exceeds 8192, or if the device fails. Call Close when done.
func New(dev *compute.Device, p Params) (*Preprocessor, error) {
	pl, err := Prepare(p)
	if err != nil {
		return nil, err
	}
	return pl.New(dev)
}

// Plan is the host side of a [Preprocessor]: the parameters checked, the
// high-pass designed and the CPU back end's buffers allocated, none of
// which needs the device. [Prepare] builds it while a GPU is still being
// opened; [Plan.New] then adds the device's part.
type Plan struct {
	cpu  *cpuPreprocessor
	tail int // gpuTail of cpu's high-pass
}

// Prepare checks p and builds the host side of a Preprocessor for it; it
// returns the errors of [New] that do not depend on the device.
func Prepare(p Params) (*Plan, error) {
	cpu, err := newCPU(p)
	if err != nil {
		return nil, err
	}
	return &Plan{cpu: cpu, tail: gpuTail(cpu, defaultGPUConfig)}, nil
}

// New returns the Preprocessor of the plan on dev (nil means the CPU), as
// [New] does. A plan builds one Preprocessor: it panics if called again.
func (pl *Plan) New(dev *compute.Device) (*Preprocessor, error) {
	if pl.cpu == nil {
		panic("preprocess: Plan.New called twice")
	}
	cpu := pl.cpu
	pl.cpu = nil
	pp := &Preprocessor{dev: dev, cpu: cpu}
	if dev != nil && dev.Kind() == compute.CUDA {
		var err error
		if pp.gpu, err = newCUDAFrom(dev, cpu, defaultGPUConfig, pl.tail); err != nil {
			return nil, err
		}
	}
	return pp, nil
}

// Device returns the device pp runs on (nil for New(nil, …)).
func (pp *Preprocessor) Device() *compute.Device { return pp.dev }

// Params returns the parameters pp was built with.
func (pp *Preprocessor) Params() Params { return pp.cpu.Params() }

// Channels returns C, the number of channels in the output.
func (pp *Preprocessor) Channels() int { return pp.cpu.c }

// Len returns T, the number of samples of a padded window.
func (pp *Preprocessor) Len() int { return pp.cpu.t }

// FileChannels returns NChanFile, the channels per stored sample.
func (pp *Preprocessor) FileChannels() int { return pp.cpu.cf }

// Filter returns the high-pass applied to each channel row (shared with
// the CPU back end: do not use it while a window is in progress).
func (pp *Preprocessor) Filter() *Filter { return pp.cpu.Filter() }

// SetWhitening sets the whitening that [Preprocessor.Window] applies after
// the high-pass, nil for none. pp keeps w, which must not change while it
// is set; on a GPU it is also uploaded now, once for the pass. It panics
// if w.C ≠ C.
func (pp *Preprocessor) SetWhitening(w *linalg.Whitening) error {
	if w != nil && w.C != pp.cpu.c {
		panic(fmt.Sprintf("preprocess: SetWhitening: whitening of %d channels for %d", w.C, pp.cpu.c))
	}
	pp.white = w
	if pp.gpu == nil {
		return nil
	}
	pp.dirty = false
	return pp.dev.Do(func(c *compute.Ctx) error { return pp.gpu.SetWhitening(c, w) })
}

// Window preprocesses the raw samples of win (see [Preprocessor.Run] for
// the steps) into its working array, whitened by the last SetWhitening,
// on win's device, which must be pp's: on a GPU nothing crosses PCIe. It
// panics if win's shape is not pp's.
func (pp *Preprocessor) Window(win *compute.Window) error {
	C, T, cf := pp.cpu.c, pp.cpu.t, pp.cpu.cf
	if win.Channels() != C || win.Len() != T || win.FileChannels() != cf {
		panic(fmt.Sprintf("preprocess: Window: window of %d×%d (%d file channels), preprocessing of %d×%d (%d)",
			win.Channels(), win.Len(), win.FileChannels(), C, T, cf))
	}
	if (win.Device().Kind() == compute.CUDA) != (pp.gpu != nil) {
		panic(fmt.Sprintf("preprocess: Window: window on %s, preprocessing on %s", win.Device().Spec(), pp.spec()))
	}
	if pp.gpu == nil {
		x, err := win.Data()
		if err != nil {
			return err
		}
		pp.cpu.Run(x, win.Raw(), pp.white)
		return nil
	}
	err := pp.dev.Do(func(c *compute.Ctx) error {
		if pp.dirty {
			if err := pp.gpu.SetWhitening(c, pp.white); err != nil {
				return err
			}
			pp.dirty = false
		}
		return pp.gpu.apply(c, win.RawMem().Ptr, win.DataMem().Ptr, compute.Event{})
	})
	win.MarkWritten()
	return err
}

func (pp *Preprocessor) spec() string {
	if pp.dev == nil {
		return "cpu"
	}
	return pp.dev.Spec()
}

// Run preprocesses one padded window from and to host memory, whitened by
// w (nil: none; SetWhitening's whitening is not used). src holds the
// window as stored, interleaved: src[t*NChanFile+c] for t in [0, T) (a
// recording.Batch's Data); dst receives the result channel-major,
// dst[c*T+t] for the C channels of the map. The steps follow Kilosort4
// (kilosort4.md §4):
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
// float64 on the CPU. On a GPU, Run uploads w and src, processes,
// downloads and waits: for a pass over a recording use Window. Run panics
// if len(src) ≠ T·NChanFile, len(dst) ≠ C·T, or w.C ≠ C.
func (pp *Preprocessor) Run(dst []float32, src []int16, w *linalg.Whitening) error {
	if pp.gpu == nil {
		pp.cpu.Run(dst, src, w)
		return nil
	}
	pp.dirty = true
	return pp.gpu.Run(dst, src, w)
}

// Stages returns the step times of the last Run or Window on the CPU,
// and false on a GPU, where the steps are not timed apart.
func (pp *Preprocessor) Stages() (Stages, bool) {
	if pp.gpu != nil {
		return Stages{}, false
	}
	return pp.cpu.stages, true
}

// Close releases pp's device resources; it may be called more than once.
func (pp *Preprocessor) Close() error {
	if pp.gpu == nil {
		return nil
	}
	return pp.gpu.Close()
}
