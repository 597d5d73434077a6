package phy

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"dspk/cluster"
	"dspk/detect"
	"dspk/export"
	"dspk/linalg"
	"dspk/match"
	"dspk/motion"
	"dspk/pipeline"
)

// The formats of the folders of a sort split in time: the global step's
// (sortGlobalFile and its arrays) and a shard's (sortShardFile and its
// spikes).
const (
	sortGlobalFormat = "dspk-sort-global/1"
	sortShardFormat  = "dspk-sort-shard/1"
	sortGlobalFile   = "sort_global.json"
	sortShardFile    = "sort_shard.json"
)

// sortGlobalInfo is sortGlobalFile: what of [pipeline.SortGlobal] is not
// in the arrays.
type sortGlobalInfo struct {
	Format          string               `json:"format"`
	Windows         int                  `json:"windows"`
	Channels        int                  `json:"channels"`
	UniversalSource string               `json:"universal_templates"`
	Clips           int                  `json:"template_clips"`
	Motion          bool                 `json:"motion"`
	Correction      string               `json:"correction"`
	Learned         int                  `json:"learned_templates"`
	Detected        int                  `json:"detected"`
	Work            detect.Stats         `json:"work"`
	Clusters0       int                  `json:"clusters_first"`
	Groups0         []cluster.Group      `json:"groups_first"`
	Stages          []pipeline.StageTime `json:"stages"`
	Warnings        []string             `json:"warnings"`
}

// sortShardInfo is sortShardFile.
type sortShardInfo struct {
	Format  string  `json:"format"`
	Windows [2]int  `json:"windows"`
	Total   int     `json:"total_windows"`
	Spikes  int     `json:"spikes"`
	NC      int     `json:"nc"`
	P       int     `json:"p"`
	Seconds float64 `json:"seconds"`
}

// npyFile is one array of a folder.
type npyFile struct {
	name  string
	shape []int
	data  any
}

// writeNPYs writes the arrays into dir.
func writeNPYs(dir string, files []npyFile) error {
	for _, f := range files {
		if err := export.WriteNPYFile(filepath.Join(dir, f.name), f.shape, f.data); err != nil {
			return err
		}
	}
	return nil
}

// SaveSortGlobal writes g, the global step of a sort split in time of a
// schedule of windows windows, into dir: the whitening operator
// (whitening_index.npy, whitening_value.npy), the universal templates
// (wTEMP.npy, wPCA.npy), the learned templates (U.npy, float32
// [N, C, P]), with motion the estimate (dshift.npy, float64
// [windows, blocks]; yblk.npy; motion_spikes.npy, int64 [windows]) and
// sortGlobalFile with the rest.
func SaveSortGlobal(dir string, g *pipeline.SortGlobal, windows int) error {
	w, tm, u := g.Whitening, g.Universal, g.Learned
	files := []npyFile{
		{"whitening_index.npy", []int{w.C, w.K}, w.Index},
		{"whitening_value.npy", []int{w.C, w.K}, w.Value},
		{"wTEMP.npy", []int{tm.K, tm.NT}, tm.WTEMP},
		{"wPCA.npy", []int{tm.P, tm.NT}, tm.WPCA},
		{"U.npy", []int{u.N, u.C, u.P}, u.U},
	}
	if m := g.Motion; m != nil {
		sp := make([]int64, len(m.Spikes))
		for i, v := range m.Spikes {
			sp[i] = int64(v)
		}
		files = append(files, npyFile{"dshift.npy", []int{m.Windows, m.Blocks}, m.Dshift},
			npyFile{"yblk.npy", []int{len(m.Yblk)}, m.Yblk}, npyFile{"motion_spikes.npy", []int{len(sp)}, sp})
	}
	if err := writeNPYs(dir, files); err != nil {
		return err
	}
	return export.WriteJSON(filepath.Join(dir, sortGlobalFile), sortGlobalInfo{Format: sortGlobalFormat, Windows: windows,
		Channels: w.C, UniversalSource: g.UniversalSource, Clips: g.Clips, Motion: g.Motion != nil, Correction: g.Correction,
		Learned: u.N, Detected: g.Detected, Work: g.Work, Clusters0: g.Clusters0, Groups0: g.Groups0, Stages: g.Stages,
		Warnings: g.Warnings})
}

