package sim

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"

	"dspk/export"
	"dspk/probe"
)

// Truth is the ground truth of a synthetic recording. Spike i is a trough
// of unit SpikeClusters[i] at sample SpikeTimes[i]; unit arrays are indexed
// by unit id.
type Truth struct {
	// Config is the resolved configuration (with its probe).
	Config Config
	// Samples is the length of the recording.
	Samples int64
	// TroughIndex is the index of the trough in each UnitWaveform.
	TroughIndex int

	// SpikeTimes are the trough samples, sorted (ties by unit).
	SpikeTimes []int64
	// SpikeClusters are the unit ids of the spikes.
	SpikeClusters []int32

	// UnitX and UnitY are the units' positions in the probe's frame (µm)
	// at time 0; UnitZ is their distance from the probe plane.
	UnitX, UnitY, UnitZ []float64
	// UnitAmplitude is the trough depth on the best site at time 0, in
	// noise SDs.
	UnitAmplitude []float64
	// UnitRate is the mean firing rate in Hz.
	UnitRate []float64
	// UnitShape is the waveform family.
	UnitShape []Shape
	// UnitPeakChannel is the site index (probe order, not file row) with
	// the largest trough at time 0.
	UnitPeakChannel []int32
	// UnitWaveform is each unit's temporal waveform, trough −1 at
	// TroughIndex. A spike adds, on site c, UnitWaveform ·
	// UnitAmplitude·NoiseSD · f(d_c)/f(d_best) (times the spike's
	// SpikeScale, if any), where f is the footprint, d_c the distance from
	// the unit (moved by the motion to the spike's time) to site c and
	// d_best the distance to the best site at time 0.
	UnitWaveform [][]float64

	// Motion is the true displacement field; nil when nothing moves (no
	// drift, sine, steps or non-rigid gain) and Config.MotionTruth is
	// not set.
	Motion *Motion
	// SpikePos holds every spike's true position, row-major n×3: x and y
	// in the probe's frame (µm) at the spike's time, motion included, and
	// z, the distance from the probe plane (µm). Nil when Motion is nil.
	SpikePos []float32
	// SpikeScale is each spike's amplitude relative to its unit's (below
	// 1 for the later spikes of a burst); nil means 1 for every spike.
	SpikeScale []float32
}

// newTruth copies the ground truth out of m.
func newTruth(m *model) *Truth {
	n := len(m.units)
	t := &Truth{
		Config:          m.cfg,
		Samples:         m.samples,
		TroughIndex:     m.pre,
		SpikeTimes:      m.times,
		SpikeClusters:   m.clusters,
		UnitX:           make([]float64, n),
		UnitY:           make([]float64, n),
		UnitZ:           make([]float64, n),
		UnitAmplitude:   make([]float64, n),
		UnitRate:        make([]float64, n),
		UnitShape:       make([]Shape, n),
		UnitPeakChannel: make([]int32, n),
		UnitWaveform:    make([][]float64, n),
	}
	t.Config.Probe = cloneProbe(m.probe)
	for i, u := range m.units {
		t.UnitX[i], t.UnitY[i], t.UnitZ[i] = u.x, u.y, u.z
		t.UnitAmplitude[i] = u.amp
		t.UnitRate[i] = u.rate
		t.UnitShape[i] = u.shape
		t.UnitPeakChannel[i] = int32(u.peak)
		t.UnitWaveform[i] = append([]float64(nil), u.wave...)
	}
	t.SpikeScale = m.scales
	if m.motion.moves || m.motion.nonRigid || m.cfg.MotionTruth {
		t.Motion = m.motion.motionGrid(m.samples)
		t.SpikePos = make([]float32, 3*len(m.times))
		y := t.SpikeY()
		for i, c := range m.clusters {
			u := &m.units[c]
			t.SpikePos[3*i], t.SpikePos[3*i+1], t.SpikePos[3*i+2] = float32(u.x), float32(y[i]), float32(u.z)
		}
	}
	return t
}

// Units returns the number of units.
func (t *Truth) Units() int { return len(t.UnitX) }

