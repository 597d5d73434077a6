// Package detect provides Kilosort4's universal-template spike detection
// on the CPU and, for windows on a CUDA device, on the GPU (a [Detector]
// is built for a device by [NewDetector](dev, …), or by [PrepareDetector]
// before the templates are known and [Detector.SetTemplates]; its GPU back end,
// cuda.go with kernels/detect.cu, gives the CPU's spikes bit for bit but
// for float32 rounding ties of the filter bank): the template-centre grid and
// spatial weights built from a probe's geometry, universal temporal templates learned from the data (isolated
// single-channel peaks, their SVD basis and k-means shapes) or read from a
// user's file, and a reusable per-window [Detector] that matches every
// template at every centre, keeps the local maxima and returns each spike's
// time, centre, template, amplitude, position and PCA features.
//
// The algorithm follows shared/docs/kilosort4.md §6–§10 (Kilosort4 at
// commit d947208), re-implemented from that description. Differences on
// purpose:
//
//   - The temporal correlation is computed in float64 by FFT overlap-save
//     and rounded to float32 (Kilosort4: cuDNN TF32), so values agree with a
//     float64 direct correlation to float32 rounding.
//   - The spatial stage is pruned exactly: a template at centre f and time t
//     is evaluated only where the Cauchy–Schwarz bound
//     U(f,t)² = Σ_{c∈iC(f)} max_k B[c,k,t]² exceeds Th² (the spatial weights
//     are unit vectors, so every response there is ≤ U). Points below the
//     bound can be neither a detection nor suppress one, so the detections
//     are those of the unpruned rule.
//   - A detection is attributed to the window owning its response-peak
//     column (see [Detector.Detect]); Kilosort4 does the same implicitly by
//     zeroing the padding columns.
//
// Layouts: a whitened window is [C][T] float32, row-major (x[c*T+t]);
// templates are K×nt row-major; per-centre tables are centre-major.
package detect