// readNPYOf reads the array dir/name whole and checks its dtype and
// shape (-1 in shape takes any length).
func readNPYOf(dir, name, descr string, shape ...int) (*export.NPY, error) {
	path := filepath.Join(dir, name)
	a, err := export.ReadNPYFile(path)
	if err != nil {
		return nil, fmt.Errorf("phy: %w", err)
	}
	ok := a.Descr == descr && !a.Fortran && len(a.Shape) == len(shape)
	for i := 0; ok && i < len(shape); i++ {
		ok = shape[i] < 0 || a.Shape[i] == shape[i]
	}
	if !ok {
		return nil, fmt.Errorf("phy: %s: %s %s, want %s of shape %v (-1: any)", path, a.Descr, a.ShapeString(), descr, shape)
	}
	return a, nil
}

// npyInt32 returns a's elements as int32.
func npyInt32(a *export.NPY) ([]int32, error) {
	v, err := a.Int64()
	if err != nil {
		return nil, err
	}
	out := make([]int32, len(v))
	for i, x := range v {
		out[i] = int32(x)
	}
	return out, nil
}

// readJSONFile reads dir/name into v and checks its format field.
func readJSONFile(dir, name, format string, v any, got func() string) error {
	path := filepath.Join(dir, name)
	b, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("phy: %w", err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("phy: %s: %w", path, err)
	}
	if got() != format {
		return fmt.Errorf("phy: %s: format %q, want %q (written by another version of dspk: run the plan's rows again)", path, got(), format)
	}
	return nil
}

// LoadSortGlobal reads what SaveSortGlobal wrote into dir for a schedule
// of windows windows and nt samples per template.
func LoadSortGlobal(dir string, windows, nt int) (*pipeline.SortGlobal, error) {
	var gi sortGlobalInfo
	if err := readJSONFile(dir, sortGlobalFile, sortGlobalFormat, &gi, func() string { return gi.Format }); err != nil {
		return nil, err
	}
	if gi.Windows != windows {
		return nil, fmt.Errorf("phy: %s: global results of %d windows, the recording has %d; plan again", dir, gi.Windows, windows)
	}
	tm, err := detect.LoadTemplates(dir, nt)
	if err != nil {
		return nil, err
	}
	C := gi.Channels
	ia, err := readNPYOf(dir, "whitening_index.npy", "<i4", C, -1)
	if err != nil {
		return nil, err
	}
	va, err := readNPYOf(dir, "whitening_value.npy", "<f4", C, ia.Shape[1])
	if err != nil {
		return nil, err
	}
	w := &linalg.Whitening{C: C, K: ia.Shape[1]}
	if w.Index, err = npyInt32(ia); err != nil {
		return nil, err
	}
	if w.Value, err = va.Float32(); err != nil {
		return nil, err
	}
	for i, v := range w.Index {
		if v < 0 || int(v) >= C {
			return nil, fmt.Errorf("phy: %s: whitening_index.npy entry %d is %d, outside [0, %d)", dir, i, v, C)
		}
	}
	ua, err := readNPYOf(dir, "U.npy", "<f4", gi.Learned, C, tm.P)
	if err != nil {
		return nil, err
	}
	u, err := ua.Float32()
	if err != nil {
		return nil, err
	}
	g := &pipeline.SortGlobal{Whitening: w, Universal: tm, UniversalSource: gi.UniversalSource, Clips: gi.Clips,
		Correction: gi.Correction, Learned: match.Templates{N: gi.Learned, C: C, P: tm.P, U: u, WPCA: tm.WPCA},
		Detected: gi.Detected, Work: gi.Work, Clusters0: gi.Clusters0, Groups0: gi.Groups0, Stages: gi.Stages,
		Warnings: gi.Warnings}
	if gi.Motion {
		da, err := readNPYOf(dir, "dshift.npy", "<f8", windows, -1)
		if err != nil {
			return nil, err
		}
		blocks := da.Shape[1]
		ya, err := readNPYOf(dir, "yblk.npy", "<f8", blocks)
		if err != nil {
			return nil, err
		}
		sa, err := readNPYOf(dir, "motion_spikes.npy", "<i8", windows)
		if err != nil {
			return nil, err
		}
		m := &motion.Estimate{Windows: windows, Blocks: blocks}
		if m.Dshift, err = da.Float64(); err != nil {
			return nil, err
		}
		if m.Yblk, err = ya.Float64(); err != nil {
			return nil, err
		}
		sp, err := sa.Int64()
		if err != nil {
			return nil, err
		}
		for _, v := range sp {
			m.Spikes = append(m.Spikes, int(v))
		}
		g.Motion = m
	}
	return g, nil
}

