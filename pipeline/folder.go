package pipeline

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"time"

	"dspk/detect"
	"dspk/export"
	"dspk/recording"
)

// Version is written into dspk.json; the command sets it.
var Version = "dev"

// FolderOptions configures [Pipeline.WriteDetections].
type FolderOptions struct {
	// Out is the output folder; it must not exist unless Overwrite.
	Out       string
	Overwrite bool
	// Templates, if set, are used instead of learning them (pass 2 is
	// skipped); TemplatesFile names their source for the provenance.
	Templates     *detect.Templates
	TemplatesFile string
	// Device names the device that ran the passes, for the provenance.
	Device string
	// DatPath is the raw data file Phy's params.py points at.
	DatPath string
	// OnSpikes, if set, also receives every window's spikes.
	OnSpikes func(win recording.Window, s *detect.Spikes)

	// Inputs are the files the run reads (recording, meta, probe,
	// templates); Out may not be or hold one of them, even with Overwrite
	// (see [export.OutputOptions]).
	Inputs []string
	// Warnings found before the run (by the caller) are written into
	// dspk.json's "warnings" with those the passes find
	// ([Pipeline.Warnings]).
	Warnings []string
}

// Summary describes a finished detection run.
type Summary struct {
	Out           string             `json:"-"`
	Spikes        int                `json:"spikes"`
	Windows       int                `json:"windows"`
	Samples       int64              `json:"samples"`
	Seconds       float64            `json:"recording_seconds"`
	Wall          time.Duration      `json:"-"`
	WallSeconds   float64            `json:"wall_seconds"`
	TimesRealTime float64            `json:"times_real_time"`
	PassSeconds   map[string]float64 `json:"pass_seconds"`
	Clips         int                `json:"template_clips,omitempty"`
	Centres       int                `json:"centres"`
	Work          detect.Stats       `json:"work"`
	// Times, Y and Amplitude keep every spike's sample, depth and
	// amplitude for reports and plots.
	Times     []int64   `json:"-"`
	Y         []float32 `json:"-"`
	Amplitude []float32 `json:"-"`
	// Warnings are those of FolderOptions and the passes, as written
	// into dspk.json.
	Warnings []string `json:"-"`
}

