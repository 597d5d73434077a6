package phy

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sync"

	"dspk/export"
	"dspk/figure"
	"dspk/pipeline"
)

// The pictures of the folders: a detect folder's drift raster (with
// [Options.Raster]) and a sort folder's summary.
const (
	RasterFile      = "drift_raster.png"
	SortSummaryFile = "sort_summary.png"
)

// ReadRaster reads what the drift raster of the detect folder dir shows:
// spike_times.npy, spike_positions.npy, amplitudes.npy,
// channel_positions.npy and dspk.json (sample rate, threshold, length,
// and for the title the recording's name and the spike and cluster
// counts).
func ReadRaster(dir string) (*figure.Raster, error) {
	var prov struct {
		Input struct {
			Path       string  `json:"path"`
			SampleRate float64 `json:"sample_rate"`
		} `json:"input"`
		Config struct {
			Th float64 `json:"Th_universal"`
		} `json:"config"`
		Summary struct {
			Seconds float64 `json:"recording_seconds"`
		} `json:"summary"`
		Clusters int `json:"clusters"`
	}
	pj := filepath.Join(dir, "dspk.json")
	b, err := os.ReadFile(pj)
	if err != nil {
		return nil, fmt.Errorf("%s is not a dspk detect folder: %w", dir, err)
	}
	if err := json.Unmarshal(b, &prov); err != nil {
		return nil, fmt.Errorf("%s: %w", pj, err)
	}
	if !(prov.Input.SampleRate > 0) || !(prov.Config.Th > 0) {
		return nil, fmt.Errorf("%s: no sample rate or threshold", pj)
	}
	d := &figure.Raster{SampleRate: prov.Input.SampleRate, Threshold: prov.Config.Th, Seconds: prov.Summary.Seconds}
	// The four arrays are read concurrently: decoding them is most of
	// the time before the drawing, and the raster is on the critical path
	// at the end of a detect run.
	var pos, chpos []float32
	var errs [4]error
	var wg sync.WaitGroup
	for i, f := range []struct {
		name string
		dst  *[]float32
	}{
		{"spike_positions.npy", &pos}, {"amplitudes.npy", &d.Amp}, {"channel_positions.npy", &chpos},
	} {
		wg.Go(func() {
			a, err := export.ReadNPYFile(filepath.Join(dir, f.name))
			if err == nil {
				*f.dst, err = a.Float32()
			}
			if err != nil {
				errs[i] = fmt.Errorf("%s: %w", filepath.Join(dir, f.name), err)
			}
		})
	}
	wg.Go(func() {
		a, err := export.ReadNPYFile(filepath.Join(dir, "spike_times.npy"))
		if err == nil {
			d.Times, err = a.Int64()
		}
		if err != nil {
			errs[3] = fmt.Errorf("%s: %w", filepath.Join(dir, "spike_times.npy"), err)
		}
	})
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	n := len(d.Times)
	if len(pos) != 2*n || len(d.Amp) != n {
		return nil, fmt.Errorf("%s: %d spike times, %d positions and %d amplitudes", dir, n, len(pos)/2, len(d.Amp))
	}
	d.Y = make([]float32, n)
	for i := range d.Y {
		d.Y[i] = pos[2*i+1]
	}
	for i := 1; i < len(chpos); i += 2 {
		d.ChanY = append(d.ChanY, chpos[i])
	}
	d.Title = rasterTitle(prov.Input.Path, n, prov.Clusters)
	return d, nil
}

// rasterTitle is the title of a detect folder's drift raster.
func rasterTitle(input string, spikes, clusters int) string {
	return fmt.Sprintf("%s: %d spikes, %d clusters", filepath.Base(input), spikes, clusters)
}

// expectedRasterLayout is the layout of the drift raster of the run info
// describes, as ReadRaster will find it unless a spike lies beyond the
// probe's sites or the schedule's end (then the raster is drawn whole at
// the end).
func expectedRasterLayout(info *pipeline.RunInfo) figure.RasterLayout {
	fs := info.Recording.SampleRate()
	sched := info.Schedule
	d := &figure.Raster{SampleRate: fs, Threshold: info.Config.ThUniversal, Seconds: float64(sched.End-sched.Start) / fs,
		Title: rasterTitle(pipeline.AbsPath(info.Recording.Name()), 0, 0)}
	for _, y := range info.Probe.Y {
		d.ChanY = append(d.ChanY, float32(y))
	}
	return figure.LayoutOf(d)
}

// writeRaster draws the drift raster of the detect folder dir into it
// (RasterFile), on the canvas prep prepared if it has the raster's
// layout.
func writeRaster(ctx context.Context, dir string, prep *figure.RasterPreparation) error {
	d, err := ReadRaster(dir)
	if err != nil {
		return err
	}
	b, err := figure.EncodeRaster(ctx, d, pipeline.Version, prep.Take)
	if err != nil {
		return err
	}
	return writeFile(filepath.Join(dir, RasterFile), b)
}

// sortSummary returns what the summary figure of the sort r shows: each
// unit's mean spike depth, amplitude ‖W‖, contamination (ContamPct),
// label and spike count, and the motion estimate.
func sortSummary(r *pipeline.SortResult) *figure.SortSummary {
	cr := r.Curated
	N := cr.Units.N
	u := &figure.SortSummary{Y: make([]float64, N), Amp: cr.Amplitude, Contam: cr.ContamPct, Good: cr.Good, Spikes: make([]int, N),
		ProbeY: r.Info.Probe.Y, TotalSpikes: cr.Spikes.Len(), ACGThreshold: r.Params.Curate.ACGThreshold,
		NBlocks: r.Info.Config.NBlocks, Drift: DriftOf(r.Info)}
	for i, k := range cr.Spikes.Cluster {
		u.Y[k] += float64(cr.Positions[2*i+1])
		u.Spikes[k]++
	}
	for k := range N {
		if u.Spikes[k] > 0 {
			u.Y[k] /= float64(u.Spikes[k])
		}
	}
	return u
}
