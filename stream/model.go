package stream

import (
	"cmp"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"

	"dspk/export"
	"dspk/linalg"
	"dspk/match"
	"dspk/motion"
	"dspk/preprocess"
	"dspk/quality"
)

// Model is what a stream takes from the folder of an earlier dspk sort:
// the learned templates and the matching's settings, the whitening, the
// channels, the preprocessing's settings and the unit of each template.
type Model struct {
	// Dir is the sort folder.
	Dir string
	// SampleRate is the recording's rate in Hz; FileChannels the int16
	// channels of a frame (385 for a Neuropixels AP file).
	SampleRate   float64
	FileChannels int
	// ChanMap is the file row of each of the sort's channels; X and Y are
	// their positions (µm).
	ChanMap []int
	X, Y    []float64
	// Whitening is the sort's whitening matrix (whitening_mat.npy).
	Whitening *linalg.Whitening
	// Templates are the learned templates (U.npy, wPCA.npy) the sort's
	// matching used; Params its settings (dspk.json's sort.matching).
	Templates match.Templates
	Params    match.Params
	// UnitOf is each learned template's unit: the unit that most of the
	// sort's spikes of that template ended in (spike_detection_templates.npy
	// against spike_clusters.npy); −1 for a template that kept no spike.
	UnitOf []int32
	// Split lists, for each learned template whose spikes the sort's
	// final clustering divided between units, those units and the mean
	// features of their spikes ([splitUnit]); a spike of such a template
	// goes to the unit of the nearest mean (UnitOf holds the majority).
	Split map[int32][]splitUnit
	// Units is the number of units (rows of templates.npy).
	Units int
	// Norm is each learned template's norm ‖U_u‖: of two copies of one
	// spike on templates of the same unit, the stronger is kept, as the
	// sort's coincident rule keeps it.
	Norm []float64
	// HighpassCutoff is the high-pass corner (Hz); InvertSign and CAR the
	// preprocessing's do_CAR and invert_sign.
	HighpassCutoff  float64
	InvertSign, CAR bool
	// DuplicateBins is the sort's duplicate_spike_ms in samples: two
	// spikes of one unit within twice it are one spike (the sort's
	// coincident lags), and the coincident rule ([coincidence]) looks for
	// copies within twice it, each ± half of it.
	DuplicateBins int64
	// PositionLimit is the sort's position_limit (µm): the coincident rule
	// pairs templates whose best channels are within twice it.
	PositionLimit float64
	// DoubleCount is the sort's double-count distance (µm; 0 for a sort
	// without the rule): of two spikes of different units within
	// DuplicateBins whose templates peak this close, the weaker
	// template's goes (docs/curate.md §12).
	DoubleCount float64
	// Motion is the sort's motion estimate (drift.npy, drift_depths.npy)
	// and Rule the correction it applied (dspk.json's
	// drift_correction_used); nil for a sort without correction. Window w
	// of the estimate covers samples [w·BatchSize, (w+1)·BatchSize); a
	// stream longer than the sort holds the last window's shifts.
	Motion    *motion.Estimate
	Rule      motion.Rule
	SigInterp float64
	BatchSize int64
}

