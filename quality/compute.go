package quality

import (
	"cmp"
	"dspk/internal/par"
	"errors"
	"fmt"
	"math"
	"slices"
)

// Input is one sort as plain arrays. Spikes need not be in time order.
// Every per-spike slice is either nil or as long as SpikeTimes.
type Input struct {
	// SampleRate is the recording's sample rate in Hz.
	SampleRate float64
	// NumSamples is the recording's length in samples (one segment).
	NumSamples int64
	// SpikeTimes are the spikes' sample indices.
	SpikeTimes []int64
	// SpikeUnits are the spikes' unit ids.
	SpikeUnits []int32
	// UnitIDs lists the units to report, in the Table's order; a unit
	// without spikes gets a row too. Nil means the sorted distinct
	// SpikeUnits.
	UnitIDs []int32

	// Amplitudes are the spikes' amplitudes (SpikeInterface's
	// spike_amplitudes: the signed value on the unit's main channel, in µV
	// for the Bombcell amplitude threshold to mean what it says). Nil
	// leaves the amplitude metrics and sd_ratio NaN.
	Amplitudes []float32

	// Templates are the units' mean waveforms, [len(units)][TemplateSamples]
	// [Channels] in the Table's unit order, unwhitened, in the units of
	// NoiseLevels (µV for the label thresholds). Kilosort's templates.npy
	// is whitened: unwhiten it with whitening_mat_inv.npy first
	// ([ReadSortFolder] does). Nil leaves snr, sd_ratio and the shape
	// metrics NaN and labels without the noise rules.
	Templates []float32
	// TemplateSamples and Channels are the template dimensions.
	TemplateSamples, Channels int
	// ChannelPositions are the channels' (x, y) positions in µm,
	// [Channels][2]; nil leaves exp_decay NaN.
	ChannelPositions []float64

	// PCFeatures are the spikes' principal-component features,
	// [spikes][NPC][NFeat] as Kilosort's pc_features.npy; nil leaves the PC
	// metrics NaN.
	PCFeatures []float32
	// NPC and NFeat are the feature dimensions.
	NPC, NFeat int
	// PCFeatureInd gives each template's NFeat feature channels,
	// [templates][NFeat] as Kilosort's pc_feature_ind.npy.
	PCFeatureInd []int32
	// SpikeTemplates is each spike's row of PCFeatureInd; nil means the
	// spike's unit id. A unit's own feature channels are the row of its
	// most frequent template (the lowest on a tie).
	SpikeTemplates []int32

	// Motion is the probe's displacement in µm (rigid: for blocks, their
	// mean) at MotionTimes (s from the recording's start, increasing), as
	// drift.npy and drift_times.npy hold it; nil leaves motion_presence
	// NaN.
	Motion, MotionTimes []float64
	// SpikeDepths are the spikes' positions along the probe (y, µm) for
	// the drift metrics; nil leaves them NaN.
	SpikeDepths []float32
	// NoiseLevels are the channels' noise standard deviations; nil leaves
	// snr and sd_ratio NaN. SpikeInterface's snr divides by the
	// noise_levels extension (MAD-based by default) and sd_ratio by
	// get_noise_levels(method="std"); one set of levels serves both here.
	NoiseLevels []float32
	// Raw is the recording the sort was made from, as stored, and RawRows
	// each of the Channels' row in it (Kilosort's channel_map.npy); with
	// Templates they give raw_snr, Bombcell's signal-to-noise ratio from
	// raw snippets ([Input.rawSNR]). Nil leaves raw_snr NaN.
	Raw     RawReader
	RawRows []int
	// NoiseSource says what NoiseLevels are ([NoiseMAD],
	// [NoiseWhitening]; "" when the caller set them), for messages.
	NoiseSource string
	// Microvolts says that Templates, Amplitudes and NoiseLevels are in
	// µV (the recording's gains were known); otherwise they are in the
	// recording's units and the µV threshold of amplitude_median compares
	// with those, as SpikeInterface's does for a recording without gains.
	Microvolts bool
}

// Table holds the metrics of every unit: Columns in a fixed order, each
// as long as UnitIDs, and one label per unit.
type Table struct {
	// UnitIDs are the units, one row each.
	UnitIDs []int32
	// Columns are the metrics in the order WriteTSV writes them.
	Columns []Column
	// Labels are the units' automatic labels ("noise", "non_soma", "mua",
	// "good").
	Labels []string
}

// Column is one metric over the units.
type Column struct {
	// Name is SpikeInterface's name of the metric.
	Name string
	// Values are the per-unit values, NaN where undefined.
	Values []float64
	// Integer marks a count, written without a decimal point.
	Integer bool
}

// Column returns the values of the metric name, or nil.
func (t *Table) Column(name string) []float64 {
	for _, c := range t.Columns {
		if c.Name == name {
			return c.Values
		}
	}
	return nil
}

// unit is one unit's spikes in time order.
type unit struct {
	id    int32
	idx   []int   // spike indices into Input, by time
	times []int64 // their sample indices
}

