// Package preprocess provides Kilosort4's per-window preprocessing, on the
// CPU or an NVIDIA GPU: channel-map selection and int16 → float32
// conversion, optional sign inversion, per-channel mean removal, common
// average referencing by the lower median across channels, the zero-phase
// Butterworth high-pass that Kilosort4 applies as a circular correlation
// over the padded window, and sparse whitening (kilosort4.md §3–§5).
//
// A [Preprocessor] is built once per window shape and device by [New] and
// reused for every window; it allocates no buffers per window. Its back
// ends sit side by side: cpu.go (pure Go over GOMAXPROCS goroutines),
// cuda.go with kernels/preprocess.cu, and the float64 references in the
// tests. A pass sets its whitening once and preprocesses each
// [compute.Window] where it lives ([Preprocessor.Window]); data leave it
// channel-major, [C][T] row-major with T = BatchSize + 2·NT.
//
// The stages are also exposed one by one, for tests and for the GPU
// implementation: [ButterHighpass] designs the filter as
// scipy.signal.butter does, [FiltFilt] is scipy.signal.filtfilt,
// [HighpassTaps] gives Kilosort4's taps fitted to a window length,
// [Filter] applies them to one channel row, and [LowerMedian] is the
// median that torch.median returns.
//
// # The high-pass
//
// Kilosort4 filters each window by y = fftshift(real(ifft(fft(x)·conj(fft(h)))))
// with taps h of the window's length T. For T = 60122 = 2·23·1307 an FFT is
// about twenty times slower than at a smooth length. The taps are the
// autocorrelation of the causal Butterworth impulse response, which decays
// below 1e-14 of its sum within about a thousand samples, so when the
// window is long enough [Filter] computes the same circular correlation
// exactly (to about 1e-12 relative) by running the Butterworth filter
// forward and then backward, in float64, over the window extended
// periodically by that many samples on each side. For short windows, where
// the cropped taps matter, it falls back to the circular correlation with
// Kilosort4's cropped taps through a float64 FFT.
//
// Programmer errors (lengths that do not match the shape) panic with a
// message prefixed "preprocess: "; parameters that cannot be honoured are
// reported by [New] as errors.
package preprocess