// Load reads the Model of the sort folder dir. Errors name the file.
func Load(dir string) (*Model, error) {
	fr, err := quality.ReadFolderRecording(dir)
	if err != nil {
		return nil, err
	}
	m := &Model{Dir: dir, SampleRate: fr.SampleRate, FileChannels: fr.Channels}
	if fr.DType != "" && fr.DType != "int16" {
		return nil, fmt.Errorf("%s: params.py: dtype %s; stream reads int16 frames", dir, fr.DType)
	}
	if !(m.SampleRate > 0) || m.FileChannels < 1 {
		return nil, fmt.Errorf("%s: params.py: rate %v Hz, %d channels", dir, m.SampleRate, m.FileChannels)
	}
	rd := reader{dir: dir}
	cm := rd.ints("channel_map.npy")
	pos, posShape := rd.floats("channel_positions.npy")
	wm, wShape := rd.floats("whitening_mat.npy")
	u, uShape := rd.floats("U.npy")
	wpca, pShape := rd.floats("wPCA.npy")
	det := rd.ints("spike_detection_templates.npy")
	clu := rd.ints("spike_clusters.npy")
	_, tShape := rd.floats("templates.npy")
	if rd.err != nil {
		return nil, rd.err
	}
	C := len(cm)
	switch {
	case len(posShape) != 2 || posShape[0] != C || posShape[1] != 2:
		return nil, fmt.Errorf("%s: channel_positions.npy is %v for %d channels", dir, posShape, C)
	case len(wShape) != 2 || wShape[0] != C || wShape[1] != C:
		return nil, fmt.Errorf("%s: whitening_mat.npy is %v for %d channels", dir, wShape, C)
	case len(uShape) != 3 || uShape[1] != C:
		return nil, fmt.Errorf("%s: U.npy is %v, not (templates, %d channels, PCs)", dir, uShape, C)
	case len(pShape) != 2 || pShape[0] != uShape[2]:
		return nil, fmt.Errorf("%s: wPCA.npy is %v for %d PCs", dir, pShape, uShape[2])
	case len(det) != len(clu):
		return nil, fmt.Errorf("%s: %d detection templates for %d spike clusters", dir, len(det), len(clu))
	case len(tShape) != 3:
		return nil, fmt.Errorf("%s: templates.npy is %v", dir, tShape)
	}
	m.ChanMap = make([]int, C)
	m.X, m.Y = make([]float64, C), make([]float64, C)
	for i, r := range cm {
		if r < 0 || int(r) >= m.FileChannels {
			return nil, fmt.Errorf("%s: channel_map.npy: entry %d is row %d of %d-channel frames", dir, i, r, m.FileChannels)
		}
		m.ChanMap[i] = int(r)
		m.X[i], m.Y[i] = pos[2*i], pos[2*i+1]
	}
	m.Whitening = linalg.NewWhiteningFromDense(wm, C)
	N, P, nt := uShape[0], uShape[2], pShape[1]
	if err := m.readSettings(nt); err != nil {
		return nil, err
	}
	b, a := preprocess.ButterHighpass(3, m.HighpassCutoff, m.SampleRate)
	cu, cw, basisMap := causalTemplates(toFloat32(u), toFloat32(wpca), N, C, P, nt, b, a)
	m.Templates = match.Templates{N: N, C: C, P: P, U: cu, WPCA: cw}
	m.Units = tShape[0]
	counts := templateUnits(det, clu, N)
	m.UnitOf = majority(counts)
	if err := m.readSplits(det, clu, counts, basisMap); err != nil {
		return nil, err
	}
	m.Norm = make([]float64, N)
	for k := range N {
		s := 0.0
		for _, v := range cu[k*C*P : (k+1)*C*P] {
			s += float64(v) * float64(v)
		}
		m.Norm[k] = math.Sqrt(s)
	}
	return m, nil
}

// readSettings takes the preprocessing and matching settings from
// dspk.json.
func (m *Model) readSettings(nt int) error {
	b, err := os.ReadFile(filepath.Join(m.Dir, "dspk.json"))
	if err != nil {
		return fmt.Errorf("stream: %w (a dspk sort folder has it)", err)
	}
	var prov struct {
		Config struct {
			Highpass  float64 `json:"highpass_cutoff"`
			CAR       bool    `json:"do_CAR"`
			Invert    bool    `json:"invert_sign"`
			SigInterp float64 `json:"sig_interp"`
			BatchSize int64   `json:"batch_size"`
		} `json:"config"`
		Sort struct {
			Matching   match.Params `json:"matching"`
			Correction string       `json:"drift_correction_used"`
			Curation   struct {
				DuplicateSpikeMs float64 `json:"DuplicateSpikeMs"`
				PositionLimit    float64 `json:"PositionLimit"`
				DoubleCount      float64 `json:"DoubleCount"`
			} `json:"curation"`
		} `json:"sort"`
	}
	if err := json.Unmarshal(b, &prov); err != nil {
		return fmt.Errorf("%s: %w", filepath.Join(m.Dir, "dspk.json"), err)
	}
	mt := prov.Sort.Matching
	if mt.NT != nt || mt.ThLearned <= 0 {
		return fmt.Errorf("%s: no sort's matching settings for %d-sample templates (is it a dspk sort folder?)", filepath.Join(m.Dir, "dspk.json"), nt)
	}
	m.Params = mt
	m.Params.NearestChans = min(mt.NearestChans, len(m.ChanMap))
	if err := m.Params.Validate(); err != nil {
		return fmt.Errorf("%s: %w", filepath.Join(m.Dir, "dspk.json"), err)
	}
	m.HighpassCutoff, m.CAR, m.InvertSign = prov.Config.Highpass, prov.Config.CAR, prov.Config.Invert
	if !(m.HighpassCutoff > 0 && m.HighpassCutoff < m.SampleRate/2) {
		return fmt.Errorf("%s: high-pass corner %v Hz at %v Hz", filepath.Join(m.Dir, "dspk.json"), m.HighpassCutoff, m.SampleRate)
	}
	if err := m.readMotion(prov.Sort.Correction, prov.Config.SigInterp, prov.Config.BatchSize); err != nil {
		return err
	}
	cu := prov.Sort.Curation
	m.DuplicateBins = int64(math.Floor(cu.DuplicateSpikeMs * m.SampleRate / 1000))
	m.PositionLimit, m.DoubleCount = cu.PositionLimit, cu.DoubleCount
	return nil
}

