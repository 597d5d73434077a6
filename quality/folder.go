package quality

import (
	"bufio"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"dspk/export"
)

// NoiseFile and GainFile are a sort folder's channel scales, float32
// [channels] in channel_map.npy's order: NoiseFile the noise levels of
// the preprocessed, unwhitened data in the recording's units
// (SpikeInterface's get_noise_levels: the median absolute deviation of
// random chunks over 0.6745), GainFile the recording's µV per unit (its
// gains: a SpikeGLX meta's, an Open Ephys bit_volts), absent where a
// channel's gain is unknown.
const (
	NoiseFile = "noise_levels.npy"
	GainFile  = "channel_gains_uv.npy"
)

// Noise sources of [Input.NoiseSource].
const (
	// NoiseMAD: SpikeInterface's noise levels (median absolute deviation
	// of random chunks of the preprocessed, unwhitened recording).
	NoiseMAD = "mad"
	// NoiseWhitening: each channel's SD in the data implied by the
	// whitening, the spikes included (no recording to measure them on).
	NoiseWhitening = "whitening"
)

// ChannelScales are the noise levels and gains of a sort's channels
// ([NoiseFile], [GainFile]), for a folder that lacks those files.
type ChannelScales struct {
	// Noise are the noise levels in the recording's units; nil leaves
	// the whitening's.
	Noise []float32
	// Gains are the µV per unit of the recording; nil when unknown.
	Gains []float32
}

// ReadSortFolder loads the Input of a Kilosort or Phy folder (as dspk
// sort writes it, or after curation in Phy): spike_times.npy;
// spike_clusters.npy (else spike_templates.npy) as the units;
// spike_templates.npy; amplitudes.npy; templates.npy, unwhitened by
// whitening_mat_inv.npy when present; pc_features.npy and
// pc_feature_ind.npy; channel_positions.npy; spike_positions.npy (its y
// as the depths) when present; params.py for the sample rate; [NoiseFile]
// and [GainFile] when present.
//
// Each unit's template is that of its most frequent template. A spike's
// amplitude is its amplitudes.npy value (Kilosort4's ‖tF‖, the norm of
// the spike's whitened features) over the norm of its own whitened
// template, times that template's signed extremum, unwhitened, on the
// unit's main channel: the spike's peak in the data's units, as
// SpikeInterface's spike_amplitudes reads it off the recording. With
// gains the templates, amplitudes and noise levels are in µV, as
// SpikeInterface gives them for a recording with gains ([Input.Microvolts]).
// The recording's length is that of the raw file params.py names when it
// is there, else the last spike plus one. The noise levels are
// [NoiseFile]'s; without it each channel's standard deviation in the
// unwhitened data implied by the whitening: whitened data have unit
// covariance, so the data's covariance is W⁻¹W⁻ᵀ and a channel's SD is
// the norm of its row of whitening_mat_inv.npy. That SD counts the spikes
// too, so it exceeds SpikeInterface's level and lowers snr
// ([Input.NoiseSource] says which).
func ReadSortFolder(dir string) (*Input, error) {
	return ReadSortFolderWith(dir, nil)
}

// ReadSortFolderWith is [ReadSortFolder] with the channel scales sc (of a
// folder without [NoiseFile]) in place of the folder's files; nil reads
// the files.
func ReadSortFolderWith(dir string, sc *ChannelScales) (*Input, error) {
	p, err := readParams(filepath.Join(dir, "params.py"))
	if err != nil {
		return nil, err
	}
	in := &Input{SampleRate: p.rate}
	ld := loader{dir: dir}
	times := ld.ints("spike_times.npy", true)
	clusters := ld.ints("spike_clusters.npy", false)
	tmpl := ld.ints("spike_templates.npy", false)
	if clusters == nil {
		clusters = tmpl
	}
	if ld.err == nil && clusters == nil {
		ld.err = fmt.Errorf("quality: %s has neither spike_clusters.npy nor spike_templates.npy", dir)
	}
	scale := ld.floats("amplitudes.npy", false)
	tdata, tshape := ld.array("templates.npy", false)
	winv, _ := ld.array("whitening_mat_inv.npy", false)
	pcf, pcShape := ld.float32s("pc_features.npy")
	pcind := ld.ints("pc_feature_ind.npy", false)
	pos, _ := ld.array("channel_positions.npy", false)
	spos, _ := ld.array("spike_positions.npy", false)
	drift, dshape := ld.array("drift.npy", false)
	dtimes, _ := ld.array("drift_times.npy", false)
	if sc == nil {
		sc = &ChannelScales{Noise: toFloat32(ld.floats(NoiseFile, false)), Gains: toFloat32(ld.floats(GainFile, false))}
	}
	if ld.err != nil {
		return nil, ld.err
	}
	in.SpikeTimes = times
	in.SpikeUnits = toInt32(clusters)
	if tmpl != nil {
		in.SpikeTemplates = toInt32(tmpl)
	}
	in.ChannelPositions = pos
	if len(dshape) == 2 && dshape[0] == len(dtimes) && dshape[0] > 0 {
		// drift.npy is [windows, blocks]: the rigid displacement is the
		// blocks' mean.
		in.Motion, in.MotionTimes = make([]float64, dshape[0]), dtimes
		for w := range dshape[0] {
			for b := range dshape[1] {
				in.Motion[w] += drift[w*dshape[1]+b] / float64(dshape[1])
			}
		}
	}
	if spos != nil {
		in.SpikeDepths = make([]float32, len(spos)/2)
		for s := range in.SpikeDepths {
			in.SpikeDepths[s] = float32(spos[2*s+1])
		}
	}
	if pcf != nil && pcind != nil {
		in.PCFeatures, in.NPC, in.NFeat = pcf, pcShape[1], pcShape[2]
		in.PCFeatureInd = toInt32(pcind)
	}
	in.NumSamples = p.samples(dir)
	if in.NumSamples <= 0 {
		for _, t := range times {
			in.NumSamples = max(in.NumSamples, t+1)
		}
	}
	C := len(pos) / 2
	in.NoiseLevels, in.NoiseSource = noiseLevels(winv, C), NoiseWhitening
	if len(sc.Noise) == C && C > 0 {
		in.NoiseLevels, in.NoiseSource = slices.Clone(sc.Noise), NoiseMAD
	}
	var gains []float64
	if len(sc.Gains) == C && C > 0 && !slices.ContainsFunc(sc.Gains, func(g float32) bool { return !(g > 0) }) {
		gains = make([]float64, C)
		for c, g := range sc.Gains {
			gains[c] = float64(g)
		}
	}
	if tdata != nil {
		in.setTemplates(tdata, tshape, winv, scale, gains)
		if gains != nil && len(gains) == tshape[2] && in.NoiseLevels != nil {
			for c := range in.NoiseLevels {
				in.NoiseLevels[c] *= float32(gains[c])
			}
			in.Microvolts = true
		}
	} else if scale != nil {
		in.Amplitudes = toFloat32(scale)
	}
	return in, ld.err
}