// SpikeY returns the depth (µm) of each spike's unit at the spike's time:
// UnitY moved by the motion (the drift, sine, steps and non-rigid gain of
// the config), exactly as the recording renders it.
func (t *Truth) SpikeY() []float64 {
	mm := newMotionModel(t.Config)
	y := make([]float64, len(t.SpikeTimes))
	for i, s := range t.SpikeTimes {
		y0 := t.UnitY[t.SpikeClusters[i]]
		y[i] = y0 + mm.unitDisp(mm.rigidSample(s), y0)
	}
	return y
}

// SpikeAmplitude returns each spike's amplitude in noise SDs: its unit's
// amplitude times the spike's scale (bursts).
func (t *Truth) SpikeAmplitude() []float64 {
	a := make([]float64, len(t.SpikeTimes))
	for i, c := range t.SpikeClusters {
		a[i] = t.UnitAmplitude[c]
		if t.SpikeScale != nil {
			a[i] *= float64(t.SpikeScale[i])
		}
	}
	return a
}

// UnitSpikeCounts returns the number of spikes of each unit.
func (t *Truth) UnitSpikeCounts() []int {
	n := make([]int, t.Units())
	for _, c := range t.SpikeClusters {
		n[c]++
	}
	return n
}

// truthVersion identifies the generator's model in truth.json; it changes
// whenever the same Config would give different output.
const truthVersion = 1

// truthJSON is the layout of truth.json.
type truthJSON struct {
	Generator      string     `json:"generator"`
	Version        int        `json:"version"`
	Config         configJSON `json:"config"`
	Samples        int64      `json:"samples"`
	Channels       int        `json:"channels"`
	Spikes         int        `json:"spikes"`
	TroughIndex    int        `json:"trough_index"`
	WaveformLength int        `json:"waveform_samples"`
	Units          []unitJSON `json:"units"`
}

// configJSON is a Config whose probe is kept as raw JSON, so that
// WriteDir can write it on one line.
type configJSON struct {
	Config
	Probe json.RawMessage `json:"probe"`
}

// probePlaceholder stands for the probe in the indented JSON until the
// compact probe replaces it.
const probePlaceholder = `"@probe@"`

type unitJSON struct {
	ID          int     `json:"id"`
	X           float64 `json:"x_um"`
	Y           float64 `json:"y_um"`
	Z           float64 `json:"z_um"`
	Amplitude   float64 `json:"amplitude_sd"`
	Rate        float64 `json:"rate_hz"`
	Shape       Shape   `json:"shape"`
	PeakChannel int32   `json:"peak_channel"`
	Spikes      int     `json:"spikes"`
}

// Truth file names in a directory written by [Truth.WriteDir].
const (
	FileSpikeTimes      = "spike_times.npy"
	FileSpikeClusters   = "spike_clusters.npy"
	FileUnitPositions   = "unit_positions.npy"
	FileUnitAmplitudes  = "unit_amplitudes.npy"
	FileUnitPeakChannel = "unit_peak_channel.npy"
	FileUnitWaveforms   = "unit_waveforms.npy"
	FileTruthJSON       = "truth.json"

	// Written only when Truth.Motion is set: the displacement (float64,
	// times×depths, µm), its time axis (float64, s), its depth axis
	// (float64, µm) and every spike's true x, y, z (float32, n×3, µm).
	FileMotion         = "motion.npy"
	FileMotionTimes    = "motion_times.npy"
	FileMotionDepths   = "motion_depths.npy"
	FileSpikePositions = "spike_positions.npy"
	// FileSpikeScales holds Truth.SpikeScale (float32, n) when it is set.
	FileSpikeScales = "spike_amplitude_scales.npy"
)