// readMotion reads the sort's motion estimate when it corrected with rule
// ("" for none).
func (m *Model) readMotion(rule string, sig float64, batch int64) error {
	switch rule {
	case "":
		return nil
	case motion.CorrectionKilosort.String():
		m.Rule = motion.CorrectionKilosort
	case motion.CorrectionSmooth.String():
		m.Rule = motion.CorrectionSmooth
	default:
		return fmt.Errorf("%s: dspk.json: correction rule %q", m.Dir, rule)
	}
	rd := reader{dir: m.Dir}
	d, dShape := rd.floats("drift.npy")
	y, _ := rd.floats("drift_depths.npy")
	if rd.err != nil {
		return fmt.Errorf("stream: the sort corrected motion (%s) but: %w", rule, rd.err)
	}
	if len(dShape) != 2 || dShape[1] != len(y) || dShape[0] < 1 || batch < 1 || !(sig > 0) {
		return fmt.Errorf("%s: drift.npy is %v for %d depths (batch %d, sig_interp %v)", m.Dir, dShape, len(y), batch, sig)
	}
	m.Motion = &motion.Estimate{Windows: dShape[0], Blocks: dShape[1], Dshift: d, Yblk: y}
	m.SigInterp, m.BatchSize = sig, batch
	return nil
}

// splitShare is the least share of a learned template's spikes a unit
// must hold for the stream to tell it apart from the template's other
// units ([Model.Split]); a template whose majority unit holds more than
// 1 − splitShare is not split.
const splitShare = 0.1

// splitUnit is one unit of a split template: its channels (pc_feature_ind)
// and the mean of its spikes' features on them, [NC][P], on the stream's
// basis.
type splitUnit struct {
	unit  int32
	chans []int32
	mean  []float64
}

// readSplits finds the templates the sort's final clustering divided and
// the mean features (pc_features.npy, on each unit's pc_feature_ind
// channels) of each part, mapped to the stream's basis by basisMap.
func (m *Model) readSplits(det, clu []int64, counts []map[int64]int, basisMap [][]float64) error {
	want := map[[2]int64]bool{} // (template, unit) pairs whose mean features are needed
	for k, c := range counts {
		total := 0
		for _, n := range c {
			total += n
		}
		if c == nil || float64(c[int64(m.UnitOf[k])]) > (1-splitShare)*float64(total) {
			continue
		}
		for u, n := range c {
			if float64(n) >= splitShare*float64(total) {
				want[[2]int64{int64(k), u}] = true
			}
		}
	}
	if len(want) == 0 {
		return nil
	}
	rd := reader{dir: m.Dir}
	pcf, shape := rd.float32s("pc_features.npy") // 240 bytes a spike: float32, and freed below
	ind, iShape := rd.floats("pc_feature_ind.npy")
	if rd.err != nil {
		return rd.err
	}
	// A ten-minute sort's features are some 400 MB that the stream does
	// not keep: give them back before it starts, not at the collector's
	// leisure.
	defer debug.FreeOSMemory()
	if len(shape) != 3 || shape[0] != len(det) || len(iShape) != 2 || iShape[1] != shape[2] || shape[1] != len(basisMap) {
		return fmt.Errorf("%s: pc_features.npy %v, pc_feature_ind.npy %v for %d spikes", m.Dir, shape, iShape, len(det))
	}
	P, NC := shape[1], shape[2]
	m.Split = map[int32][]splitUnit{}
	sums := map[[2]int64][]float64{}
	ns := map[[2]int64]int{}
	for s, k := range det {
		key := [2]int64{k, clu[s]}
		if !want[key] {
			continue
		}
		if sums[key] == nil {
			sums[key] = make([]float64, NC*P)
		}
		for p := range P {
			for r := range NC {
				sums[key][r*P+p] += float64(pcf[(s*P+p)*NC+r])
			}
		}
		ns[key]++
	}
	for key, sum := range sums {
		k, u := int32(key[0]), key[1]
		if int(u) >= iShape[0] {
			return fmt.Errorf("%s: unit %d has no row of pc_feature_ind.npy", m.Dir, u)
		}
		su := splitUnit{unit: int32(u), chans: make([]int32, NC), mean: make([]float64, NC*P)}
		for r := range NC {
			su.chans[r] = int32(ind[int(u)*NC+r])
			for q := range P { // the sort's basis to the stream's: f·A
				v := 0.0
				for p := range P {
					v += sum[r*P+p] * basisMap[p][q]
				}
				su.mean[r*P+q] = v / float64(ns[key])
			}
		}
		m.Split[k] = append(m.Split[k], su)
	}
	for k := range m.Split {
		slices.SortFunc(m.Split[k], func(a, b splitUnit) int { return cmp.Compare(a.unit, b.unit) })
	}
	return nil
}