// Compute returns the metrics and labels of every unit of in. Units are
// computed in parallel over all cores; the result does not depend on the
// number of cores.
func Compute(in Input, opt Options) (*Table, error) {
	if err := in.check(); err != nil {
		return nil, err
	}
	units := in.group()
	t := &Table{UnitIDs: make([]int32, len(units))}
	for i, u := range units {
		t.UnitIDs[i] = u.id
	}
	cols := newColumns(len(units))
	tm := in.templateInfo()
	pc := in.pcPrep(units, tm)
	mb := in.motionBins()
	par.Each(len(units), par.Workers(len(units)), func(_, i int) {
		in.unitMetrics(units[i], i, tm, pc, opt, cols)
		cols.set("motion_presence", i, in.motionPresence(units[i].times, mb))
	})
	if err := in.rawSNR(units, tm, cols); err != nil {
		return nil, err
	}
	t.Columns = cols.list
	if opt.SkipNN {
		t.Columns = slices.DeleteFunc(t.Columns, func(c Column) bool { return c.Name == "nn_hit_rate" || c.Name == "nn_miss_rate" })
	}
	lo := opt.Labels
	if in.ChannelPositions == nil {
		// Without positions exp_decay is NaN for every unit: its noise
		// rule would call every unit noise.
		noise := map[string]Range{}
		for k, v := range lo.Noise {
			if k != "exp_decay" {
				noise[k] = v
			}
		}
		lo.Noise = noise
	}
	t.Labels = Label(t, lo, in.Templates != nil)
	return t, nil
}

// check validates the shapes of in.
func (in *Input) check() error {
	n := len(in.SpikeTimes)
	if in.SampleRate <= 0 || math.IsNaN(in.SampleRate) {
		return fmt.Errorf("quality: sample rate %v", in.SampleRate)
	}
	if in.NumSamples <= 0 {
		return fmt.Errorf("quality: %d samples", in.NumSamples)
	}
	if err := in.checkMotion(); err != nil {
		return err
	}
	if len(in.SpikeUnits) != n {
		return fmt.Errorf("quality: %d spike units for %d spikes", len(in.SpikeUnits), n)
	}
	for _, s := range []struct {
		name string
		n    int
	}{{"amplitudes", len(in.Amplitudes)}, {"spike depths", len(in.SpikeDepths)}, {"spike templates", len(in.SpikeTemplates)}} {
		if s.n != 0 && s.n != n {
			return fmt.Errorf("quality: %d %s for %d spikes", s.n, s.name, n)
		}
	}
	nu := len(in.UnitIDs)
	if in.UnitIDs == nil {
		nu = len(distinct(in.SpikeUnits))
	}
	if in.Templates != nil {
		if in.TemplateSamples <= 0 || in.Channels <= 0 || len(in.Templates) != nu*in.TemplateSamples*in.Channels {
			return fmt.Errorf("quality: %d template values for %d units × %d samples × %d channels",
				len(in.Templates), nu, in.TemplateSamples, in.Channels)
		}
	}
	if in.NoiseLevels != nil && len(in.NoiseLevels) != in.Channels {
		return fmt.Errorf("quality: %d noise levels for %d channels", len(in.NoiseLevels), in.Channels)
	}
	if in.ChannelPositions != nil && len(in.ChannelPositions) != 2*in.Channels {
		return fmt.Errorf("quality: %d channel coordinates for %d channels", len(in.ChannelPositions), in.Channels)
	}
	if in.PCFeatures != nil {
		if in.NPC <= 0 || in.NFeat <= 0 || len(in.PCFeatures) != n*in.NPC*in.NFeat {
			return fmt.Errorf("quality: %d PC features for %d spikes × %d PCs × %d channels", len(in.PCFeatures), n, in.NPC, in.NFeat)
		}
		if len(in.PCFeatureInd)%in.NFeat != 0 {
			return errors.New("quality: pc_feature_ind is not a whole number of rows")
		}
		rows := int32(len(in.PCFeatureInd) / in.NFeat)
		tmpl := in.SpikeTemplates
		if tmpl == nil {
			tmpl = in.SpikeUnits
		}
		for _, r := range tmpl {
			if r < 0 || r >= rows {
				return fmt.Errorf("quality: spike template %d outside pc_feature_ind's %d rows", r, rows)
			}
		}
	}
	return nil
}

// distinct returns the sorted distinct values of v.
func distinct(v []int32) []int32 {
	u := slices.Clone(v)
	slices.Sort(u)
	return slices.Compact(u)
}

// group splits the spikes by unit, each unit's in time order (ties in
// input order), units in UnitIDs order.
func (in *Input) group() []unit {
	ids := in.UnitIDs
	if ids == nil {
		ids = distinct(in.SpikeUnits)
	}
	pos := make(map[int32]int, len(ids))
	units := make([]unit, len(ids))
	for i, id := range ids {
		pos[id] = i
		units[i].id = id
	}
	order := in.timeOrder()
	for _, s := range order {
		if i, ok := pos[in.SpikeUnits[s]]; ok {
			units[i].idx = append(units[i].idx, s)
			units[i].times = append(units[i].times, in.SpikeTimes[s])
		}
	}
	return units
}

// timeOrder returns the spike indices sorted by time, ties by input order.
func (in *Input) timeOrder() []int {
	order := make([]int, len(in.SpikeTimes))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(in.SpikeTimes[a], in.SpikeTimes[b]) })
	return order
}
