package sim

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"dspk/probe"
)

// SpikeGLX constants of a Neuropixels 1.0 probe (formats.md §1).
const (
	np1RangeMax = 0.6 // imAiRangeMax, volts
	np1MaxInt   = 512 // imMaxInt
	np1LFGain   = 250
	// metaCreateTime is written as fileCreateTime so that equal configs
	// give byte-identical metas.
	metaCreateTime = "2026-11-29T00:00:00"
	metaAppVersion = "20230815"
)

// np1Gains are the AP gains a Neuropixels 1.0 imro table allows.
var np1Gains = []int{50, 125, 250, 500, 1000, 1500, 2000, 3000}

// SpikeGLX constants of a Neuropixels 2.0 single-shank probe (type 21,
// formats.md §1): ±0.5 V over ±8192 counts at the fixed gain 80.
const (
	np2RangeMax = 0.5
	np2MaxInt   = 8192
	np2Gain     = 80
	// NP2MicrovoltsPerCount is the scale of a Neuropixels 2.0 (type 21)
	// channel, 0.5 V / 8192 / 80 = 0.762939453125 µV; a simulation on the
	// [probe.NP2] layout must use it, since NP2.0 has no other gain.
	NP2MicrovoltsPerCount = np2RangeMax / np2MaxInt / np2Gain * 1e6
)

// WriteSpikeGLX generates cfg and writes it into dir (which must exist) as
// the SpikeGLX pair <base>.imec0.ap.bin and <base>.imec0.ap.meta, and
// returns the .bin path and the ground truth.
//
// For the [probe.NP2] layout the meta describes a Neuropixels 2.0
// single-shank probe as SpikeGLX writes one (imDatPrb_pn NP2000,
// imDatPrb_type 21, imAiRangeMax 0.5, imMaxInt 8192, acqApLfSy=N,0,1 and
// snsSaveChanSubset=0:N since NP2.0 has no LF band, an imroTbl of type 21
// entries (chan bankMask refid electrode) = (chan 1 0 chan) for bank 0,
// ~snsGeomMap with header (NP2000,1,0,70), ~snsShankMap (1,2,640) with
// (0:col:row:1)); cfg.MicrovoltsPerCount must be [NP2MicrovoltsPerCount].
//
// Otherwise the meta describes a Neuropixels 1.0 (type 0) stream saved as
// SpikeGLX does for an AP file: acqApLfSy=N,N,1, snsApLfSy=N,0,1,
// snsSaveChanSubset=0:N−1,2N (so the sync channel SY0 is acquired channel
// 2N, as in real NP1.0 metas), where N is the number of file rows before
// the sync row; imroTbl entries (chan 0 0 gain 250 1) with the AP gain that
// gives Config.MicrovoltsPerCount (500 for 2.34375 µV; it must be one of
// NP1.0's gains); ~snsGeomMap with header (NP1000,nShanks,0,70) and
// ~snsShankMap, SpikeGLX's (1,2,480) grid for the NP1 layout and a grid of
// the distinct x and y values per shank otherwise.
//
// In both, ~snsGeomMap gives each site's (shank:x:y:1) in the probe's own
// coordinates, so that a reader (x = shank·pitch + x with pitch 0)
// recovers exactly Config.Probe: Kilosort's NP1 frame for the default
// probe, the mirror image of SpikeGLX's own NP1000 coordinates (x = 70 − x,
// y = y − 20), and probeinterface's NP2000 frame for NP2 (SpikeGLX's x
// less 27 µm). File rows that are not sites are marked unused (…:0).
// fileSHA1 is left out (hashing would add about 15 % to the time; readers
// do not need it). fileCreateTime is fixed, so equal configs give
// identical files; fileName holds the .bin's base name only, so that the
// files do not depend on the folder they are written in (dspk simulate
// writes into a temporary folder and renames it).
//
// The probe's last file row must not be a site (it holds the sync
// channel). Both files are written under temporary names and renamed when
// complete, the .meta last; on error nothing is left behind.
func WriteSpikeGLX(dir, base string, cfg Config) (binPath string, truth *Truth, err error) {
	return WriteSpikeGLXContext(context.Background(), dir, base, cfg)
}

