package report

import (
	"bufio"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"dspk/internal/par"
	"dspk/quality"
)

// File is the report's default name in the sort folder.
const File = "report.html"

// Options are the report's settings.
type Options struct {
	// MaxPoints is the most spikes per unit in the amplitude and depth
	// plots (every k-th spike in time beyond it).
	MaxPoints int
	// Channels is the number of channels of a unit's waveform plot: those
	// of largest peak-to-peak amplitude.
	Channels int
	// BinMs and WindowMs are the autocorrelogram's and the ISI
	// histogram's bin and span in ms.
	BinMs, WindowMs float64
}

// DefaultOptions returns 2000 points, 12 channels and 0.5-ms bins over
// 50 ms.
func DefaultOptions() Options {
	return Options{MaxPoints: 2000, Channels: 12, BinMs: 0.5, WindowMs: 50}
}

// num is a number of the page: 4 significant digits, null for NaN or
// infinity.
type num float64

// MarshalJSON writes n with 4 significant digits, or null.
func (n num) MarshalJSON() ([]byte, error) {
	v := float64(n)
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return []byte("null"), nil
	}
	return strconv.AppendFloat(nil, v, 'g', 4, 64), nil
}

// exact is a number of the page written in full (a range the page maps
// codes back with), null for NaN or infinity.
type exact float64

// MarshalJSON writes e exactly, or null.
func (e exact) MarshalJSON() ([]byte, error) {
	v := float64(e)
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return []byte("null"), nil
	}
	return strconv.AppendFloat(nil, v, 'g', -1, 64), nil
}

// page is everything the page shows, embedded as JSON.
type page struct {
	Summary  summary    `json:"summary"`
	Metrics  []string   `json:"metrics"`  // names of the per-unit numbers, in units[].m order
	Integer  []bool     `json:"integer"`  // which of them are counts
	Labels   []string   `json:"labels"`   // the label values present, Bombcell's order first
	ChanPos  []num      `json:"chanpos"`  // x, y of every channel, µm
	Duration exact      `json:"duration"` // recording seconds
	BinMs    num        `json:"binms"`
	Units    []unitData `json:"units"`
}

// unitData is one unit's row and figures.
type unitData struct {
	ID    int32  `json:"id"`
	BC    string `json:"bc"`              // Bombcell-style label
	KS    string `json:"ks,omitempty"`    // Kilosort's label
	Group string `json:"group,omitempty"` // Phy's curation group
	M     []num  `json:"m"`               // the metrics, in page.Metrics order
	// Wave is the template on the Channels best channels: their indices,
	// then the samples as integers times WaveScale, channel after channel.
	WaveCh    []int   `json:"wch"`
	Wave      []int32 `json:"w"`
	WaveScale exact   `json:"ws"`
	ACG       []int32 `json:"acg"` // counts per bin of lags in (0, window]
	ISI       []int32 `json:"isi"` // counts per bin of intervals in [0, window)
	// Scatter holds the kept spikes' time, amplitude and depth as three
	// runs of uint16 (little-endian, base64), each over its [lo, hi].
	Scatter  string   `json:"sc"`
	NPoints  int      `json:"np"`
	AmpRange [2]exact `json:"ar"`
	DepRange [2]exact `json:"dr"`
}