// setTemplates fills the per-unit templates and the spikes' amplitudes
// from Kilosort's per-template arrays.
func (in *Input) setTemplates(tdata []float64, shape []int, winv, scale, gains []float64) {
	nT, nt, nc := shape[0], shape[1], shape[2]
	// Kilosort4's amplitudes.npy holds a spike's ‖tF‖, the norm of its
	// whitened features; its template holds the mean of such features, so
	// the spike is about amplitude/‖template‖ times its template.
	norms := make([]float64, nT)
	for t := range nT {
		var ss float64
		for _, v := range tdata[t*nt*nc : (t+1)*nt*nc] {
			ss += v * v
		}
		norms[t] = math.Sqrt(ss)
	}
	if winv != nil && len(winv) == nc*nc {
		un := make([]float64, len(tdata))
		for t := range nT * nt {
			row := tdata[t*nc : (t+1)*nc]
			out := un[t*nc : (t+1)*nc]
			for a, v := range row {
				if v == 0 {
					continue
				}
				for b := range nc {
					out[b] += v * winv[a*nc+b]
				}
			}
		}
		tdata = un
	}
	if gains != nil && len(gains) == nc {
		for k := range tdata {
			tdata[k] *= gains[k%nc]
		}
	}
	units := in.group()
	in.TemplateSamples, in.Channels = nt, nc
	in.Templates = make([]float32, len(units)*nt*nc)
	in.UnitIDs = make([]int32, len(units))
	tm := make([]int32, len(units))
	for r, u := range units {
		in.UnitIDs[r] = u.id
		tm[r] = in.modalTemplate(u)
		if int(tm[r]) >= nT {
			continue
		}
		for k := range nt * nc {
			in.Templates[r*nt*nc+k] = float32(tdata[int(tm[r])*nt*nc+k])
		}
	}
	if scale == nil {
		return
	}
	info := in.templateInfo()
	in.Amplitudes = make([]float32, len(in.SpikeTimes))
	for r, u := range units {
		c := info.main[r]
		for _, s := range u.idx {
			t := int(tm[r])
			if in.SpikeTemplates != nil {
				t = int(in.SpikeTemplates[s])
			}
			if t >= nT {
				continue
			}
			ext := 0.0
			for k := range nt {
				if v := tdata[(t*nt+k)*nc+c]; math.Abs(v) > math.Abs(ext) {
					ext = v
				}
			}
			if norms[t] > 0 {
				in.Amplitudes[s] = float32(scale[s] / norms[t] * ext)
			}
		}
	}
}

// loader reads .npy files of one folder, keeping the first error.
type loader struct {
	dir string
	err error
}

// read returns the file's array; nil without error for a missing
// optional file.
func (l *loader) read(name string, required bool) *export.NPY {
	if l.err != nil {
		return nil
	}
	a, err := export.ReadNPYFile(filepath.Join(l.dir, name))
	if err != nil {
		if !required && errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		l.err = fmt.Errorf("quality: %w", err)
		return nil
	}
	return a
}

func (l *loader) ints(name string, required bool) []int64 {
	a := l.read(name, required)
	if a == nil {
		return nil
	}
	v, err := a.Int64()
	if err != nil {
		l.err = fmt.Errorf("quality: %s: %w", name, err)
	}
	return v
}