// unitOf returns the unit of a spike of template k whose features f are
// on the channels chans ([NC][P]): the majority unit, or for a split
// template the unit whose mean features are nearest (squared distance
// per channel) on the channels both have.
func (m *Model) unitOf(k int32, f []float32, chans []int32, P int) int32 {
	parts := m.Split[k]
	if len(parts) == 0 {
		return m.UnitOf[k]
	}
	best, bestD := m.UnitOf[k], math.Inf(1)
	for _, su := range parts {
		d, shared := 0.0, 0
		for r, c := range su.chans {
			j := slices.Index(chans, c)
			if j < 0 {
				continue
			}
			shared++
			for p := range P {
				x := float64(f[j*P+p]) - su.mean[r*P+p]
				d += x * x
			}
		}
		if shared > 0 && d/float64(shared) < bestD { // per channel shared: units may share more or fewer
			best, bestD = su.unit, d/float64(shared)
		}
	}
	return best
}

// templateUnits counts, for each of n templates, its spikes in each
// cluster (det: each spike's template, clu: its cluster).
func templateUnits(det, clu []int64, n int) []map[int64]int {
	counts := make([]map[int64]int, n)
	for s, k := range det {
		if k < 0 || int(k) >= n {
			continue
		}
		if counts[k] == nil {
			counts[k] = map[int64]int{}
		}
		counts[k][clu[s]]++
	}
	return counts
}

// majority returns, for each template of counts, the cluster most of
// its spikes carry (the lowest on a tie; −1 without spikes).
func majority(counts []map[int64]int) []int32 {
	out := make([]int32, len(counts))
	for k, c := range counts {
		out[k] = -1
		best := 0
		for u, v := range c {
			if v > best || (v == best && int64(out[k]) > u) {
				best, out[k] = v, int32(u)
			}
		}
	}
	return out
}

// reader loads a folder's arrays, keeping the first error.
type reader struct {
	dir string
	err error
}

func (r *reader) load(name string) *export.NPY {
	if r.err != nil {
		return nil
	}
	a, err := export.ReadNPYFile(filepath.Join(r.dir, name))
	if err != nil {
		r.err = err
	}
	return a
}

func (r *reader) ints(name string) []int64 {
	a := r.load(name)
	if a == nil {
		return nil
	}
	v, err := a.Int64()
	if err != nil {
		r.err = fmt.Errorf("%s: %w", filepath.Join(r.dir, name), err)
	}
	return v
}

func (r *reader) float32s(name string) ([]float32, []int) {
	a := r.load(name)
	if a == nil {
		return nil, nil
	}
	v, err := a.Float32()
	if err != nil {
		r.err = fmt.Errorf("%s: %w", filepath.Join(r.dir, name), err)
	}
	return v, a.Shape
}

func (r *reader) floats(name string) ([]float64, []int) {
	a := r.load(name)
	if a == nil {
		return nil, nil
	}
	v, err := a.Float64()
	if err != nil {
		r.err = fmt.Errorf("%s: %w", filepath.Join(r.dir, name), err)
	}
	return v, a.Shape
}

func toFloat32(v []float64) []float32 {
	out := make([]float32, len(v))
	for i, x := range v {
		out[i] = float32(x)
	}
	return out
}
