package phy

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"dspk/detect"
	"dspk/export"
	"dspk/figure"
	"dspk/pipeline"
	"dspk/probe"
	"dspk/recording"
)

// Options configures [Create].
type Options struct {
	// Inputs are the files the run reads (recording, meta, probe,
	// templates); the folder may not be or hold one of them, even with
	// Overwrite (see [export.OutputOptions]).
	Inputs []string
	// Warnings found before the run (by the caller) are written into
	// dspk.json's "warnings" before those of the passes.
	Warnings []string
	// Overwrite allows replacing an existing folder of the same Kind (at
	// End).
	Overwrite bool
	// Kind is the folder's kind recorded in its manifest (default [Kind],
	// "detect"); a command writing another kind of Phy folder (a sort)
	// names its own, and -overwrite then replaces only that kind.
	Kind string
	// Context, if not nil, stops End between the files it writes and
	// before the folder is committed (see [export.OutputOptions]): once it
	// is done, nothing appears and an existing folder stays as it was.
	Context context.Context
	// DatPath is the raw data file params.py points at (default: the
	// recording's name); it is written as an absolute path.
	DatPath string
	// Raster, if set, has a [Writer] draw the drift raster of its folder
	// (RasterFile, from the folder's spikes as [ReadRaster] reads them):
	// its axes and key beside the run from Begin, its spikes in End. A
	// [SortWriter] ignores it.
	Raster bool
	// Extra, if set, is called with the temporary folder before it
	// appears under its final name, to add files of the caller's. A
	// [Writer] calls it once the per-spike arrays, the files of Begin,
	// dspk.json, the drift files and the drift raster are written; it
	// runs concurrently with the writing of the cluster files
	// (spike_clusters.npy, spike_templates.npy, templates.npy,
	// pc_feature_ind.npy, similar_templates.npy and the .tsv tables),
	// which it must not read. A [SortWriter] calls it once every other
	// file is written.
	Extra func(dir string) error
}

// Kind is the kind of folder a Writer writes unless [Options] names
// another, recorded in its manifest: -overwrite replaces only a folder of
// this kind.
const Kind = "detect"

// Writer is the [pipeline.Sink] that writes the Phy / SpikeInterface
// folder. Create it before the run (an existing folder is refused before
// any work), pass it to [pipeline.Pipeline.Run] and Close it when done:
// the folder appears when End succeeds, and Close removes everything
// otherwise.
type Writer struct {
	od   *export.OutputDir
	opt  Options
	info *pipeline.RunInfo
	nc   int // channels per spike
	p    int // features per channel
	// Streamed per-spike arrays.
	times, dtmpl, amp, pos, cent, pcf, chn *export.NPYAppender
	peaks, locs                            *export.NPYRecordAppender
	all                                    []interface{ Close() error }
	acc                                    *clusters
	// Per-window scratch for the dtype and axis-order conversions.
	i32       []int32
	f32, feat []float32
	i64, zero []int64
	f64, g64  []float64
	clusters  int
	done      bool
	// runFiles is closed once Begin's goroutine has written the files that
	// describe the run (runFilesErr its error); nil before Begin.
	runFiles    chan struct{}
	runFilesErr error
	// raster is the drift raster's canvas prepared from Begin (with
	// Options.Raster).
	raster figure.RasterPreparation
}

// waitRunFiles waits for the run files Begin writes beside the detection
// pass and returns their error.
func (w *Writer) waitRunFiles() error {
	if w.runFiles == nil {
		return nil
	}
	<-w.runFiles
	return w.runFilesErr
}

// Clusters returns the number of provisional clusters written (after End).
func (w *Writer) Clusters() int { return w.clusters }

// Create reserves the output folder out (refusing an existing one unless
// opt.Overwrite) and returns the writer that fills it.
func Create(out string, opt Options) (*Writer, error) {
	od, err := createDir(out, opt, Kind)
	if err != nil {
		return nil, err
	}
	return &Writer{od: od, opt: opt}, nil
}

// createDir reserves the output folder out for a folder of opt.Kind, or
// of kind where opt.Kind is empty (refusing an existing one unless
// opt.Overwrite).
func createDir(out string, opt Options, kind string) (*export.OutputDir, error) {
	if opt.Kind != "" {
		kind = opt.Kind
	}
	return export.CreateOutputDir(out, export.OutputOptions{Kind: kind, Overwrite: opt.Overwrite, Inputs: opt.Inputs, Context: opt.Context})
}