// WriteDetections runs the three passes and writes the Phy /
// SpikeInterface folder described in docs/formats.md. The folder is
// filled under a temporary name and renamed into place only when
// complete; on any error nothing is left behind. Per-spike arrays are
// streamed to disk as the windows are detected.
func (p *Pipeline) WriteDetections(ctx context.Context, opt FolderOptions) (*Summary, error) {
	start := time.Now()
	od, err := export.CreateOutputDir(opt.Out, export.OutputOptions{Overwrite: opt.Overwrite, Inputs: opt.Inputs})
	if err != nil {
		return nil, err
	}
	defer od.Abort()

	w, _, err := p.Whitening(ctx)
	if err != nil {
		return nil, err
	}
	sum := &Summary{Out: opt.Out, Windows: p.sched.Windows, Samples: p.sched.End - p.sched.Start}
	tm := opt.Templates
	if tm == nil {
		tm, sum.Clips, err = p.LearnTemplates(ctx, w)
		if err != nil {
			return nil, err
		}
	}
	prm := p.DetectParams()
	if tm.NT != prm.NT {
		return nil, fmt.Errorf("%s: templates of %d samples, the run uses nt = %d", opt.TemplatesFile, tm.NT, prm.NT)
	}

	g, err := p.Grid()
	if err != nil {
		return nil, err
	}
	// The grid clips nearest_chans to the channels there are.
	sw, err := newSpikeWriters(od, g.NC, tm.P)
	if err != nil {
		return nil, err
	}
	defer sw.close()
	stats, err := p.Detect(ctx, w, tm, func(win recording.Window, s *detect.Spikes) error {
		if opt.OnSpikes != nil {
			opt.OnSpikes(win, s)
		}
		sum.Times = append(sum.Times, s.Sample...)
		sum.Y = append(sum.Y, s.Y...)
		sum.Amplitude = append(sum.Amplitude, s.Amplitude...)
		return sw.append(s)
	})
	if err != nil {
		return nil, err
	}
	if err := sw.finish(od); err != nil {
		return nil, err
	}
	sum.Centres = g.F()
	sum.Work = stats
	sum.Spikes = len(sum.Times)

	// Per-recording files.
	C := p.probe.Len()
	cm := make([]int32, C)
	pos := make([]float32, 2*C)
	for i := range cm {
		cm[i] = int32(p.probe.ChanMap[i])
		pos[2*i], pos[2*i+1] = float32(p.probe.X[i]), float32(p.probe.Y[i])
	}
	dense, inv, err := WhiteningMatrices(w)
	if err != nil {
		return nil, err
	}
	files := []struct {
		name  string
		shape []int
		data  any
	}{
		{"channel_map.npy", []int{C}, cm},
		{"channel_positions.npy", []int{C, 2}, pos},
		{"whitening_mat.npy", []int{C, C}, dense},
		{"whitening_mat_inv.npy", []int{C, C}, inv},
		{"wTEMP.npy", []int{tm.K, tm.NT}, tm.WTEMP},
		{"wPCA.npy", []int{tm.P, tm.NT}, tm.WPCA},
	}
	for _, f := range files {
		if err := export.WriteNPYFile(od.Path(f.name), f.shape, f.data); err != nil {
			return nil, err
		}
	}
	datPath := opt.DatPath
	if datPath == "" {
		datPath = p.rec.Name()
	}
	datPath = absPath(datPath)
	err = export.WriteParamsPy(od.Path("params.py"), export.ParamsPy{
		DatPath: []string{datPath}, NChannelsDat: p.rec.Channels(), DType: "int16",
		SampleRate: p.rec.SampleRate(), HPFiltered: false,
	})
	if err != nil {
		return nil, err
	}

	sum.Wall = time.Since(start)
	sum.WallSeconds = sum.Wall.Seconds()
	sum.Seconds = float64(sum.Samples) / p.rec.SampleRate()
	sum.TimesRealTime = sum.Seconds / sum.WallSeconds
	sum.PassSeconds = map[string]float64{}
	for k, v := range p.Timings {
		sum.PassSeconds[k] = v.Seconds()
	}
	host, _ := os.Hostname()
	prov := map[string]any{
		"dspk_version": Version,
		"go_version":   runtime.Version(),
		"host":         host,
		"gomaxprocs":   runtime.GOMAXPROCS(0),
		"input": map[string]any{
			"path": absPath(p.rec.Name()), "format": p.rec.Format(), "channels": p.rec.Channels(),
			"sample_rate": p.rec.SampleRate(), "samples": p.rec.Samples(),
		},
		"probe": map[string]any{"name": p.probe.Name, "summary": p.probe.Summary(), "sites": C},
		"grid": map[string]any{"dmin": g.Dmin, "dminx": g.Dminx, "candidates": g.Candidates, "centres": g.F(),
			"nearest_chans": g.NC, "nearest_templates": g.NC2},
		"config":            p.cfg,
		"detection":         prm,
		"templates":         templatesSource(opt),
		"device":            opt.Device,
		"schedule":          p.sched,
		"summary":           sum,
		"whitening_windows": p.StatWindows(),
	}
	sum.Warnings = append(append([]string{}, opt.Warnings...), p.Warnings()...)
	prov["warnings"] = sum.Warnings
	if err := export.WriteJSON(od.Path("dspk.json"), prov); err != nil {
		return nil, err
	}
	if err := od.Commit(); err != nil {
		return nil, err
	}
	return sum, nil
}

func templatesSource(opt FolderOptions) string {
	if opt.Templates != nil {
		return opt.TemplatesFile
	}
	return "learned from the data"
}