// WriteDir writes the ground truth into dir, which must exist:
// spike_times.npy (int64, n), spike_clusters.npy (int32, n),
// unit_positions.npy (float32, units×2: x, y at time 0),
// unit_amplitudes.npy (float32, noise SDs), unit_peak_channel.npy (int32,
// site index), unit_waveforms.npy (float32, units×waveform samples) and
// truth.json (the config, counts and every unit's parameters in full
// precision); with Motion set also motion.npy, motion_times.npy,
// motion_depths.npy and spike_positions.npy, and with SpikeScale set
// spike_amplitude_scales.npy (see the File constants). Each file is written under a temporary name and renamed, so
// a reader sees whole files; on error the files written so far are
// removed.
func (t *Truth) WriteDir(dir string) (err error) {
	nu := t.Units()
	pos := make([]float32, 2*nu)
	amp := make([]float32, nu)
	nt := t.waveformLen()
	wav := make([]float32, nu*nt)
	for i := range nu {
		pos[2*i], pos[2*i+1] = float32(t.UnitX[i]), float32(t.UnitY[i])
		amp[i] = float32(t.UnitAmplitude[i])
		for j, v := range t.UnitWaveform[i] {
			wav[i*nt+j] = float32(v)
		}
	}
	counts := t.UnitSpikeCounts()
	js := truthJSON{
		Generator:      "dspk/sim",
		Version:        truthVersion,
		Config:         configJSON{Config: t.Config, Probe: json.RawMessage(probePlaceholder)},
		Samples:        t.Samples,
		Channels:       t.Config.Probe.NChanFile,
		Spikes:         len(t.SpikeTimes),
		TroughIndex:    t.TroughIndex,
		WaveformLength: nt,
		Units:          make([]unitJSON, nu),
	}
	for i := range nu {
		js.Units[i] = unitJSON{
			ID: i, X: t.UnitX[i], Y: t.UnitY[i], Z: t.UnitZ[i],
			Amplitude: t.UnitAmplitude[i], Rate: t.UnitRate[i], Shape: t.UnitShape[i],
			PeakChannel: t.UnitPeakChannel[i], Spikes: counts[i],
		}
	}
	jb, err := json.MarshalIndent(js, "", "  ")
	if err != nil {
		return fmt.Errorf("sim: truth.json: %w", err)
	}
	pb, err := json.Marshal(t.Config.Probe)
	if err != nil {
		return fmt.Errorf("sim: truth.json: %w", err)
	}
	jb = bytes.Replace(jb, []byte(probePlaceholder), pb, 1)
	jb = append(jb, '\n')

	type file struct {
		name  string
		write func(path string) error
	}
	npy := func(shape []int, data any) func(string) error {
		return func(p string) error { return export.WriteNPYFile(p, shape, data) }
	}
	files := []file{
		{FileSpikeTimes, npy([]int{len(t.SpikeTimes)}, t.SpikeTimes)},
		{FileSpikeClusters, npy([]int{len(t.SpikeClusters)}, t.SpikeClusters)},
		{FileUnitPositions, npy([]int{nu, 2}, pos)},
		{FileUnitAmplitudes, npy([]int{nu}, amp)},
		{FileUnitPeakChannel, npy([]int{nu}, t.UnitPeakChannel)},
		{FileUnitWaveforms, npy([]int{nu, nt}, wav)},
	}
	if m := t.Motion; m != nil {
		files = append(files,
			file{FileMotion, npy([]int{len(m.Times), len(m.Depths)}, m.Disp)},
			file{FileMotionTimes, npy([]int{len(m.Times)}, m.Times)},
			file{FileMotionDepths, npy([]int{len(m.Depths)}, m.Depths)},
			file{FileSpikePositions, npy([]int{len(t.SpikeTimes), 3}, t.SpikePos)})
	}
	if t.SpikeScale != nil {
		files = append(files, file{FileSpikeScales, npy([]int{len(t.SpikeScale)}, t.SpikeScale)})
	}
	// truth.json last: a reader that sees it sees every other file.
	files = append(files, file{FileTruthJSON, func(p string) error { return os.WriteFile(p, jb, 0o644) }})
	var done []string
	defer func() {
		if err != nil {
			for _, p := range done {
				os.Remove(p)
			}
		}
	}()
	for _, f := range files {
		final := filepath.Join(dir, f.name)
		tmp := final + ".tmp"
		if err := f.write(tmp); err != nil {
			os.Remove(tmp)
			return fmt.Errorf("sim: writing %s: %w", final, err)
		}
		if err := os.Rename(tmp, final); err != nil {
			os.Remove(tmp)
			return fmt.Errorf("sim: writing %s: %w", final, err)
		}
		done = append(done, final)
	}
	return nil
}