// Close closes any open file and, unless End succeeded, removes the
// temporary folder. It can be deferred.
func (w *Writer) Close() error {
	w.waitRunFiles()
	w.closeStreams()
	if w.done {
		return nil
	}
	w.done = true
	return w.od.Abort()
}

func (w *Writer) closeStreams() error {
	var first error
	for _, a := range w.all {
		if err := a.Close(); err != nil && first == nil {
			first = err
		}
	}
	w.all = nil
	return first
}

// Begin opens the per-spike arrays and starts writing the files that
// describe the recording, probe, whitening and templates on a goroutine,
// beside the detection pass (End reports their error).
func (w *Writer) Begin(info *pipeline.RunInfo) error {
	if w.info != nil {
		return fmt.Errorf("phy: %s: Begin called twice", w.od.Final())
	}
	w.info = info
	g, tm := info.Grid, info.Universal
	w.nc, w.p = g.NC, tm.P
	w.acc = newClusters(g.F(), g.NC, tm.P)

	var err error
	mk := func(name string, zero any, tail ...int) *export.NPYAppender {
		if err != nil {
			return nil
		}
		var a *export.NPYAppender
		if a, err = export.CreateNPY(w.od.Path(name), zero, tail...); a != nil {
			w.all = append(w.all, a)
		}
		return a
	}
	mkRec := func(name string, cols ...export.Column) *export.NPYRecordAppender {
		if err != nil {
			return nil
		}
		var a *export.NPYRecordAppender
		if a, err = export.CreateNPYRecords(w.od.Path(name), cols...); a != nil {
			w.all = append(w.all, a)
		}
		return a
	}
	w.times = mk("spike_times.npy", []int64(nil))
	w.dtmpl = mk("spike_detection_templates.npy", []int32(nil))
	w.amp = mk("amplitudes.npy", []float32(nil))
	w.pos = mk("spike_positions.npy", []float32(nil), 2)
	w.cent = mk("spike_centres.npy", []int32(nil))
	w.pcf = mk("pc_features.npy", []float32(nil), tm.P, g.NC)
	w.chn = mk("spike_channels.npy", []int32(nil), g.NC)
	w.peaks = mkRec("peaks.npy",
		export.Column{Name: "sample_index", Data: []int64(nil)},
		export.Column{Name: "channel_index", Data: []int64(nil)},
		export.Column{Name: "amplitude", Data: []float64(nil)},
		export.Column{Name: "segment_index", Data: []int64(nil)})
	w.locs = mkRec("peak_locations.npy",
		export.Column{Name: "x", Data: []float64(nil)},
		export.Column{Name: "y", Data: []float64(nil)})
	if err != nil {
		return err
	}

	w.runFiles = make(chan struct{})
	go func() {
		defer close(w.runFiles)
		w.runFilesErr = w.writeRunFiles(info)
	}()
	if w.opt.Raster {
		// The drift raster's axes and key are drawn beside the run, for
		// the layout it expects.
		w.raster.Start(expectedRasterLayout(info))
	}
	return nil
}

// writeRunFiles writes the files that describe the run: the channel map
// and positions, the whitening matrices, the templates, params.py, ops.npy
// and probe.json.
func (w *Writer) writeRunFiles(info *pipeline.RunInfo) error {
	tm, pr := info.Universal, info.Probe
	C := pr.Len()
	cm, pos, sh := channelArrays(pr)
	dense, inv, err := pipeline.WhiteningMatrices(info.Whitening)
	if err != nil {
		return err
	}
	for _, f := range []struct {
		name  string
		shape []int
		data  any
	}{
		{"channel_map.npy", []int{C}, cm},
		{"channel_positions.npy", []int{C, 2}, pos},
		{"channel_shanks.npy", []int{C}, sh},
		{"whitening_mat.npy", []int{C, C}, dense},
		{"whitening_mat_inv.npy", []int{C, C}, inv},
		{"wTEMP.npy", []int{tm.K, tm.NT}, tm.WTEMP},
		{"wPCA.npy", []int{tm.P, tm.NT}, tm.WPCA},
	} {
		if err := export.WriteNPYFile(w.od.Path(f.name), f.shape, f.data); err != nil {
			return err
		}
	}
	rec := info.Recording
	files, dtype, err := writeParamsPy(w.od.Path("params.py"), rec, w.opt.DatPath)
	if err != nil {
		return err
	}
	if err := writeOps(w.od.Path(OpsFile), info, files, dtype); err != nil {
		return err
	}
	return writeProbeJSON(w.od.Path("probe.json"), pr)
}

