package phy

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"dspk/detect"
	"dspk/export"
	"dspk/pipeline"
	"dspk/probe"
	"dspk/recording"
	"dspk/sim"
)

// The tests of this file check a detect folder against what its
// consumers require, file by file, as docs/formats.md (§ consumers)
// lists them with the lines of phylib's TemplateModel
// (phylib/io/model.py) and SpikeInterface's read_phy / read_kilosort /
// read_kilosort_as_analyzer (extractors/phykilosortextractors.py) and
// peak dtype (core/base.py) that impose them. No Python runs here; each
// assertion names the loader check it stands for.

// shortConfig makes windows small so that short recordings have several.
func shortConfig() pipeline.Config {
	c := pipeline.DefaultConfig()
	c.BatchSize = 15000
	c.NSkip = 2
	return c
}

// fourShankNP2 is a Neuropixels 2.0 four-shank layout: 4 shanks 250 µm
// apart, two columns 32 µm apart, rows 15 µm apart, 96 sites a shank on
// file rows 0…383 of a 385-channel file.
func fourShankNP2() *probe.Probe {
	p := &probe.Probe{Name: "np2-4shank", NChanFile: 385}
	for i := range 384 {
		sh, k := i/96, i%96
		p.X = append(p.X, float64(250*sh+32*(k%2)))
		p.Y = append(p.Y, float64(15*(k/2)))
		p.Shank = append(p.Shank, sh)
		p.ChanMap = append(p.ChanMap, i)
	}
	return p
}

// tee is the folder writer that also keeps every spike the pipeline
// hands it, so that the files can be checked against the detections.
type tee struct {
	*Writer
	info   *pipeline.RunInfo
	spikes detect.Spikes
}

func (t *tee) Begin(info *pipeline.RunInfo) error { t.info = info; return t.Writer.Begin(info) }
func (t *tee) Window(win recording.Window, s *detect.Spikes) error {
	t.spikes.Append(s)
	return t.Writer.Window(win, s)
}

// detectFolder runs detection of rec with probe pr into a new folder and
// returns it with the spikes and run description.
func detectFolder(t *testing.T, rec recording.Recording, pr *probe.Probe, cfg pipeline.Config) (string, *tee) {
	t.Helper()
	p, err := pipeline.New(nil, rec, pr, cfg)
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "det")
	w, err := Create(out, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	tw := &tee{Writer: w}
	if _, err := p.Run(context.Background(), tw, pipeline.RunOptions{Device: "cpu"}); err != nil {
		t.Fatal(err)
	}
	if tw.spikes.Len() == 0 {
		t.Fatal("no spikes")
	}
	return out, tw
}