// waveformLen is the length of the unit waveforms (from the sample rate
// when there are no units).
func (t *Truth) waveformLen() int {
	if len(t.UnitWaveform) > 0 {
		return len(t.UnitWaveform[0])
	}
	_, nt := waveformLen(t.Config.SampleRate)
	return nt
}

// ReadTruthDir reads a directory written by [Truth.WriteDir]. Unit
// parameters come from truth.json in full precision; the spike arrays and
// waveforms from the .npy files. The files are checked against each other
// (counts, shapes, sorted times, cluster ids, per-unit spike counts, the
// float32 copies of positions and amplitudes); errors name the file.
func ReadTruthDir(dir string) (*Truth, error) {
	t, js, err := readTruthJSON(dir)
	if err != nil {
		return nil, err
	}
	if err := t.readSpikes(dir, js); err != nil {
		return nil, err
	}
	if err := t.readUnits(dir, js); err != nil {
		return nil, err
	}
	if err := t.readExtras(dir); err != nil {
		return nil, err
	}
	return t, nil
}

// truthError is the error of file name of the truth directory dir.
func truthError(dir, name, format string, a ...any) error {
	return fmt.Errorf("sim: %s: %s", filepath.Join(dir, name), fmt.Sprintf(format, a...))
}

// readTruthJSON reads truth.json of dir: the Truth of its configuration
// and unit parameters, and the file's contents.
func readTruthJSON(dir string) (*Truth, *truthJSON, error) {
	jpath := filepath.Join(dir, FileTruthJSON)
	jb, err := os.ReadFile(jpath)
	if err != nil {
		return nil, nil, fmt.Errorf("sim: %w", err)
	}
	var js truthJSON
	if err := json.Unmarshal(jb, &js); err != nil {
		return nil, nil, fmt.Errorf("sim: %s: %w", jpath, err)
	}
	bad := func(format string, a ...any) error { return truthError(dir, FileTruthJSON, format, a...) }
	if js.Generator != "dspk/sim" || js.Version != truthVersion {
		return nil, nil, bad("generator %q version %d, want dspk/sim version %d", js.Generator, js.Version, truthVersion)
	}
	var pr *probe.Probe
	if err := json.Unmarshal(js.Config.Probe, &pr); err != nil || pr == nil {
		return nil, nil, bad("no valid probe in config (%v)", err)
	}
	if err := pr.Validate(); err != nil {
		return nil, nil, bad("%v", err)
	}
	js.Config.Config.Probe = pr
	nu := len(js.Units)
	if js.TroughIndex < 0 || js.TroughIndex >= js.WaveformLength || js.Samples < 0 || js.Spikes < 0 {
		return nil, nil, bad("trough index %d, waveform length %d, %d samples, %d spikes",
			js.TroughIndex, js.WaveformLength, js.Samples, js.Spikes)
	}
	t := &Truth{
		Config:          js.Config.Config,
		Samples:         js.Samples,
		TroughIndex:     js.TroughIndex,
		UnitX:           make([]float64, nu),
		UnitY:           make([]float64, nu),
		UnitZ:           make([]float64, nu),
		UnitAmplitude:   make([]float64, nu),
		UnitRate:        make([]float64, nu),
		UnitShape:       make([]Shape, nu),
		UnitPeakChannel: make([]int32, nu),
		UnitWaveform:    make([][]float64, nu),
	}
	nSites := pr.Len()
	for i, u := range js.Units {
		if u.ID != i {
			return nil, nil, bad("unit %d has id %d", i, u.ID)
		}
		if u.PeakChannel < 0 || int(u.PeakChannel) >= nSites {
			return nil, nil, bad("unit %d: peak channel %d outside 0..%d", i, u.PeakChannel, nSites-1)
		}
		t.UnitX[i], t.UnitY[i], t.UnitZ[i] = u.X, u.Y, u.Z
		t.UnitAmplitude[i], t.UnitRate[i], t.UnitShape[i] = u.Amplitude, u.Rate, u.Shape
		t.UnitPeakChannel[i] = u.PeakChannel
	}
	return t, &js, nil
}