// Window streams the spikes of one window to the per-spike arrays and
// adds them to their clusters.
func (w *Writer) Window(_ recording.Window, s *detect.Spikes) error {
	n := s.Len()
	if n == 0 {
		return nil
	}
	if w.info == nil {
		return fmt.Errorf("phy: %s: Window before Begin", w.od.Final())
	}
	if s.NC != w.nc || s.P != w.p {
		return fmt.Errorf("phy: %s: spikes of %d channels × %d features, the folder holds %d × %d",
			w.od.Final(), s.NC, s.P, w.nc, w.p)
	}
	F := int32(w.info.Grid.F())
	for i, f := range s.Center {
		if f < 0 || f >= F {
			return fmt.Errorf("phy: %s: spike %d at sample %d has centre %d of %d", w.od.Final(), i, s.Sample[i], f, F)
		}
	}
	cm := w.info.Probe.ChanMap
	w.i32 = w.i32[:0]
	w.f32 = w.f32[:0]
	w.i64 = w.i64[:0]
	w.f64, w.g64 = w.f64[:0], w.g64[:0]
	for i := 0; i < n; i++ {
		w.i32 = append(w.i32, int32(s.Template[i]))
		w.f32 = append(w.f32, s.X[i], s.Y[i])
		w.i64 = append(w.i64, int64(cm[s.Channels[i*s.NC]]))
	}
	// Phy's pc_features axis order is (spike, pc, channel); the detector
	// stores (spike, channel, pc) like Kilosort4's tF.
	w.feat = w.feat[:0]
	for i := 0; i < n; i++ {
		for q := 0; q < s.P; q++ {
			for j := 0; j < s.NC; j++ {
				w.feat = append(w.feat, s.Features[(i*s.NC+j)*s.P+q])
			}
		}
	}
	for _, a := range []struct {
		w *export.NPYAppender
		d any
	}{
		{w.times, s.Sample}, {w.dtmpl, w.i32}, {w.amp, s.Amplitude}, {w.pos, w.f32},
		{w.cent, s.Center}, {w.pcf, w.feat}, {w.chn, s.Channels},
	} {
		if err := a.w.Append(a.d); err != nil {
			return err
		}
	}
	for i := 0; i < n; i++ {
		w.f64 = append(w.f64, float64(s.Amplitude[i]))
	}
	if len(w.zero) < n {
		w.zero = make([]int64, n)
	}
	if err := w.peaks.Append(s.Sample, w.i64, w.f64, w.zero[:n]); err != nil {
		return err
	}
	w.f64 = w.f64[:0]
	for i := 0; i < n; i++ {
		w.f64 = append(w.f64, float64(s.X[i]))
		w.g64 = append(w.g64, float64(s.Y[i]))
	}
	if err := w.locs.Append(w.f64, w.g64); err != nil {
		return err
	}
	w.acc.add(s)
	return nil
}

// End closes the per-spike arrays, writes the cluster files and the
// provenance, and moves the folder to its final name.
func (w *Writer) End(sum *pipeline.Summary) error {
	if w.info == nil {
		return fmt.Errorf("phy: %s: End before Begin", w.od.Final())
	}
	t0 := time.Now()
	if err := w.waitRunFiles(); err != nil {
		return err
	}
	if err := w.closeStreams(); err != nil {
		return err
	}
	if err := w.ctxErr(); err != nil {
		return err
	}
	info := w.info
	g, pr := info.Grid, info.Probe
	order := w.acc.order(g, pr.Shank)
	K := len(order)
	id := make([]int32, g.F())
	for i := range id {
		id[i] = -1
	}
	for k, f := range order {
		id[f] = int32(k)
	}
	// dspk.json first, so that the drift raster can read it and the
	// per-spike arrays while the cluster files are written; it is written
	// again at the end with the times of both.
	if sum.Timings == nil {
		sum.Timings = map[string]float64{}
	}
	writeProv := func() error {
		prov := pipeline.Provenance(info, sum)
		prov["clusters"] = K
		prov["warnings"] = append(append([]string{}, w.opt.Warnings...), sum.Warnings...)
		return export.WriteJSON(w.od.Path("dspk.json"), prov)
	}
	if err := writeProv(); err != nil {
		return err
	}
	var extraErr error
	var extraTime time.Duration
	extraDone := make(chan struct{})
	extra := w.opt.Raster || info.Motion != nil || w.opt.Extra != nil
	go func() {
		defer close(extraDone)
		if extra {
			t := time.Now()
			extraErr = w.writeExtra()
			extraTime = time.Since(t)
		}
	}()
	tc := time.Now()
	err := w.writeClusterFiles(id, order, sum)
	clusterTime := time.Since(tc)
	<-extraDone
	if err != nil {
		return err
	}
	if extraErr != nil {
		return extraErr
	}
	if extra {
		sum.Timings["plotting"] = extraTime.Seconds()
	}
	sum.Timings["cluster_files"] = clusterTime.Seconds()
	sum.Timings["folder_writing"] = time.Since(t0).Seconds()
	if !sum.Started.IsZero() {
		sum.Timings["until_written"] = time.Since(sum.Started).Seconds()
	}
	if err := writeProv(); err != nil {
		return err
	}
	if err := w.ctxErr(); err != nil {
		return err
	}
	if err := w.od.Commit(); err != nil {
		return err
	}
	w.clusters = K
	w.done = true
	return nil
}