// WriteSpikeGLXContext is [WriteSpikeGLX] that stops with ctx's error
// (leaving nothing behind) when ctx is cancelled.
func WriteSpikeGLXContext(ctx context.Context, dir, base string, cfg Config) (binPath string, truth *Truth, err error) {
	rec, err := Generate(cfg)
	if err != nil {
		return "", nil, err
	}
	defer rec.Close()
	m := rec.m
	if m.syncRow != m.nChan-1 {
		return "", nil, fmt.Errorf("sim: WriteSpikeGLX: probe %s uses the last file row %d as a site; SpikeGLX needs it for the sync channel", m.probe.Name, m.nChan-1)
	}
	np2 := isNP2(m.probe)
	var ig int
	if np2 {
		if m.cfg.MicrovoltsPerCount != NP2MicrovoltsPerCount {
			return "", nil, fmt.Errorf("sim: WriteSpikeGLX: %g µV per count on the NP2 layout; Neuropixels 2.0 has only the gain %d, which gives %g", m.cfg.MicrovoltsPerCount, np2Gain, NP2MicrovoltsPerCount)
		}
		ig = np2Gain
	} else {
		gain := np1RangeMax / np1MaxInt * 1e6 / m.cfg.MicrovoltsPerCount
		ig = int(math.Round(gain))
		if math.Abs(gain-float64(ig)) > 1e-9*gain || !slices.Contains(np1Gains, ig) {
			return "", nil, fmt.Errorf("sim: WriteSpikeGLX: %g µV per count needs an AP gain of %g, not one of Neuropixels 1.0's %v", m.cfg.MicrovoltsPerCount, gain, np1Gains)
		}
	}

	binPath = filepath.Join(dir, base+".imec0.ap.bin")
	metaPath := filepath.Join(dir, base+".imec0.ap.meta")

	var tmps []string
	defer func() {
		if err != nil {
			for _, p := range tmps {
				os.Remove(p)
			}
		}
	}()
	create := func(final string) (*os.File, error) {
		f, err := createTemp(dir, "."+filepath.Base(final)+".", ".tmp")
		if err != nil {
			return nil, fmt.Errorf("sim: %w", err)
		}
		tmps = append(tmps, f.Name())
		return f, nil
	}

	bf, err := create(binPath)
	if err != nil {
		return "", nil, err
	}
	n, err := rec.WriteTo(ctxWriter{ctx, bf})
	if cerr := bf.Close(); err == nil {
		err = cerr
	}
	if err == nil && n != rec.Size() {
		err = fmt.Errorf("wrote %d of %d bytes", n, rec.Size())
	}
	if err != nil {
		return "", nil, fmt.Errorf("sim: writing %s: %w", binPath, err)
	}

	meta := spikeGLXMeta(m, binPath, ig, np2)
	mf, err := create(metaPath)
	if err != nil {
		return "", nil, err
	}
	_, err = mf.WriteString(meta)
	if cerr := mf.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return "", nil, fmt.Errorf("sim: writing %s: %w", metaPath, err)
	}

	if err = os.Rename(tmps[0], binPath); err != nil {
		return "", nil, fmt.Errorf("sim: %w", err)
	}
	tmps[0] = binPath // remove the renamed .bin if the .meta fails
	if err = os.Rename(tmps[1], metaPath); err != nil {
		return "", nil, fmt.Errorf("sim: %w", err)
	}
	return binPath, rec.truth, nil
}

// ctxWriter fails every write once its context is done.
type ctxWriter struct {
	ctx context.Context
	w   io.Writer
}

func (c ctxWriter) Write(b []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.w.Write(b)
}