// spikeWriters stream the per-spike arrays of a detection folder.
type spikeWriters struct {
	nc, p                                 int
	times, tmpl, amp, pos, cent, pcf, chn *export.NPYAppender
	all                                   []*export.NPYAppender
	// peaks columns (SpikeInterface's peak record), written at the end.
	pkSample, pkChan []int64
	pkAmp            []float64
	// scratch
	i32, i32b []int32
	f32       []float32
	feat      []float32
}

func newSpikeWriters(od *export.OutputDir, nc, p int) (*spikeWriters, error) {
	sw := &spikeWriters{nc: nc, p: p}
	var err error
	mk := func(name string, zero any, tail ...int) *export.NPYAppender {
		if err != nil {
			return nil
		}
		var a *export.NPYAppender
		a, err = export.CreateNPY(od.Path(name), zero, tail...)
		if a != nil {
			sw.all = append(sw.all, a)
		}
		return a
	}
	sw.times = mk("spike_times.npy", []int64(nil))
	sw.tmpl = mk("spike_detection_templates.npy", []int32(nil))
	sw.amp = mk("amplitudes.npy", []float32(nil))
	sw.pos = mk("spike_positions.npy", []float32(nil), 2)
	sw.cent = mk("spike_centres.npy", []int32(nil))
	sw.pcf = mk("pc_features.npy", []float32(nil), p, nc)
	sw.chn = mk("spike_channels.npy", []int32(nil), nc)
	if err != nil {
		sw.close()
		return nil, err
	}
	return sw, nil
}

func (sw *spikeWriters) append(s *detect.Spikes) error {
	n := s.Len()
	if n == 0 {
		return nil
	}
	sw.i32 = sw.i32[:0]
	sw.i32b = sw.i32b[:0]
	sw.f32 = sw.f32[:0]
	for i := 0; i < n; i++ {
		sw.i32 = append(sw.i32, int32(s.Template[i]))
		sw.i32b = append(sw.i32b, s.Center[i])
		sw.f32 = append(sw.f32, s.X[i], s.Y[i])
		sw.pkSample = append(sw.pkSample, s.Sample[i])
		sw.pkChan = append(sw.pkChan, int64(s.Channels[i*s.NC]))
		sw.pkAmp = append(sw.pkAmp, float64(s.Amplitude[i]))
	}
	// Phy's pc_features axis order is (spike, pc, channel); the detector
	// stores (spike, channel, pc) like Kilosort4's tF.
	sw.feat = sw.feat[:0]
	for i := 0; i < n; i++ {
		for q := 0; q < s.P; q++ {
			for j := 0; j < s.NC; j++ {
				sw.feat = append(sw.feat, s.Features[(i*s.NC+j)*s.P+q])
			}
		}
	}
	for _, a := range []struct {
		w *export.NPYAppender
		d any
	}{
		{sw.times, s.Sample}, {sw.tmpl, sw.i32}, {sw.amp, s.Amplitude}, {sw.pos, sw.f32},
		{sw.cent, sw.i32b}, {sw.pcf, sw.feat}, {sw.chn, s.Channels},
	} {
		if err := a.w.Append(a.d); err != nil {
			return err
		}
	}
	return nil
}

// finish closes the streamed arrays and writes peaks.npy.
func (sw *spikeWriters) finish(od *export.OutputDir) error {
	for _, a := range sw.all {
		if err := a.Close(); err != nil {
			return err
		}
	}
	sw.all = nil
	seg := make([]int64, len(sw.pkSample))
	return export.WriteNPYRecordsFile(od.Path("peaks.npy"),
		export.Column{Name: "sample_index", Data: sw.pkSample},
		export.Column{Name: "channel_index", Data: sw.pkChan},
		export.Column{Name: "amplitude", Data: sw.pkAmp},
		export.Column{Name: "segment_index", Data: seg})
}

func (sw *spikeWriters) close() {
	for _, a := range sw.all {
		a.Close()
	}
	sw.all = nil
}

// absPath returns path made absolute where possible.
func absPath(path string) string {
	if abs, err := filepath.Abs(path); err == nil {
		return abs
	}
	return path
}