// writeExtra writes what End adds beside the cluster files: the drift
// files (with motion correction), the drift raster (with Options.Raster)
// and the caller's files (Options.Extra).
func (w *Writer) writeExtra() error {
	dir := w.od.Dir()
	if d := DriftOf(w.info); d != nil {
		if err := WriteDrift(dir, d); err != nil {
			return err
		}
	}
	if w.opt.Raster {
		ctx := w.opt.Context
		if ctx == nil {
			ctx = context.Background()
		}
		if err := writeRaster(ctx, dir, &w.raster); err != nil {
			return err
		}
	}
	if w.opt.Extra != nil {
		return w.opt.Extra(dir)
	}
	return nil
}

// writeClusterFiles writes the files of the clusters (ids id[centre] in
// cluster order order): spike_clusters.npy and spike_templates.npy,
// templates.npy, pc_feature_ind.npy, similar_templates.npy and the .tsv
// tables.
func (w *Writer) writeClusterFiles(id []int32, order []int, sum *pipeline.Summary) error {
	info := w.info
	g, tm, pr := info.Grid, info.Universal, info.Probe
	K := len(order)
	// Each cluster's mean features and channels; the similarity of the
	// templates is computed from them beside the writing of the files.
	C, nt := pr.Len(), tm.NT
	means := make([][]float64, K)
	chans := make([][]int32, K)
	ind := make([]uint32, 0, K*g.NC)
	for k, f := range order {
		means[k] = w.acc.mean(f)
		chans[k] = g.IC[f*g.NC : (f+1)*g.NC]
		for _, c := range chans[k] {
			ind = append(ind, uint32(c))
		}
	}
	simDone := make(chan []float32, 1)
	go func() { simDone <- similarity(means, chans, tm.WPCA, tm.P, nt, C) }()
	sim := sync.OnceValue(func() []float32 { return <-simDone })
	defer sim() // not left running after an error
	if err := w.writeSpikeClusters(id); err != nil {
		return err
	}

	// templates.npy, streamed one cluster at a time; pc_feature_ind.npy.
	ta, err := export.CreateNPY(w.od.Path("templates.npy"), []float32(nil), nt, C)
	if err != nil {
		return err
	}
	w.all = append(w.all, ta)
	buf := make([]float32, nt*C)
	for k := range order {
		denseTemplate(buf, means[k], chans[k], tm.WPCA, tm.P, nt, C)
		if err := ta.Append(buf); err != nil {
			return err
		}
	}
	if err := w.closeStreams(); err != nil {
		return err
	}
	if err := export.WriteNPYFile(w.od.Path("pc_feature_ind.npy"), []int{K, g.NC}, ind); err != nil {
		return err
	}
	if err := export.WriteNPYFile(w.od.Path("similar_templates.npy"), []int{K, K}, sim()); err != nil {
		return err
	}
	if err := w.ctxErr(); err != nil {
		return err
	}
	if err := w.writeTables(order, sum); err != nil {
		return err
	}
	return nil
}

// ctxErr returns the error of the options' Context, if it is done.
func (w *Writer) ctxErr() error {
	if w.opt.Context == nil {
		return nil
	}
	return w.opt.Context.Err()
}