// isNP2 reports whether p is the NP2 preset's geometry.
func isNP2(p *probe.Probe) bool {
	q := probe.NP2()
	return p.NChanFile == q.NChanFile && slices.Equal(p.X, q.X) && slices.Equal(p.Y, q.Y) &&
		slices.Equal(p.Shank, q.Shank) && slices.Equal(p.ChanMap, q.ChanMap)
}

// isNP1 reports whether p is the NP1 preset's geometry.
func isNP1(p *probe.Probe) bool {
	q := probe.NP1()
	return p.NChanFile == q.NChanFile && slices.Equal(p.X, q.X) && slices.Equal(p.Y, q.Y) &&
		slices.Equal(p.Shank, q.Shank) && slices.Equal(p.ChanMap, q.ChanMap)
}

// spikeGLXMeta returns the text of the .meta (CRLF line ends, keys in
// SpikeGLX's sorted order).
func spikeGLXMeta(m *model, binPath string, gain int, np2 bool) string {
	p := m.probe
	nAP := m.nChan - 1 // rows before the sync row
	fs := m.cfg.SampleRate
	ff := func(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }

	site := make([]int, nAP) // file row → site, −1 if none
	for i := range site {
		site[i] = -1
	}
	for i, r := range p.ChanMap {
		site[r] = i
	}
	nShanks := 0
	for _, s := range p.Shank {
		nShanks = max(nShanks, s+1)
	}

	// The acquired channel of the sync word: after the AP and LF
	// channels of NP1.0, after the AP channels of NP2.0 (no LF band).
	sync, nLF := 2*nAP, nAP
	part, ptype, rangeMax, maxInt := "NP1000", "0", np1RangeMax, np1MaxInt
	if np2 {
		sync, nLF = nAP, 0
		part, ptype, rangeMax, maxInt = "NP2000", "21", np2RangeMax, np2MaxInt
	}
	var imro, chans, geom strings.Builder
	fmt.Fprintf(&imro, "(%s,%d)", ptype, nAP)
	fmt.Fprintf(&chans, "(%d,%d,1)", nAP, nLF)
	fmt.Fprintf(&geom, "(%s,%d,0,70)", part, nShanks)
	for r := range nAP {
		if np2 {
			fmt.Fprintf(&imro, "(%d 1 0 %d)", r, r) // bank 0 (mask 1), external reference, electrode r
		} else {
			fmt.Fprintf(&imro, "(%d 0 0 %d %d 1)", r, gain, np1LFGain)
		}
		fmt.Fprintf(&chans, "(AP%d;%d:%d)", r, r, r)
		if i := site[r]; i >= 0 {
			fmt.Fprintf(&geom, "(%d:%s:%s:1)", p.Shank[i], ff(p.X[i]), ff(p.Y[i]))
		} else {
			geom.WriteString("(0:0:0:0)")
		}
	}
	fmt.Fprintf(&chans, "(SY0;%d:%d)", sync, sync)

	kv := map[string]string{
		"acqApLfSy":         fmt.Sprintf("%d,%d,1", nAP, nLF),
		"appVersion":        metaAppVersion,
		"fileCreateTime":    metaCreateTime,
		"fileName":          filepath.Base(binPath),
		"fileSizeBytes":     strconv.FormatInt(m.samples*int64(m.nChan)*2, 10),
		"fileTimeSecs":      ff(float64(m.samples) / fs),
		"firstSample":       "0",
		"gateMode":          "Immediate",
		"imAiRangeMax":      ff(rangeMax),
		"imAiRangeMin":      ff(-rangeMax),
		"imCalibrated":      "false",
		"imDatPrb_pn":       part,
		"imDatPrb_type":     ptype,
		"imMaxInt":          strconv.Itoa(maxInt),
		"imSampRate":        ff(fs),
		"imStdby":           "",
		"nSavedChans":       strconv.Itoa(m.nChan),
		"snsApLfSy":         fmt.Sprintf("%d,0,1", nAP),
		"snsSaveChanSubset": saveSubset(nAP, sync),
		"syncSourcePeriod":  "1",
		"trigMode":          "Immediate",
		"typeImEnabled":     "1",
		"typeNiEnabled":     "0",
		"typeThis":          "imec",
		"userNotes": fmt.Sprintf("dspk sim v%d: seed %d, %d units, %d spikes, noise SD %g counts, drift %g um/s, probe %s",
			truthVersion, m.cfg.Seed, len(m.units), len(m.times), m.cfg.NoiseSD, m.cfg.DriftUmPerS, p.Name),
		"~imroTbl":     imro.String(),
		"~snsChanMap":  chans.String(),
		"~snsGeomMap":  geom.String(),
		"~snsShankMap": shankMap(p, site, nShanks, np2),
	}
	keys := make([]string, 0, len(kv))
	for k := range kv {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var b strings.Builder
	for _, k := range keys {
		b.WriteString(k)
		b.WriteByte('=')
		b.WriteString(kv[k])
		b.WriteString("\r\n")
	}
	return b.String()
}

// shankMap returns the ~snsShankMap of the .meta: NP2.0's and NP1.0's
// fixed layouts, else each site's rank of x and of y among the distinct
// values of its shank. site maps each of the len(site) file rows before
// the sync row to its site (−1 if none).
func shankMap(p *probe.Probe, site []int, nShanks int, np2 bool) string {
	nAP := len(site)
	var shank strings.Builder
	switch {
	case np2:
		fmt.Fprintf(&shank, "(1,2,640)")
		for r := range nAP {
			fmt.Fprintf(&shank, "(0:%d:%d:1)", r%2, r/2)
		}
	case isNP1(p):
		fmt.Fprintf(&shank, "(1,2,480)")
		for r := range nAP {
			fmt.Fprintf(&shank, "(0:%d:%d:1)", r%2, r/2)
		}
	default:
		// Grid indices: rank of x and of y among the distinct values of the
		// site's shank.
		xs, ys := map[int][]float64{}, map[int][]float64{}
		for i := range p.Len() {
			xs[p.Shank[i]] = append(xs[p.Shank[i]], p.X[i])
			ys[p.Shank[i]] = append(ys[p.Shank[i]], p.Y[i])
		}
		nCols, nRows := 1, 1
		for s := range xs {
			slices.Sort(xs[s])
			xs[s] = slices.Compact(xs[s])
			slices.Sort(ys[s])
			ys[s] = slices.Compact(ys[s])
			nCols, nRows = max(nCols, len(xs[s])), max(nRows, len(ys[s]))
		}
		fmt.Fprintf(&shank, "(%d,%d,%d)", max(nShanks, 1), nCols, nRows)
		for r := range nAP {
			if i := site[r]; i >= 0 {
				s := p.Shank[i]
				col, _ := slices.BinarySearch(xs[s], p.X[i])
				row, _ := slices.BinarySearch(ys[s], p.Y[i])
				fmt.Fprintf(&shank, "(%d:%d:%d:1)", s, col, row)
			} else {
				shank.WriteString("(0:0:0:0)")
			}
		}
	}
	return shank.String()
}

// createTemp creates a new file prefix+random+suffix in dir with mode 0666
// less the umask, the mode the renamed file keeps (os.CreateTemp would
// give 0600, leaving the recording readable by its owner only).
func createTemp(dir, prefix, suffix string) (*os.File, error) {
	for range 100 {
		name := filepath.Join(dir, fmt.Sprintf("%s%08x%s", prefix, rand.Uint32(), suffix))
		f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o666)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		return f, err
	}
	return nil, fmt.Errorf("no free name %s/%sXXXXXXXX%s", dir, prefix, suffix)
}

// saveSubset is snsSaveChanSubset for the AP channels 0…nAP−1 and the
// sync channel's acquired index.
func saveSubset(nAP, sync int) string {
	if sync == nAP {
		return fmt.Sprintf("0:%d", nAP)
	}
	return fmt.Sprintf("0:%d,%d", nAP-1, sync)
}