// readSpikes reads the spike times and clusters and checks them against
// truth.json js: times sorted within the recording, clusters of its
// units, its per-unit spike counts.
func (t *Truth) readSpikes(dir string, js *truthJSON) error {
	nu := len(js.Units)
	if err := readNPY(dir, FileSpikeTimes, []int{js.Spikes}, &t.SpikeTimes); err != nil {
		return err
	}
	if err := readNPY(dir, FileSpikeClusters, []int{js.Spikes}, &t.SpikeClusters); err != nil {
		return err
	}
	counts := make([]int, nu)
	for i, c := range t.SpikeClusters {
		if c < 0 || int(c) >= nu {
			return truthError(dir, FileSpikeClusters, "spike %d has cluster %d, outside 0..%d", i, c, nu-1)
		}
		counts[c]++
	}
	for i, s := range t.SpikeTimes {
		if s < 0 || s >= js.Samples {
			return truthError(dir, FileSpikeTimes, "spike %d at sample %d, outside 0..%d", i, s, js.Samples-1)
		}
		if i > 0 && s < t.SpikeTimes[i-1] {
			return truthError(dir, FileSpikeTimes, "spike %d at sample %d comes before spike %d at %d", i, s, i-1, t.SpikeTimes[i-1])
		}
	}
	for i, u := range js.Units {
		if counts[i] != u.Spikes {
			return truthError(dir, FileSpikeClusters, "unit %d has %d spikes, %s says %d", i, counts[i], FileTruthJSON, u.Spikes)
		}
	}
	return nil
}

// readUnits reads the units' positions, amplitudes, peak channels (each
// checked against truth.json's) and waveforms.
func (t *Truth) readUnits(dir string, js *truthJSON) error {
	nu := len(js.Units)
	var pos, amp, wav []float32
	var peak []int32
	if err := readNPY(dir, FileUnitPositions, []int{nu, 2}, &pos); err != nil {
		return err
	}
	if err := readNPY(dir, FileUnitAmplitudes, []int{nu}, &amp); err != nil {
		return err
	}
	if err := readNPY(dir, FileUnitPeakChannel, []int{nu}, &peak); err != nil {
		return err
	}
	if err := readNPY(dir, FileUnitWaveforms, []int{nu, js.WaveformLength}, &wav); err != nil {
		return err
	}
	for i := range nu {
		if pos[2*i] != float32(t.UnitX[i]) || pos[2*i+1] != float32(t.UnitY[i]) {
			return truthError(dir, FileUnitPositions, "unit %d at (%g, %g), %s says (%g, %g)", i, pos[2*i], pos[2*i+1], FileTruthJSON, t.UnitX[i], t.UnitY[i])
		}
		if amp[i] != float32(t.UnitAmplitude[i]) {
			return truthError(dir, FileUnitAmplitudes, "unit %d amplitude %g, %s says %g", i, amp[i], FileTruthJSON, t.UnitAmplitude[i])
		}
		if peak[i] != t.UnitPeakChannel[i] {
			return truthError(dir, FileUnitPeakChannel, "unit %d peak channel %d, %s says %d", i, peak[i], FileTruthJSON, t.UnitPeakChannel[i])
		}
		w := make([]float64, js.WaveformLength)
		for j := range w {
			w[j] = float64(wav[i*js.WaveformLength+j])
			if math.IsNaN(w[j]) || math.IsInf(w[j], 0) {
				return truthError(dir, FileUnitWaveforms, "unit %d sample %d is %g", i, j, w[j])
			}
		}
		t.UnitWaveform[i] = w
	}
	return nil
}