// writeSpikeClusters writes spike_templates.npy and spike_clusters.npy
// (both the cluster id of every spike, as Kilosort4 writes them) by
// reading spike_centres.npy back in chunks through the centre → cluster
// map id.
func (w *Writer) writeSpikeClusters(id []int32) error {
	path := w.od.Path("spike_centres.npy")
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	descr, _, shape, err := export.ReadNPYHeader(f)
	if err != nil {
		return fmt.Errorf("phy: %s: %w", path, err)
	}
	if descr != "<i4" || len(shape) != 1 {
		return fmt.Errorf("phy: %s: %s %v, want <i4 (n,)", path, descr, shape)
	}
	st, err := export.CreateNPY(w.od.Path("spike_templates.npy"), []int32(nil))
	if err != nil {
		return err
	}
	w.all = append(w.all, st)
	sc, err := export.CreateNPY(w.od.Path("spike_clusters.npy"), []int32(nil))
	if err != nil {
		return err
	}
	w.all = append(w.all, sc)
	r := bufio.NewReaderSize(f, 1<<20)
	const chunk = 1 << 16
	raw := make([]byte, 4*chunk)
	ids := make([]int32, chunk)
	for left := shape[0]; left > 0; {
		m := min(left, chunk)
		if _, err := io.ReadFull(r, raw[:4*m]); err != nil {
			return fmt.Errorf("phy: reading back %s: %w", path, err)
		}
		for i := range m {
			c := int32(binary.LittleEndian.Uint32(raw[4*i:]))
			if c < 0 || int(c) >= len(id) || id[c] < 0 {
				return fmt.Errorf("phy: %s: centre %d has no cluster", path, c)
			}
			ids[i] = id[c]
		}
		if err := st.Append(ids[:m]); err != nil {
			return err
		}
		if err := sc.Append(ids[:m]); err != nil {
			return err
		}
		left -= m
	}
	return w.closeStreams()
}

// writeTables writes cluster_group.tsv (every cluster "unsorted") and
// cluster_info.tsv (one row per cluster: its centre and position, nearest
// site and shank, spike count, firing rate, mean amplitude and group).
func (w *Writer) writeTables(order []int, sum *pipeline.Summary) error {
	g, pr := w.info.Grid, w.info.Probe
	var grp, tbl strings.Builder
	grp.WriteString("cluster_id\tgroup\n")
	tbl.WriteString("cluster_id\tcentre\tx\ty\tch\tsh\tn_spikes\tfr\tamplitude\tgroup\n")
	ff := func(v float64, prec int) string { return strconv.FormatFloat(v, 'f', prec, 64) }
	for k, f := range order {
		n := w.acc.count[f]
		ch := int(g.IC[f*g.NC])
		fr := 0.0
		if sum.Seconds > 0 {
			fr = float64(n) / sum.Seconds
		}
		fmt.Fprintf(&grp, "%d\tunsorted\n", k)
		fmt.Fprintf(&tbl, "%d\t%d\t%s\t%s\t%d\t%d\t%d\t%s\t%s\tunsorted\n", k, f, ff(g.X[f], -1), ff(g.Y[f], -1),
			ch, pr.Shank[ch], n, ff(fr, 4), ff(w.acc.ampSum[f]/float64(n), 3))
	}
	if err := writeFile(w.od.Path("cluster_group.tsv"), []byte(grp.String())); err != nil {
		return err
	}
	return writeFile(w.od.Path("cluster_info.tsv"), []byte(tbl.String()))
}

// writeFile writes a new file with the usual permissions (0666 less the
// umask); errors name the file.
func writeFile(path string, b []byte) error {
	if err := os.WriteFile(path, b, 0o666); err != nil {
		return fmt.Errorf("phy: %w", err)
	}
	return nil
}

// channelArrays returns the probe's arrays of a Phy folder:
// channel_map.npy, channel_positions.npy (x, y a row) and
// channel_shanks.npy.
func channelArrays(pr *probe.Probe) (cm []int32, pos []float32, sh []int32) {
	C := pr.Len()
	cm, pos, sh = make([]int32, C), make([]float32, 2*C), make([]int32, C)
	for i := range cm {
		cm[i] = int32(pr.ChanMap[i])
		pos[2*i], pos[2*i+1] = float32(pr.X[i]), float32(pr.Y[i])
		sh[i] = int32(pr.Shank[i])
	}
	return cm, pos, sh
}

// writeParamsPy writes the params.py of rec (read from the raw data file
// datPath, if not empty) to path and returns the data files and dtype it
// names.
func writeParamsPy(path string, rec recording.Recording, datPath string) (files []string, dtype string, err error) {
	in := pipeline.InputProvenance(rec, datPath)
	files, dtype = in["files"].([]string), in["dtype"].(string)
	err = export.WriteParamsPy(path, export.ParamsPy{
		DatPath: files, NChannelsDat: rec.Channels(), DType: dtype,
		SampleRate: rec.SampleRate(), HPFiltered: false,
	})
	return files, dtype, err
}

// writeProbeJSON writes pr to path as a ProbeInterface file.
func writeProbeJSON(path string, pr *probe.Probe) error {
	var pj bytes.Buffer
	if err := probe.WriteProbeInterface(&pj, pr); err != nil {
		return err
	}
	return writeFile(path, pj.Bytes())
}