func (l *loader) floats(name string, required bool) []float64 {
	v, _ := l.array(name, required)
	return v
}

func (l *loader) array(name string, required bool) ([]float64, []int) {
	a := l.read(name, required)
	if a == nil {
		return nil, nil
	}
	v, err := a.Float64()
	if err != nil {
		l.err = fmt.Errorf("quality: %s: %w", name, err)
	}
	return v, a.Shape
}

func (l *loader) float32s(name string) ([]float32, []int) {
	a := l.read(name, false)
	if a == nil {
		return nil, nil
	}
	if len(a.Shape) != 3 {
		l.err = fmt.Errorf("quality: %s: shape %s, want 3 dimensions", name, a.ShapeString())
		return nil, nil
	}
	v, err := a.Float32()
	if err != nil {
		l.err = fmt.Errorf("quality: %s: %w", name, err)
	}
	return v, a.Shape
}

func toInt32(v []int64) []int32 {
	out := make([]int32, len(v))
	for i, x := range v {
		out[i] = int32(x)
	}
	return out
}

func toFloat32(v []float64) []float32 {
	out := make([]float32, len(v))
	for i, x := range v {
		out[i] = float32(x)
	}
	return out
}

// params are the entries of params.py that ReadSortFolder uses.
type params struct {
	rate     float64
	datPath  string
	dtype    string
	channels int64
	itemSize int64
	offset   int64
	filtered bool
}

// readParams parses the simple "key = literal" lines of Phy's params.py.
func readParams(path string) (params, error) {
	var p params
	f, err := os.Open(path)
	if err != nil {
		return p, fmt.Errorf("quality: %w", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), "=")
		if !ok {
			continue
		}
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		// A literal, a raw literal (r'…') or a list of them.
		unq := strings.Trim(v, "[] ")
		if len(unq) > 1 && unq[0] == 'r' && (unq[1] == '\'' || unq[1] == '"') {
			unq = unq[1:]
		}
		unq = strings.Trim(unq, `'"`)
		switch k {
		case "sample_rate":
			p.rate, err = strconv.ParseFloat(v, 64)
			if err != nil {
				return p, fmt.Errorf("quality: %s: sample_rate %q", path, v)
			}
		case "dat_path":
			if !strings.Contains(unq, ",") {
				p.datPath = unq
			}
		case "hp_filtered":
			p.filtered = v == "True"
		case "n_channels_dat":
			p.channels, _ = strconv.ParseInt(v, 10, 64)
		case "offset":
			p.offset, _ = strconv.ParseInt(v, 10, 64)
		case "dtype":
			p.dtype = unq
			p.itemSize = map[string]int64{"int16": 2, "uint16": 2, "int32": 4, "float32": 4, "float64": 8, "int8": 1, "uint8": 1}[unq]
		}
	}
	if err := sc.Err(); err != nil {
		return p, fmt.Errorf("quality: %s: %w", path, err)
	}
	if !(p.rate > 0) {
		return p, fmt.Errorf("quality: %s: no positive sample_rate", path)
	}
	return p, nil
}

// FolderRecording is what a sort folder's params.py says of the
// recording it sorted.
type FolderRecording struct {
	// Path is dat_path (one file; "" for a list or none), made absolute
	// against the folder.
	Path string
	// Channels, DType and SampleRate are n_channels_dat, dtype and
	// sample_rate.
	Channels   int
	DType      string
	SampleRate float64
	// Filtered is hp_filtered: the file holds preprocessed data (a
	// Kilosort 2.5 temp_wh.dat, whitened too).
	Filtered bool
}

// ReadFolderRecording reads the recording's entries of dir's params.py.
func ReadFolderRecording(dir string) (FolderRecording, error) {
	p, err := readParams(filepath.Join(dir, "params.py"))
	if err != nil {
		return FolderRecording{}, err
	}
	path := p.datPath
	if path != "" && !filepath.IsAbs(path) {
		path = filepath.Join(dir, path)
	}
	return FolderRecording{Path: path, Channels: int(p.channels), DType: p.dtype, SampleRate: p.rate, Filtered: p.filtered}, nil
}

// samples returns the raw file's length in samples, or 0 when unknown.
func (p params) samples(dir string) int64 {
	if p.datPath == "" || p.channels <= 0 || p.itemSize <= 0 {
		return 0
	}
	path := p.datPath
	if !filepath.IsAbs(path) {
		path = filepath.Join(dir, path)
	}
	st, err := os.Stat(path)
	if err != nil {
		return 0
	}
	return (st.Size() - p.offset) / (p.channels * p.itemSize)
}

// noiseLevels returns each channel's SD from the C×C inverse whitening
// matrix winv (row norms), nil when winv is not C×C.
func noiseLevels(winv []float64, C int) []float32 {
	if C == 0 || len(winv) != C*C {
		return nil
	}
	out := make([]float32, C)
	for c := range C {
		var ss float64
		for k := range C {
			ss += winv[c*C+k] * winv[c*C+k]
		}
		out[c] = float32(math.Sqrt(ss))
	}
	return out
}