// readExtras reads the motion files and the spike scales when they exist.
func (t *Truth) readExtras(dir string) error {
	exists := func(name string) bool {
		_, err := os.Stat(filepath.Join(dir, name))
		return err == nil
	}
	n := len(t.SpikeTimes)
	if exists(FileMotion) {
		m := &Motion{}
		var shape []int
		if err := readNPYShape(dir, FileMotion, 2, &shape, &m.Disp); err != nil {
			return err
		}
		if err := readNPY(dir, FileMotionTimes, shape[:1], &m.Times); err != nil {
			return err
		}
		if err := readNPY(dir, FileMotionDepths, shape[1:], &m.Depths); err != nil {
			return err
		}
		for _, c := range []struct {
			name string
			err  error
		}{
			{FileMotionTimes, checkAxis("time", m.Times)},
			{FileMotionDepths, checkAxis("depth", m.Depths)},
			{FileMotion, m.checkDisp()},
		} {
			if c.err != nil {
				return fmt.Errorf("sim: %s: %w", filepath.Join(dir, c.name), c.err)
			}
		}
		if err := readNPY(dir, FileSpikePositions, []int{n, 3}, &t.SpikePos); err != nil {
			return err
		}
		for i, v := range t.SpikePos {
			if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
				return fmt.Errorf("sim: %s: spike %d coordinate %d is %g", filepath.Join(dir, FileSpikePositions), i/3, i%3, v)
			}
		}
		t.Motion = m
	}
	if exists(FileSpikeScales) {
		if err := readNPY(dir, FileSpikeScales, []int{n}, &t.SpikeScale); err != nil {
			return err
		}
		for i, v := range t.SpikeScale {
			if !(v > 0) || math.IsInf(float64(v), 0) {
				return fmt.Errorf("sim: %s: spike %d has scale %g, want > 0", filepath.Join(dir, FileSpikeScales), i, v)
			}
		}
	}
	return nil
}

// readNPYShape reads dir/name, a float64 array of rank dims, into *data
// and its shape into *shape.
func readNPYShape(dir, name string, dims int, shape *[]int, data *[]float64) error {
	path := filepath.Join(dir, name)
	a, err := export.ReadNPYFile(path)
	if err != nil {
		return fmt.Errorf("sim: %w", err)
	}
	if len(a.Shape) != dims || a.Descr != "<f8" || a.Fortran && dims > 1 {
		return fmt.Errorf("sim: %s: %s array of shape %v (Fortran %v), want <f8 of rank %d in C order", path, a.Descr, a.Shape, a.Fortran, dims)
	}
	*shape = a.Shape
	*data, err = a.Float64()
	if err != nil {
		return fmt.Errorf("sim: %s: %w", path, err)
	}
	return nil
}

// readNPY reads dir/name (export's .npy reader) into ptr, a *[]int64,
// *[]int32, *[]float32 or *[]float64, after checking that its shape is
// want and its dtype the one ptr's element type is written as.
func readNPY(dir, name string, want []int, ptr any) error {
	path := filepath.Join(dir, name)
	a, err := export.ReadNPYFile(path)
	if err != nil {
		return fmt.Errorf("sim: %w", err)
	}
	if !slices.Equal(a.Shape, want) {
		return fmt.Errorf("sim: %s: shape %v, want %v", path, a.Shape, want)
	}
	if a.Fortran && len(want) > 1 {
		return fmt.Errorf("sim: %s: Fortran order is not supported", path)
	}
	descr := "<" // WriteNPY writes little-endian
	switch ptr.(type) {
	case *[]int64:
		descr += "i8"
	case *[]int32:
		descr += "i4"
	case *[]float32:
		descr += "f4"
	case *[]float64:
		descr += "f8"
	default:
		panic(fmt.Sprintf("sim: readNPY into %T", ptr))
	}
	if a.Descr != descr {
		return fmt.Errorf("sim: %s: dtype %s, want %s", path, a.Descr, descr)
	}
	switch p := ptr.(type) {
	case *[]int64:
		*p, err = a.Int64()
	case *[]int32:
		var v []int64
		v, err = a.Int64()
		*p = make([]int32, len(v))
		for i, x := range v {
			(*p)[i] = int32(x)
		}
	case *[]float32:
		*p, err = a.Float32()
	case *[]float64:
		*p, err = a.Float64()
	}
	if err != nil {
		return fmt.Errorf("sim: %s: %w", path, err)
	}
	return nil
}