// build gathers the page of the sort folder dir.
func build(dir string, opt Options) (*page, error) {
	in, err := quality.ReadSortFolder(dir)
	if err != nil {
		return nil, err
	}
	t, note, err := metricsOf(dir, in)
	if err != nil {
		return nil, err
	}
	p := &page{Duration: exact(float64(in.NumSamples) / in.SampleRate), BinMs: num(opt.BinMs)}
	p.Summary = readSummary(dir, in, t)
	if note != "" {
		p.Summary.Notes = append(p.Summary.Notes, note)
	}
	for _, v := range in.ChannelPositions {
		p.ChanPos = append(p.ChanPos, num(v))
	}
	p.Metrics = []string{"depth", "ch"}
	p.Integer = []bool{false, true}
	for _, c := range t.Columns {
		p.Metrics = append(p.Metrics, c.Name)
		p.Integer = append(p.Integer, c.Integer)
	}
	ks := readLabelTable(filepath.Join(dir, "cluster_KSLabel.tsv"))
	group := readLabelTable(filepath.Join(dir, "cluster_group.tsv"))
	spikes := spikesByUnit(in, t.UnitIDs)
	tmplRow := map[int32]int{}
	for r, id := range in.UnitIDs {
		tmplRow[id] = r
	}
	p.Units = make([]unitData, len(t.UnitIDs))
	par.Each(len(t.UnitIDs), par.Workers(len(t.UnitIDs)), func(_, i int) {
		id := t.UnitIDs[i]
		u := &p.Units[i]
		u.ID, u.KS, u.Group = id, ks[id], group[id]
		if t.Labels != nil {
			u.BC = t.Labels[i]
		}
		depth, ch := math.NaN(), math.NaN()
		if r, ok := tmplRow[id]; ok && in.Templates != nil {
			ch = float64(u.setWave(in, r, opt.Channels))
		}
		times := make([]int64, len(spikes[i]))
		for k, s := range spikes[i] {
			times[k] = in.SpikeTimes[s]
		}
		binS := int64(math.Max(1, math.Round(opt.BinMs*1e-3*in.SampleRate)))
		nb := int(math.Round(opt.WindowMs / opt.BinMs))
		u.ACG, u.ISI = correlograms(times, binS, nb)
		if in.SpikeDepths != nil && len(spikes[i]) > 0 {
			d := make([]float64, len(spikes[i]))
			for k, s := range spikes[i] {
				d[k] = float64(in.SpikeDepths[s])
			}
			depth = median(d)
		}
		u.setScatter(in, spikes[i], opt.MaxPoints, float64(p.Duration))
		u.M = append(u.M, num(depth), num(ch))
		for _, c := range t.Columns {
			u.M = append(u.M, num(c.Values[i]))
		}
	})
	present := map[string]bool{}
	for _, u := range p.Units {
		present[u.BC] = true
	}
	for _, l := range []string{"good", "mua", "non_soma", "noise"} {
		if present[l] {
			p.Labels = append(p.Labels, l)
			delete(present, l)
		}
	}
	for _, l := range slices.Sorted(mapKeys(present)) {
		p.Labels = append(p.Labels, l)
	}
	return p, nil
}

func mapKeys(m map[string]bool) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// metricsOf returns the folder's metrics: its quality_metrics.tsv when
// that holds exactly the folder's units, else computed here (without the
// nearest-neighbour metrics, as dspk sort) with a note saying so.
func metricsOf(dir string, in *quality.Input) (*quality.Table, string, error) {
	units := in.UnitIDs
	if units == nil {
		units = slices.Compact(slices.Sorted(slices.Values(in.SpikeUnits)))
	}
	path := filepath.Join(dir, quality.WideFile)
	t, err := readWide(path)
	switch {
	case err == nil && slices.Equal(t.UnitIDs, units):
		return t, "", nil
	case err != nil && !errors.Is(err, fs.ErrNotExist):
		return nil, "", err
	}
	why := quality.WideFile + " is absent"
	if err == nil {
		why = quality.WideFile + " is for other units (curated since?)"
	}
	opt := quality.DefaultOptions()
	opt.SkipNN = true
	t, err = quality.Compute(*in, opt)
	if err != nil {
		return nil, "", fmt.Errorf("%s: %w", dir, err)
	}
	return t, "metrics computed for this page: " + why + "; dspk metrics writes them into the folder", nil
}