// SaveSortShard writes the spikes ms of a sort's shard, windows
// [first, end) of total,
// matched in seconds, into dir: spike_samples.npy (int64 [n]),
// spike_templates.npy (int32 [n]), amplitudes.npy (float32 [n]),
// features.npy (float32 [n, nc, p]) and sortShardFile.
func SaveSortShard(dir string, ms *match.Spikes, first, end, total, nc, p int, seconds float64) error {
	n := ms.Len()
	if len(ms.Template) != n || len(ms.Amplitude) != n || len(ms.Features) != n*nc*p {
		return fmt.Errorf("phy: %d spikes with %d templates, %d amplitudes and %d features (%d×%d per spike)",
			n, len(ms.Template), len(ms.Amplitude), len(ms.Features), nc, p)
	}
	err := writeNPYs(dir, []npyFile{
		{"spike_samples.npy", []int{n}, ms.Sample},
		{"spike_templates.npy", []int{n}, ms.Template},
		{"amplitudes.npy", []int{n}, ms.Amplitude},
		{"features.npy", []int{n, nc, p}, ms.Features},
	})
	if err != nil {
		return err
	}
	return export.WriteJSON(filepath.Join(dir, sortShardFile), sortShardInfo{Format: sortShardFormat,
		Windows: [2]int{first, end}, Total: total, Spikes: n, NC: nc, P: p, Seconds: seconds})
}

// LoadSortShards reads the shard folders parts, in order, and returns
// their spikes concatenated and their summed matching time. The shards
// must cover windows [0, total) in order, each with nc·p features per
// spike.
func LoadSortShards(parts []string, total, nc, p int) (*match.Spikes, float64, error) {
	ms := &match.Spikes{NC: nc, P: p}
	seconds, next := 0.0, 0
	for _, dir := range parts {
		var si sortShardInfo
		if err := readJSONFile(dir, sortShardFile, sortShardFormat, &si, func() string { return si.Format }); err != nil {
			return nil, 0, err
		}
		if si.Windows[0] != next || si.Windows[1] <= si.Windows[0] || si.Total != total || si.NC != nc || si.P != p {
			return nil, 0, fmt.Errorf("phy: %s: windows %v of %d with %d×%d features; the merge expects windows from %d of %d with %d×%d",
				dir, si.Windows, si.Total, si.NC, si.P, next, total, nc, p)
		}
		next = si.Windows[1]
		n := si.Spikes
		sa, err := readNPYOf(dir, "spike_samples.npy", "<i8", n)
		if err != nil {
			return nil, 0, err
		}
		ta, err := readNPYOf(dir, "spike_templates.npy", "<i4", n)
		if err != nil {
			return nil, 0, err
		}
		aa, err := readNPYOf(dir, "amplitudes.npy", "<f4", n)
		if err != nil {
			return nil, 0, err
		}
		fa, err := readNPYOf(dir, "features.npy", "<f4", n, nc, p)
		if err != nil {
			return nil, 0, err
		}
		// The dtypes are checked: the conversions cannot fail.
		s, _ := sa.Int64()
		tm, _ := npyInt32(ta)
		a, _ := aa.Float32()
		f, _ := fa.Float32()
		ms.Sample = append(ms.Sample, s...)
		ms.Template = append(ms.Template, tm...)
		ms.Amplitude = append(ms.Amplitude, a...)
		ms.Features = append(ms.Features, f...)
		seconds += si.Seconds
	}
	if next != total {
		return nil, 0, fmt.Errorf("phy: the shards %v cover windows [0, %d) of %d", parts, next, total)
	}
	return ms, seconds, nil
}
