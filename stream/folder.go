package stream

import (
	"cmp"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"dspk/export"
)

// Folder gathers a stream's spikes for the folder written at its end.
// Its output folder is taken when it is created ([CreateFolder]), so that
// a folder that cannot be written is refused before the stream starts, not
// after an hour of it.
type Folder struct {
	od          *export.OutputDir
	m           *Model
	times       []int64
	units, tmpl []int32
	amps        []float32
}

// CreateFolder starts the folder dir of a stream of m's units (a
// temporary folder beside it until [Folder.Write]). overwrite replaces a
// folder an earlier stream wrote; any other existing dir is refused.
func CreateFolder(dir string, m *Model, overwrite bool) (*Folder, error) {
	od, err := export.CreateOutputDir(dir, export.OutputOptions{Kind: "stream", Overwrite: overwrite, Inputs: []string{m.Dir}})
	if err != nil {
		return nil, err
	}
	return &Folder{od: od, m: m}, nil
}

// Abort removes the folder's temporary folder; after Write it does
// nothing.
func (f *Folder) Abort() error { return f.od.Abort() }

// Add keeps one spike.
func (f *Folder) Add(sp Spike) {
	f.times = append(f.times, sp.Sample)
	f.units = append(f.units, sp.Unit)
	f.tmpl = append(f.tmpl, sp.Template)
	f.amps = append(f.amps, sp.Amplitude)
}

// sortFiles are the sort folder's files the stream's folder copies: the
// units' templates and the channels, which Phy and SpikeInterface read
// with the spikes.
var sortFiles = []string{"templates.npy", "templates_ind.npy", "similar_templates.npy", "channel_map.npy",
	"channel_positions.npy", "channel_shanks.npy", "whitening_mat.npy", "whitening_mat_inv.npy", "probe.json"}

// Write writes the folder and puts it in place (the temporary folder
// renamed): the spikes as Kilosort's arrays (spike_times.npy,
// spike_clusters.npy and spike_templates.npy with the sort's units,
// spike_detection_templates.npy, amplitudes.npy), the sort's templates and
// channels, params.py naming source (a file; none for standard input or a
// socket) and stream.json with st. On an error the temporary folder is
// removed.
func (f *Folder) Write(source string, st *Stats) error {
	od, m := f.od, f.m
	defer od.Abort()
	f.sortByTime()
	n := len(f.times)
	for _, a := range []struct {
		name string
		data any
	}{{"spike_times.npy", f.times}, {"spike_clusters.npy", f.units}, {"spike_templates.npy", f.units},
		{"spike_detection_templates.npy", f.tmpl}, {"amplitudes.npy", f.amps}} {
		if err := export.WriteNPYFile(od.Path(a.name), []int{n}, a.data); err != nil {
			return err
		}
	}
	for _, name := range sortFiles {
		b, err := os.ReadFile(filepath.Join(m.Dir, name))
		if os.IsNotExist(err) && name != "templates.npy" && name != "channel_map.npy" {
			continue
		}
		if err != nil {
			return fmt.Errorf("stream: %w", err)
		}
		if err := os.WriteFile(od.Path(name), b, 0o666); err != nil {
			return fmt.Errorf("stream: %w", err)
		}
	}
	var dat []string
	if fi, err := os.Stat(source); err == nil && fi.Mode().IsRegular() {
		if abs, err := filepath.Abs(source); err == nil {
			dat = []string{abs}
		}
	}
	if err := export.WriteParamsPy(od.Path("params.py"), export.ParamsPy{DatPath: dat, NChannelsDat: m.FileChannels,
		DType: "int16", SampleRate: m.SampleRate}); err != nil {
		return err
	}
	b, err := json.MarshalIndent(struct {
		Sort   string `json:"sort"`
		Source string `json:"source"`
		*Stats
	}{m.Dir, source, st}, "", "  ")
	if err != nil {
		return fmt.Errorf("stream: %w", err)
	}
	if err := os.WriteFile(od.Path("stream.json"), append(b, '\n'), 0o666); err != nil {
		return fmt.Errorf("stream: %w", err)
	}
	return od.Commit()
}

// sortByTime puts the spikes in order of time: a spike held as a possible
// copy is given out after later spikes of other templates.
func (f *Folder) sortByTime() {
	idx := make([]int, len(f.times))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int { return cmp.Compare(f.times[a], f.times[b]) })
	t, u, k, q := make([]int64, len(idx)), make([]int32, len(idx)), make([]int32, len(idx)), make([]float32, len(idx))
	for i, j := range idx {
		t[i], u[i], k[i], q[i] = f.times[j], f.units[j], f.tmpl[j], f.amps[j]
	}
	f.times, f.units, f.tmpl, f.amps = t, u, k, q
}
