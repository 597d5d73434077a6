package phy

import (
	"context"
	"fmt"
	"path/filepath"

	"dspk/detect"
	"dspk/export"
	"dspk/figure"
	"dspk/pipeline"
	"dspk/recording"
)

// DriftKind is the kind of folder a [DriftWriter] writes (recorded in its
// manifest): -overwrite replaces a drift folder only with a drift folder.
const DriftKind = "drift"

// The pictures of a drift folder besides its drift files.
const (
	DriftPlotFile = "drift.png"
	// DriftRasterFile is the drift raster of the detection pass on the
	// corrected windows.
	DriftRasterFile = "drift_raster_corrected.png"
)

// DriftWriter is the [pipeline.Sink] that writes a drift folder: the
// drift files of the run's motion estimate (see [WriteDrift]), drift.png
// (the displacement of each block against time), the drift raster of the
// detection pass on the corrected windows and dspk.json. It keeps the
// time, depth and amplitude of every spike for the raster (16 bytes a
// spike). Create it with [CreateDrift] before the run (an existing folder
// is refused before any work), pass it to [pipeline.Pipeline.Run] and
// Close it when done: the folder appears when End succeeds, and Close
// removes everything otherwise. The run must estimate motion (nblocks >
// 0).
type DriftWriter struct {
	od    *export.OutputDir
	opt   Options
	info  *pipeline.RunInfo
	times []int64
	y     []float32
	amp   []float32
	drift *figure.Drift
	done  bool
}

// CreateDrift reserves the drift folder out (refusing an existing one
// unless opt.Overwrite) and returns the writer that fills it. Of opt it
// uses Inputs, Warnings, Overwrite, Kind and Context.
func CreateDrift(out string, opt Options) (*DriftWriter, error) {
	od, err := createDir(out, opt, DriftKind)
	if err != nil {
		return nil, err
	}
	return &DriftWriter{od: od, opt: opt}, nil
}

// Drift returns the drift estimate written (after End).
func (w *DriftWriter) Drift() *figure.Drift { return w.drift }

// Close removes the temporary folder unless End succeeded. It can be
// deferred.
func (w *DriftWriter) Close() error {
	if w.done {
		return nil
	}
	w.done = true
	return w.od.Abort()
}

// Begin refuses a run without a motion estimate.
func (w *DriftWriter) Begin(info *pipeline.RunInfo) error {
	if info.Motion == nil {
		return fmt.Errorf("%s: the run estimated no motion (nblocks %d)", info.Recording.Name(), info.Config.NBlocks)
	}
	w.info = info
	return nil
}

// Window keeps the time, depth and amplitude of the window's spikes.
func (w *DriftWriter) Window(_ recording.Window, sp *detect.Spikes) error {
	w.times = append(w.times, sp.Sample...)
	w.y = append(w.y, sp.Y...)
	w.amp = append(w.amp, sp.Amplitude...)
	return nil
}

// End writes the folder's files and moves it to its final name.
func (w *DriftWriter) End(sum *pipeline.Summary) error {
	if w.info == nil {
		return fmt.Errorf("phy: %s: End before Begin", w.od.Final())
	}
	info := w.info
	d := DriftOf(info)
	if err := WriteDrift(w.od.Dir(), d); err != nil {
		return err
	}
	name := filepath.Base(info.Recording.Name())
	if err := figure.WriteDriftPlot(w.od.Path(DriftPlotFile), d, fmt.Sprintf("%s: motion, nblocks %d", name, info.Config.NBlocks)); err != nil {
		return err
	}
	var chanY []float32
	for _, y := range info.Probe.Y {
		chanY = append(chanY, float32(y))
	}
	rd := &figure.Raster{Times: w.times, Y: w.y, Amp: w.amp, ChanY: chanY, SampleRate: info.Recording.SampleRate(),
		Seconds: sum.Seconds, Threshold: info.Config.ThUniversal,
		Title: fmt.Sprintf("%s: %d spikes after motion correction", name, len(w.times))}
	ctx := w.opt.Context
	if ctx == nil {
		ctx = context.Background()
	}
	b, err := figure.EncodeRaster(ctx, rd, pipeline.Version, nil)
	if err != nil {
		return err
	}
	if err := writeFile(w.od.Path(DriftRasterFile), b); err != nil {
		return err
	}
	prov := pipeline.Provenance(info, sum)
	prov["motion"] = map[string]any{"windows": d.Windows, "blocks": d.Blocks, "block_depths_um": d.Depths,
		"min_displacement_um": d.MinDisplacement(), "max_displacement_um": d.MaxDisplacement(),
		"files": []string{DriftFile, DriftTimesFile, DriftDepthsFile, DriftPlotFile, DriftRasterFile}}
	prov["warnings"] = append(append([]string{}, w.opt.Warnings...), sum.Warnings...)
	if err := export.WriteJSON(w.od.Path("dspk.json"), prov); err != nil {
		return err
	}
	if err := w.ctxErr(); err != nil {
		return err
	}
	if err := w.od.Commit(); err != nil {
		return err
	}
	w.drift, w.done = d, true
	return nil
}

// ctxErr returns the error of the options' Context, if it is done.
func (w *DriftWriter) ctxErr() error {
	if w.opt.Context == nil {
		return nil
	}
	return w.opt.Context.Err()
}