// readWide reads quality.WideFile: the unit id, the metrics, then the
// label column.
func readWide(path string) (*quality.Table, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<16), 1<<22)
	if !sc.Scan() {
		return nil, fmt.Errorf("%s: empty", path)
	}
	head := strings.Split(sc.Text(), "\t")
	if head[0] != quality.WideIDColumn {
		return nil, fmt.Errorf("%s:1: first column %q, want %s", path, head[0], quality.WideIDColumn)
	}
	t := &quality.Table{}
	label := -1
	for k, h := range head[1:] {
		if h == quality.LabelColumn {
			label = k + 1
			continue
		}
		t.Columns = append(t.Columns, quality.Column{Name: h, Integer: isCount(h)})
	}
	if label >= 0 {
		t.Labels = []string{}
	}
	for line := 2; sc.Scan(); line++ {
		f := strings.Split(sc.Text(), "\t")
		if len(f) != len(head) {
			return nil, fmt.Errorf("%s:%d: %d fields, want %d", path, line, len(f), len(head))
		}
		id, err := strconv.ParseInt(f[0], 10, 32)
		if err != nil {
			return nil, fmt.Errorf("%s:%d: unit id %q", path, line, f[0])
		}
		t.UnitIDs = append(t.UnitIDs, int32(id))
		c := 0
		for k, s := range f[1:] {
			if k+1 == label {
				t.Labels = append(t.Labels, s)
				continue
			}
			v, err := strconv.ParseFloat(s, 64)
			if err != nil {
				return nil, fmt.Errorf("%s:%d: %s %q is not a number", path, line, head[k+1], s)
			}
			t.Columns[c].Values = append(t.Columns[c].Values, v)
			c++
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return t, nil
}

// isCount reports whether the metric name is a count.
func isCount(name string) bool {
	switch name {
	case "num_spikes", "isi_violations_count", "rp_violations", "num_positive_peaks", "num_negative_peaks":
		return true
	}
	return false
}

// readLabelTable reads a two-column cluster table (cluster_KSLabel.tsv,
// cluster_group.tsv) as id → text; a missing or unreadable file gives
// none (the page shows no such column).
func readLabelTable(path string) map[int32]string {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	out := map[int32]string{}
	for i, line := range strings.Split(strings.TrimRight(string(b), "\r\n"), "\n") {
		id, v, ok := strings.Cut(strings.TrimRight(line, "\r"), "\t")
		n, err := strconv.ParseInt(id, 10, 32)
		if i == 0 || !ok || err != nil {
			continue
		}
		out[int32(n)] = strings.TrimSpace(v)
	}
	return out
}

// spikesByUnit returns each unit's spike indices in time order.
func spikesByUnit(in *quality.Input, ids []int32) [][]int {
	row := make(map[int32]int, len(ids))
	for r, id := range ids {
		row[id] = r
	}
	out := make([][]int, len(ids))
	for s, u := range in.SpikeUnits {
		if r, ok := row[u]; ok {
			out[r] = append(out[r], s)
		}
	}
	for _, sp := range out {
		if !slices.IsSortedFunc(sp, func(a, b int) int { return int(in.SpikeTimes[a] - in.SpikeTimes[b]) }) {
			slices.SortStableFunc(sp, func(a, b int) int {
				return cmpInt64(in.SpikeTimes[a], in.SpikeTimes[b])
			})
		}
	}
	return out
}

func cmpInt64(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// setWave stores template row r on the k channels of largest
// peak-to-peak amplitude, ordered by channel, and returns the main
// channel (the largest |value|).
func (u *unitData) setWave(in *quality.Input, r, k int) int {
	nt, C := in.TemplateSamples, in.Channels
	w := in.Templates[r*nt*C : (r+1)*nt*C]
	ptp := make([]float64, C)
	main, big := 0, -1.0
	for c := range C {
		lo, hi := math.Inf(1), math.Inf(-1)
		for s := range nt {
			v := float64(w[s*C+c])
			lo, hi = min(lo, v), max(hi, v)
			if math.Abs(v) > big {
				main, big = c, math.Abs(v)
			}
		}
		ptp[c] = hi - lo
	}
	chans := make([]int, C)
	for c := range chans {
		chans[c] = c
	}
	slices.SortStableFunc(chans, func(a, b int) int {
		switch {
		case ptp[a] > ptp[b]:
			return -1
		case ptp[a] < ptp[b]:
			return 1
		}
		return 0
	})
	chans = chans[:min(k, C)]
	slices.Sort(chans)
	scale := big / 1000
	if scale == 0 {
		scale = 1
	}
	u.WaveCh, u.WaveScale = chans, exact(scale)
	u.Wave = make([]int32, 0, len(chans)*nt)
	for _, c := range chans {
		for s := range nt {
			u.Wave = append(u.Wave, int32(math.Round(float64(w[s*C+c])/scale)))
		}
	}
	return main
}

// correlograms returns the autocorrelogram of the sorted spike times t
// (counts of the lags between two spikes in (0, nb·bin], one-sided; a
// lag of 0 counts in the first bin) and the histogram of the intervals
// between successive spikes in [0, nb·bin), in bins of bin samples.
func correlograms(t []int64, bin int64, nb int) (acg, isi []int32) {
	acg, isi = make([]int32, nb), make([]int32, nb)
	win := bin * int64(nb)
	for i := range t {
		for j := i + 1; j < len(t); j++ {
			d := t[j] - t[i]
			if d > win {
				break
			}
			b := max(0, (d-1)/bin)
			if d == 0 {
				b = 0
			}
			acg[b]++
		}
		if i > 0 {
			if d := t[i] - t[i-1]; d < win {
				isi[d/bin]++
			}
		}
	}
	return acg, isi
}

// setScatter keeps every k-th of the unit's spikes (at most maxPoints)
// and packs their times (over [0, dur] s), amplitudes and depths (over
// their ranges) as uint16.
func (u *unitData) setScatter(in *quality.Input, spikes []int, maxPoints int, dur float64) {
	step := max(1, (len(spikes)+maxPoints-1)/maxPoints)
	var keep []int
	for k := 0; k < len(spikes); k += step {
		keep = append(keep, spikes[k])
	}
	m := len(keep)
	u.NPoints = m
	if m == 0 {
		return
	}
	buf := make([]byte, 6*m)
	quant := func(v, lo, hi float64) uint16 {
		if !(hi > lo) || math.IsNaN(v) {
			return 0
		}
		return uint16(math.Round(math.Max(0, math.Min(1, (v-lo)/(hi-lo))) * 65535))
	}
	rangeOf := func(get func(s int) float64) (lo, hi float64) {
		lo, hi = math.Inf(1), math.Inf(-1)
		for _, s := range keep {
			if v := get(s); !math.IsNaN(v) {
				lo, hi = min(lo, v), max(hi, v)
			}
		}
		if lo > hi {
			return 0, 0
		}
		return lo, hi
	}
	amp := func(s int) float64 {
		if in.Amplitudes == nil {
			return math.NaN()
		}
		return float64(in.Amplitudes[s])
	}
	dep := func(s int) float64 {
		if in.SpikeDepths == nil {
			return math.NaN()
		}
		return float64(in.SpikeDepths[s])
	}
	alo, ahi := rangeOf(amp)
	dlo, dhi := rangeOf(dep)
	u.AmpRange, u.DepRange = [2]exact{exact(alo), exact(ahi)}, [2]exact{exact(dlo), exact(dhi)}
	if in.Amplitudes == nil {
		u.AmpRange = [2]exact{exact(math.NaN()), exact(math.NaN())}
	}
	if in.SpikeDepths == nil {
		u.DepRange = [2]exact{exact(math.NaN()), exact(math.NaN())}
	}
	for k, s := range keep {
		binary.LittleEndian.PutUint16(buf[2*k:], quant(float64(in.SpikeTimes[s])/in.SampleRate, 0, dur))
		binary.LittleEndian.PutUint16(buf[2*(m+k):], quant(amp(s), alo, ahi))
		binary.LittleEndian.PutUint16(buf[2*(2*m+k):], quant(dep(s), dlo, dhi))
	}
	u.Scatter = base64.StdEncoding.EncodeToString(buf)
}

// median returns the median of v (v is reordered).
func median(v []float64) float64 {
	if len(v) == 0 {
		return math.NaN()
	}
	slices.Sort(v)
	n := len(v)
	if n%2 == 1 {
		return v[n/2]
	}
	return (v[n/2-1] + v[n/2]) / 2
}

// jsonOf encodes the page for a <script> element: json.Marshal escapes
// <, > and &, so the text cannot close the element.
func jsonOf(p *page) ([]byte, error) {
	return json.Marshal(p)
}