func simulate(t *testing.T, seconds float64, seed uint64, pr *probe.Probe) *sim.Recording {
	t.Helper()
	cfg := sim.DefaultConfig()
	cfg.Seconds = seconds
	cfg.Seed = seed
	cfg.Units = 60
	if pr != nil {
		cfg.Probe = pr
	}
	rec, err := sim.Generate(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return rec
}

// folderSeconds is the length of the NP1 and NP2 simulations of the
// folder tests: 1.2 s, or DSPK_PHY_SECONDS (e.g. 60 for the issue's
// full-length check; several minutes on 2 cores).
func folderSeconds(t *testing.T) float64 {
	if v := os.Getenv("DSPK_PHY_SECONDS"); v != "" {
		s, err := strconv.ParseFloat(v, 64)
		if err != nil || !(s > 0) {
			t.Fatalf("DSPK_PHY_SECONDS=%q", v)
		}
		return s
	}
	return 1.2
}

// folderConfig is shortConfig for the short simulations and Kilosort4's
// defaults for long ones.
func folderConfig() pipeline.Config {
	if os.Getenv("DSPK_PHY_SECONDS") != "" {
		return pipeline.DefaultConfig()
	}
	return shortConfig()
}

func TestFolderNP1(t *testing.T) {
	rec := simulate(t, folderSeconds(t), 3, nil)
	dir, tw := detectFolder(t, rec, rec.Probe(), folderConfig())
	checkFolder(t, dir, tw)
	t.Logf("%d spikes, %d clusters", tw.spikes.Len(), len(u32s(t, dir, "pc_feature_ind.npy"))/tw.info.Grid.NC)
}

func TestFolderFourShankNP2(t *testing.T) {
	pr := fourShankNP2()
	rec := simulate(t, folderSeconds(t), 4, pr)
	dir, tw := detectFolder(t, rec, pr, folderConfig())
	checkFolder(t, dir, tw)
	// Clusters on every shank, numbered shank by shank.
	tpl := i32s(t, dir, "spike_templates.npy")
	ind := u32s(t, dir, "pc_feature_ind.npy")
	nc := tw.info.Grid.NC
	last := -1
	for k := 0; k < len(ind)/nc; k++ {
		sh := pr.Shank[ind[k*nc]]
		if sh < last {
			t.Fatalf("cluster %d on shank %d after a cluster on shank %d", k, sh, last)
		}
		last = sh
	}
	if last != 3 || len(tpl) == 0 {
		t.Errorf("clusters reach shank %d only", last)
	}
	t.Logf("%d spikes, %d clusters", len(tpl), len(ind)/nc)
}

// TestPeaksChannelIndexIsRecordingChannel detects a SpikeGLX recording
// whose real Neuropixels 1.0 meta flags site 191 unused: dspk's probe then
// has 383 sites, and peaks.npy must give SpikeInterface's channel index
// (the file row) — one more than the site index above row 190.
func TestPeaksChannelIndexIsRecordingChannel(t *testing.T) {
	src := "testdata/np1_site191_unused.imec0.ap.meta"
	mb, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	m, err := recording.ParseMeta(bytes.NewReader(mb), src)
	if err != nil {
		t.Fatal(err)
	}
	mp, err := m.Probe()
	if err != nil {
		t.Fatal(err)
	}
	if mp.Len() != 383 || slices.Contains(mp.ChanMap, 191) {
		t.Fatalf("meta probe: %d sites, row 191 used %v", mp.Len(), slices.Contains(mp.ChanMap, 191))
	}
	// A simulation on the meta's geometry, written as its .bin, with the
	// meta's fileSizeBytes set to the .bin's size.
	dir := t.TempDir()
	cfg := sim.DefaultConfig()
	cfg.Seconds, cfg.Seed, cfg.Units, cfg.Probe = 1.2, 5, 60, mp
	if _, _, err := sim.WriteSpikeGLX(dir, "site191_g0_t0", cfg); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "site191_g0_t0.imec0.ap.bin")
	st, err := os.Stat(bin)
	if err != nil {
		t.Fatal(err)
	}
	mb = regexp.MustCompile(`(?m)^fileSizeBytes=\d+`).ReplaceAll(mb, []byte(fmt.Sprintf("fileSizeBytes=%d", st.Size())))
	if err := os.WriteFile(recording.MetaPath(bin), mb, 0o644); err != nil {
		t.Fatal(err)
	}
	rec, err := recording.Open(bin, recording.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer rec.Close()
	pr := rec.(recording.Prober).Probe()
	if !reflect.DeepEqual(pr.ChanMap, mp.ChanMap) {
		t.Fatal("recording's probe differs from the meta's")
	}
	out, tw := detectFolder(t, rec, pr, shortConfig())
	checkFolder(t, out, tw)
	peaks := records(t, out, "peaks.npy", 4)
	above := 0
	for i := range tw.spikes.Len() {
		site := int(tw.spikes.Channels[i*tw.spikes.NC])
		ch := int64(peaks[1][i])
		if ch != int64(pr.ChanMap[site]) || ch == 191 || ch >= 384 {
			t.Fatalf("spike %d: channel_index %d for site %d (file row %d)", i, ch, site, pr.ChanMap[site])
		}
		if site >= 191 {
			above++
			if ch != int64(site+1) {
				t.Fatalf("spike %d: site %d above the unused one has channel_index %d", i, site, ch)
			}
		}
	}
	if above == 0 {
		t.Fatal("no spike above site 190: the test proves nothing")
	}
	t.Logf("%d of %d spikes above site 190, all with channel_index = site + 1", above, tw.spikes.Len())
}

// checkFolder checks the folder dir written for the spikes and run of tw.
func checkFolder(t *testing.T, dir string, tw *tee) {
	t.Helper()
	s, info := &tw.spikes, tw.info
	n, nc, P := s.Len(), s.NC, s.P
	pr, g, tm := info.Probe, info.Grid, info.Universal
	C, nt := pr.Len(), tm.NT

	// phylib _load_spike_samples, _load_data: spike_times.npy int, 1-D,
	// non-decreasing ("The spike times must be increasing").
	times := i64s(t, dir, "spike_times.npy")
	shape(t, dir, "spike_times.npy", "<i8", n)
	for i := 1; i < n; i++ {
		if times[i] < times[i-1] {
			t.Fatalf("spike_times.npy decreases at %d", i)
		}
	}
	if !slices.Equal(times, s.Sample) {
		t.Error("spike_times.npy differs from the detections")
	}
	// phylib _load_spike_templates (mandatory; uint16/uint32/int32/int64)
	// and _load_spike_clusters; SpikeInterface read_phy reads
	// spike_clusters.npy, else spike_templates.npy.
	shape(t, dir, "spike_templates.npy", "<i4", n)
	shape(t, dir, "spike_clusters.npy", "<i4", n)
	tpl, clu := i32s(t, dir, "spike_templates.npy"), i32s(t, dir, "spike_clusters.npy")
	if !slices.Equal(tpl, clu) {
		t.Error("spike_clusters.npy differs from spike_templates.npy")
	}
	// Clusters are the used centres, numbered 0…K−1, every id used (so
	// read_kilosort_as_analyzer's units match the rows of templates.npy).
	centreOf := map[int32]int32{}
	for i, k := range tpl {
		if c, ok := centreOf[k]; ok && c != s.Center[i] {
			t.Fatalf("cluster %d holds centres %d and %d", k, c, s.Center[i])
		}
		centreOf[k] = s.Center[i]
	}
	K := len(centreOf)
	for k := range K {
		if _, ok := centreOf[int32(k)]; !ok {
			t.Fatalf("%d clusters but id %d unused (ids must be 0…K−1)", K, k)
		}
	}
	used := map[int32]bool{}
	for _, f := range s.Center {
		used[f] = true
	}
	if len(used) != K {
		t.Errorf("%d clusters for %d used centres", K, len(used))
	}
	// phylib _load_amplitudes: 1-D, n.
	shape(t, dir, "amplitudes.npy", "<f4", n)

	// phylib _load_templates: float32/64, 3-D (K, nt, C) dense (no
	// template_ind.npy); every id < K (Kilosort #604, phy #1327).
	shape(t, dir, "templates.npy", "<f4", K, nt, C)
	if _, err := os.Stat(filepath.Join(dir, "template_ind.npy")); err == nil {
		t.Error("template_ind.npy present: phylib would take templates.npy as sparse")
	}
	// The template of cluster k is the mean wPCA features of its spikes
	// times wPCA, on the centre's channels, zero elsewhere (float64
	// reference from the detections).
	tmpl := f32s(t, dir, "templates.npy")
	sum := make([]float64, K*nc*P)
	cnt := make([]int, K)
	ampSum := make([]float64, K)
	for i, k := range tpl {
		cnt[k]++
		ampSum[k] += float64(s.Amplitude[i])
		for j := range nc * P {
			sum[int(k)*nc*P+j] += float64(s.Features[i*nc*P+j])
		}
	}
	var worst float64
	for k := range K {
		f := int(centreOf[int32(k)])
		chans := g.IC[f*nc : (f+1)*nc]
		for tt := range nt {
			for c := range C {
				want := 0.0
				if j := slices.Index(chans, int32(c)); j >= 0 {
					for q := range P {
						want += sum[(k*nc+j)*P+q] / float64(cnt[k]) * float64(tm.WPCA[q*nt+tt])
					}
				}
				got := float64(tmpl[(k*nt+tt)*C+c])
				if want == 0 && got != 0 {
					t.Fatalf("templates.npy[%d, %d, %d] = %g off the cluster's channels", k, tt, c, got)
				}
				worst = max(worst, math.Abs(got-want)/(1+math.Abs(want)))
			}
		}
	}
	if worst > 1e-5 {
		t.Errorf("templates.npy differs from mean features × wPCA by %.3g relative", worst)
	}
	// phylib _load_features: pc_features (n, P, NC) float, swapped to
	// (n, NC, P) on load; pc_feature_ind (K, NC) with rows = templates,
	// row k = the channels of cluster k's spikes (exact: the NC channels
	// are a function of the centre).
	shape(t, dir, "pc_features.npy", "<f4", n, P, nc)
	shape(t, dir, "pc_feature_ind.npy", "<u4", K, nc)
	pcf := f32s(t, dir, "pc_features.npy")
	ind := u32s(t, dir, "pc_feature_ind.npy")
	for i := range n {
		k := int(tpl[i])
		for j := range nc {
			if ind[k*nc+j] != uint32(s.Channels[i*nc+j]) || int(ind[k*nc+j]) >= C {
				t.Fatalf("spike %d: pc_feature_ind[%d] = %v, spike channels %v", i, k, ind[k*nc:(k+1)*nc], s.Channels[i*nc:(i+1)*nc])
			}
			for q := range P {
				if pcf[(i*P+q)*nc+j] != s.Features[(i*nc+j)*P+q] {
					t.Fatalf("pc_features.npy[%d, %d, %d] is not feature %d of channel %d (Phy's axis order)", i, q, j, q, j)
				}
			}
		}
	}
	// phylib _load_similar_templates: (K, K).
	shape(t, dir, "similar_templates.npy", "<f4", K, K)
	sim := f32s(t, dir, "similar_templates.npy")
	for a := range K {
		if math.Abs(float64(sim[a*K+a])-1) > 1e-4 {
			t.Fatalf("similar_templates[%d, %d] = %g", a, a, sim[a*K+a])
		}
		for b := range K {
			if sim[a*K+b] != sim[b*K+a] || sim[a*K+b] > 1+1e-4 || math.IsNaN(float64(sim[a*K+b])) {
				t.Fatalf("similar_templates[%d, %d] = %g, [%d, %d] = %g", a, b, sim[a*K+b], b, a, sim[b*K+a])
			}
		}
	}
	checkSimilarity(t, tmpl, sim, K, nt, C, min(K, 60))

	// phylib _load_channel_map (uint32/int32/int64, ≤ n_channels_dat − 1),
	// _load_channel_positions (C × 2, distinct), _load_channel_shanks.
	shape(t, dir, "channel_map.npy", "<i4", C)
	shape(t, dir, "channel_positions.npy", "<f4", C, 2)
	shape(t, dir, "channel_shanks.npy", "<i4", C)
	cm, pos, sh := i32s(t, dir, "channel_map.npy"), f32s(t, dir, "channel_positions.npy"), i32s(t, dir, "channel_shanks.npy")
	seen := map[[2]float32]bool{}
	for i := range C {
		if int(cm[i]) != pr.ChanMap[i] || int(cm[i]) >= info.Recording.Channels() || int(sh[i]) != pr.Shank[i] {
			t.Fatalf("site %d: channel_map %d, shank %d", i, cm[i], sh[i])
		}
		p := [2]float32{pos[2*i], pos[2*i+1]}
		if seen[p] {
			t.Fatalf("channel_positions.npy repeats %v", p)
		}
		seen[p] = true
	}
	// phylib _load_wm/_load_wmi; read_kilosort_as_analyzer unwhitens
	// templates with whitening_mat_inv (C × C).
	shape(t, dir, "whitening_mat.npy", "<f4", C, C)
	shape(t, dir, "whitening_mat_inv.npy", "<f4", C, C)

	// params.py: ASCII, Python literals, the keys phylib and SpikeInterface
	// read; dat_path exists; n_channels_dat the file's channels.
	pb, err := os.ReadFile(filepath.Join(dir, "params.py"))
	if err != nil {
		t.Fatal(err)
	}
	for i, c := range pb {
		if c >= 0x80 {
			t.Fatalf("params.py byte %d is not ASCII", i)
		}
	}
	params := map[string]string{}
	for _, l := range strings.Split(strings.TrimSpace(string(pb)), "\n") {
		k, v, ok := strings.Cut(l, " = ")
		if !ok {
			t.Fatalf("params.py line %q", l)
		}
		params[k] = v
	}
	if params["n_channels_dat"] != strconv.Itoa(info.Recording.Channels()) || params["dtype"] != "'int16'" ||
		params["offset"] != "0" || params["hp_filtered"] != "False" || !strings.HasPrefix(params["dat_path"], "'/") {
		t.Errorf("params.py: %v", params)
	}
	if rate, err := strconv.ParseFloat(params["sample_rate"], 64); err != nil || rate != info.Recording.SampleRate() {
		t.Errorf("params.py sample_rate %q", params["sample_rate"])
	}

	// ops.npy: a 0-d object array (np.save of a dict) whose pickle holds
	// nt0min, nt and fs as Python int, int and float under their keys;
	// read_kilosort_as_analyzer takes ms_before from nt0min and nt.
	checkOps(t, filepath.Join(dir, OpsFile), info.Detect.NT0Min, info.Detect.NT, info.Recording.SampleRate())

	// Cluster tables: SpikeInterface reads only cluster_info.tsv when
	// present (its "group" column becomes the unit's quality); phylib
	// skips cluster_info and reads cluster_group.tsv.
	grp := tsv(t, dir, "cluster_group.tsv")
	if !slices.Equal(grp[0], []string{"cluster_id", "group"}) || len(grp) != K+1 {
		t.Fatalf("cluster_group.tsv: header %v, %d rows for %d clusters", grp[0], len(grp)-1, K)
	}
	ci := tsv(t, dir, "cluster_info.tsv")
	if len(ci) != K+1 {
		t.Fatalf("cluster_info.tsv: %d rows for %d clusters", len(ci)-1, K)
	}
	col := map[string]int{}
	for j, h := range ci[0] {
		col[h] = j
	}
	for _, h := range []string{"cluster_id", "centre", "x", "y", "n_spikes", "amplitude", "group"} {
		if _, ok := col[h]; !ok {
			t.Fatalf("cluster_info.tsv has no %s column (%v)", h, ci[0])
		}
	}
	for k := range K {
		r, gr := ci[k+1], grp[k+1]
		f := int(centreOf[int32(k)])
		amp, _ := strconv.ParseFloat(r[col["amplitude"]], 64)
		x, _ := strconv.ParseFloat(r[col["x"]], 64)
		y, _ := strconv.ParseFloat(r[col["y"]], 64)
		if r[col["cluster_id"]] != strconv.Itoa(k) || gr[0] != strconv.Itoa(k) || gr[1] != "unsorted" ||
			r[col["group"]] != "unsorted" || r[col["centre"]] != strconv.Itoa(f) || x != g.X[f] || y != g.Y[f] ||
			r[col["n_spikes"]] != strconv.Itoa(cnt[k]) || math.Abs(amp-ampSum[k]/float64(cnt[k])) > 1e-3 {
			t.Fatalf("cluster %d (centre %d, %d spikes): cluster_info %v, cluster_group %v", k, f, cnt[k], r, gr)
		}
	}

	// SpikeInterface peaks (core/base.py base_peak_dtype) and
	// peak_locations (x, y float64).
	descr := "[('sample_index', '<i8'), ('channel_index', '<i8'), ('amplitude', '<f8'), ('segment_index', '<i8')]"
	shape(t, dir, "peaks.npy", descr, n)
	shape(t, dir, "peak_locations.npy", "[('x', '<f8'), ('y', '<f8')]", n)
	pk := records(t, dir, "peaks.npy", 4)
	loc := records(t, dir, "peak_locations.npy", 2)
	for i := range n {
		if int64(pk[0][i]) != s.Sample[i] || int64(pk[1][i]) != int64(pr.ChanMap[s.Channels[i*nc]]) ||
			math.Float64frombits(pk[2][i]) != float64(s.Amplitude[i]) || pk[3][i] != 0 ||
			math.Float64frombits(loc[0][i]) != float64(s.X[i]) || math.Float64frombits(loc[1][i]) != float64(s.Y[i]) {
			t.Fatalf("peak %d: %v %v", i, []uint64{pk[0][i], pk[1][i], pk[2][i], pk[3][i]}, []uint64{loc[0][i], loc[1][i]})
		}
	}
	// spike_positions.npy (read_kilosort_as_analyzer's spike locations).
	shape(t, dir, "spike_positions.npy", "<f4", n, 2)

	// probe.json: a probeinterface file of the probe used.
	jb, err := os.ReadFile(filepath.Join(dir, "probe.json"))
	if err != nil {
		t.Fatal(err)
	}
	back, err := probe.ParseProbeInterface(jb, "probe.json")
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(back.X, pr.X) || !slices.Equal(back.Y, pr.Y) || !slices.Equal(back.ChanMap, pr.ChanMap) || !slices.Equal(back.Shank, pr.Shank) {
		t.Error("probe.json is not the probe used")
	}
	var prov map[string]any
	if b, err := os.ReadFile(filepath.Join(dir, "dspk.json")); err != nil || json.Unmarshal(b, &prov) != nil || prov["clusters"] != float64(K) {
		t.Errorf("dspk.json: %v, clusters %v", err, prov["clusters"])
	}
	checkModes(t, dir)
}

// checkSimilarity compares the first m rows of similar_templates with a
// plain float64 computation from the dense templates: the maximum over
// lags of the cross-correlation of the L2-normalised templates.
func checkSimilarity(t *testing.T, tmpl, sim []float32, K, nt, C, m int) {
	t.Helper()
	norm := make([]float64, K)
	for k := range K {
		for _, v := range tmpl[k*nt*C : (k+1)*nt*C] {
			norm[k] += float64(v) * float64(v)
		}
		norm[k] = math.Sqrt(norm[k])
	}
	// The channels each template is non-zero on (elsewhere its products
	// vanish).
	on := make([][]int, K)
	for k := range K {
		for c := range C {
			for tt := range nt {
				if tmpl[(k*nt+tt)*C+c] != 0 {
					on[k] = append(on[k], c)
					break
				}
			}
		}
	}
	for a := range m {
		for b := range K {
			best := math.Inf(-1)
			for tau := -(nt - 1); tau < nt; tau++ {
				var s float64
				for tt := max(0, -tau); tt < nt && tt+tau < nt; tt++ {
					ra := tmpl[(a*nt+tt)*C : (a*nt+tt+1)*C]
					rb := tmpl[(b*nt+tt+tau)*C : (b*nt+tt+tau+1)*C]
					for _, c := range on[a] {
						s += float64(ra[c]) * float64(rb[c])
					}
				}
				best = max(best, s)
			}
			want := best / (norm[a] * norm[b])
			if math.Abs(want-float64(sim[a*K+b])) > 1e-4 {
				t.Fatalf("similar_templates[%d, %d] = %g, plain computation %g", a, b, sim[a*K+b], want)
			}
		}
	}
}

// checkModes checks that the folder and its files have the permissions a
// plain os.Mkdir / os.Create gives here (0755 / 0644 under umask 022).
func checkModes(t *testing.T, dir string) {
	t.Helper()
	ref := t.TempDir()
	rf := filepath.Join(ref, "f")
	if err := os.WriteFile(rf, nil, 0o666); err != nil {
		t.Fatal(err)
	}
	rd := filepath.Join(ref, "d")
	if err := os.Mkdir(rd, 0o777); err != nil {
		t.Fatal(err)
	}
	fm, dm := mode(t, rf), mode(t, rd)
	if got := mode(t, dir); got != dm {
		t.Errorf("folder mode %v, want %v", got, dm)
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if got := mode(t, filepath.Join(dir, e.Name())); got != fm {
			t.Errorf("%s: mode %v, want %v", e.Name(), got, fm)
		}
	}
}

func mode(t *testing.T, path string) os.FileMode {
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return st.Mode().Perm()
}

// shape checks a .npy header's dtype and shape.
func shape(t *testing.T, dir, name, descr string, dims ...int) {
	t.Helper()
	f, err := os.Open(filepath.Join(dir, name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	d, fortran, sh, err := export.ReadNPYHeader(f)
	if err != nil || d != descr || fortran || !slices.Equal(sh, dims) {
		t.Fatalf("%s: %q %v fortran %v (%v), want %q %v", name, d, sh, fortran, err, descr, dims)
	}
}

// data returns the bytes after a .npy header.
func data(t *testing.T, dir, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		t.Fatal(err)
	}
	if _, _, _, err := export.ReadNPYHeader(bytes.NewReader(b)); err != nil {
		t.Fatal(err)
	}
	hl := int(binary.LittleEndian.Uint16(b[8:]))
	return b[10+hl:]
}

func i64s(t *testing.T, dir, name string) []int64 {
	b := data(t, dir, name)
	out := make([]int64, len(b)/8)
	for i := range out {
		out[i] = int64(binary.LittleEndian.Uint64(b[8*i:]))
	}
	return out
}

func i32s(t *testing.T, dir, name string) []int32 {
	b := data(t, dir, name)
	out := make([]int32, len(b)/4)
	for i := range out {
		out[i] = int32(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return out
}

func u32s(t *testing.T, dir, name string) []uint32 {
	b := data(t, dir, name)
	out := make([]uint32, len(b)/4)
	for i := range out {
		out[i] = binary.LittleEndian.Uint32(b[4*i:])
	}
	return out
}

func f32s(t *testing.T, dir, name string) []float32 {
	b := data(t, dir, name)
	out := make([]float32, len(b)/4)
	for i := range out {
		out[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return out
}

// records splits an array of k 8-byte fields into its columns (raw bits).
func records(t *testing.T, dir, name string, k int) [][]uint64 {
	b := data(t, dir, name)
	n := len(b) / (8 * k)
	out := make([][]uint64, k)
	for j := range k {
		out[j] = make([]uint64, n)
		for i := range n {
			out[j][i] = binary.LittleEndian.Uint64(b[(i*k+j)*8:])
		}
	}
	return out
}

func tsv(t *testing.T, dir, name string) [][]string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		t.Fatal(err)
	}
	var rows [][]string
	for _, l := range strings.Split(strings.TrimSuffix(string(b), "\n"), "\n") {
		rows = append(rows, strings.Split(l, "\t"))
	}
	return rows
}

// checkOps checks that the ops.npy at path is an object array whose
// pickled dict maps "nt0min", "nt" and "fs" to the given values (the
// pickle's opcodes for a str key followed by a small int or a float).
func checkOps(t *testing.T, path string, nt0min, nt int, fs float64) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	descr, fortran, shp, err := export.ReadNPYHeader(f)
	if err != nil || descr != "|O" || fortran || len(shp) != 0 {
		t.Fatalf("%s: descr %q, fortran %v, shape %v, %v", path, descr, fortran, shp, err)
	}
	body, err := io.ReadAll(f)
	if err != nil {
		t.Fatal(err)
	}
	key := func(k string) string { return "X" + string([]byte{byte(len(k)), 0, 0, 0}) + k }
	fsBits := make([]byte, 8)
	binary.BigEndian.PutUint64(fsBits, math.Float64bits(fs))
	for _, want := range []string{
		key("nt0min") + "K" + string([]byte{byte(nt0min)}),
		key("nt") + "K" + string([]byte{byte(nt)}),
		key("fs") + "G" + string(fsBits),
		key("do_CAR") + "\x88",                            // True
		key("tmax") + "G\x7f\xf0\x00\x00\x00\x00\x00\x00", // +Inf: no end limit
		"cnumpy.core.multiarray\n_reconstruct\n",
	} {
		if !bytes.Contains(body, []byte(want)) {
			t.Errorf("%s lacks %q", path, want)
		}
	}
	if len(body) == 0 || body[len(body)-1] != '.' {
		t.Errorf("%s: the pickle does not end with STOP", path)
	}
}
