package recording

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"dspk/export"
)

// MinSpikeRate is the lowest sample rate, in Hz, of a stream dspk takes
// for spike detection without being asked: LFP streams (2 500 Hz) are
// below it.
const MinSpikeRate = 10000

var (
	expDir = regexp.MustCompile(`^experiment\d+$`)
	recDir = regexp.MustCompile(`^recording\d+$`)
)

// OEStream is one continuous stream of an Open Ephys binary recording
// found by [FindOpenEphysStreams].
type OEStream struct {
	// Oebin is the structure.oebin path.
	Oebin string
	// Node, Experiment and Recording are the folder names above the
	// oebin ("Record Node 101", "experiment1", "recording1") when it sits
	// in the layout the GUI writes; all "" otherwise.
	Node, Experiment, Recording string
	// Stream is the stream's description.
	Stream OebinStream
}

// Name is the stream's name as neo writes it, "Record Node
// 101#Neuropix-PXI-100.ProbeA-AP", or its folder name outside the GUI's
// layout.
func (s OEStream) Name() string {
	if s.Node == "" {
		return s.Stream.Folder()
	}
	return s.Node + "#" + s.Stream.Folder()
}

// FullName is Name with the experiment and recording:
// "Record Node 101/experiment1/recording1#Neuropix-PXI-100.ProbeA-AP".
func (s OEStream) FullName() string {
	if s.Node == "" {
		return s.Stream.Folder()
	}
	return s.Node + "/" + s.Experiment + "/" + s.Recording + "#" + s.Stream.Folder()
}

// maxOebinDepth is how far below the given folder structure.oebin files
// are looked for: session/Record Node/experiment/recording.
const maxOebinDepth = 3

// FindOpenEphysStreams lists every continuous stream under path: a
// structure.oebin file, or a folder that holds one (a recording folder),
// or a folder up to three levels above (experiment, Record Node,
// session). Streams come in path order (recording2 before recording10),
// then in oebin order. It is an error if none is found or an oebin is
// malformed.
func FindOpenEphysStreams(path string) ([]OEStream, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("recording: %w", err)
	}
	var oebins []string
	switch {
	case !st.IsDir():
		oebins = []string{path}
	case exists(filepath.Join(path, "structure.oebin")):
		oebins = []string{filepath.Join(path, "structure.oebin")}
	default:
		root := filepath.Clean(path)
		err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				if p == root {
					return err
				}
				return nil
			}
			if d.IsDir() {
				if p != root && (strings.Count(p[len(root):], string(filepath.Separator)) > maxOebinDepth ||
					d.Name() == "continuous" || d.Name() == "events" || d.Name() == "spikes") {
					return filepath.SkipDir
				}
				return nil
			}
			if d.Name() == "structure.oebin" {
				oebins = append(oebins, p)
			}
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("recording: %w", err)
		}
		if len(oebins) == 0 {
			return nil, fmt.Errorf("recording: %s: no structure.oebin in it or up to %d folders below, and no SpikeGLX .ap.bin with its .meta in it or a folder below (want a SpikeGLX run folder, an Open Ephys session, Record Node, experiment or recording folder, or a data file)", path, maxOebinDepth)
		}
		slices.SortFunc(oebins, naturalCompare)
	}
	var out []OEStream
	for _, ob := range oebins {
		f, err := os.Open(ob)
		if err != nil {
			return nil, fmt.Errorf("recording: %w", err)
		}
		o, err := ParseOebin(f, ob)
		f.Close()
		if err != nil {
			return nil, err
		}
		if len(o.Continuous) == 0 && len(oebins) == 1 {
			return nil, fmt.Errorf("recording: %s: no continuous streams", ob)
		}
		rec := filepath.Dir(ob)
		exp := filepath.Dir(rec)
		node := filepath.Dir(exp)
		id := OEStream{Oebin: ob}
		if recDir.MatchString(filepath.Base(rec)) && expDir.MatchString(filepath.Base(exp)) {
			id.Node, id.Experiment, id.Recording = filepath.Base(node), filepath.Base(exp), filepath.Base(rec)
		}
		for _, s := range o.Continuous {
			id.Stream = s
			out = append(out, id)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("recording: %s: no continuous streams", path)
	}
	return out, nil
}

// SelectOpenEphysStream picks one of streams (found under path, which
// errors name):
//
//   - want "": the only stream at MinSpikeRate or more (an LFP stream
//     is not taken unasked when there are others), or the only stream;
//     otherwise an error that lists the streams;
//   - otherwise the stream whose FullName, Name, folder name or
//     stream_name equals want (a trailing '/' ignored), else the only one
//     whose FullName or Name contains want ("ProbeA-AP",
//     "recording2#…"); an ambiguous or unmatched want is an error that
//     lists the streams.
func SelectOpenEphysStream(streams []OEStream, want, path string) (OEStream, error) {
	list := func(ss []OEStream) string {
		var b strings.Builder
		for _, s := range ss {
			fmt.Fprintf(&b, "\n  %s (%d ch, %g Hz)", s.FullName(), s.Stream.NumChannels, s.Stream.SampleRate)
		}
		return b.String()
	}
	if want == "" {
		var spike []OEStream
		for _, s := range streams {
			if s.Stream.SampleRate >= MinSpikeRate {
				spike = append(spike, s)
			}
		}
		switch len(spike) {
		case 1:
			return spike[0], nil
		case 0:
			if len(streams) == 1 {
				return streams[0], nil // detection refuses it (CheckSpikeBand); info describes it
			}
			return OEStream{}, fmt.Errorf("recording: %s: no stream at a spike-band rate (≥ %d Hz); choose one with -stream:%s", path, MinSpikeRate, list(streams))
		}
		return OEStream{}, fmt.Errorf("recording: %s: %d streams at a spike-band rate; choose one with -stream (a unique part of the name, e.g. ProbeA-AP):%s", path, len(spike), list(spike))
	}
	w := strings.TrimRight(want, `/\`)
	var exact, part []OEStream
	for _, s := range streams {
		if w == s.FullName() || w == s.Name() || w == s.Stream.Folder() || (s.Stream.StreamName != "" && w == s.Stream.StreamName) {
			exact = append(exact, s)
		} else if strings.Contains(s.FullName(), w) || strings.Contains(s.Name(), w) {
			part = append(part, s)
		}
	}
	if len(exact) == 0 {
		exact = part
	}
	switch len(exact) {
	case 1:
		return exact[0], nil
	case 0:
		return OEStream{}, fmt.Errorf("recording: %s: no continuous stream %q; the streams are:%s", path, want, list(streams))
	}
	return OEStream{}, fmt.Errorf("recording: %s: %d streams match %q; give more of the name (or the recording folder):%s", path, len(exact), want, list(exact))
}

// naturalCompare orders paths with digit runs compared as numbers.
func naturalCompare(a, b string) int {
	for a != "" && b != "" {
		da, db := digitRun(a), digitRun(b)
		if da > 0 && db > 0 {
			na, nb := strings.TrimLeft(a[:da], "0"), strings.TrimLeft(b[:db], "0")
			if len(na) != len(nb) {
				return len(na) - len(nb)
			}
			if c := strings.Compare(na, nb); c != 0 {
				return c
			}
			a, b = a[da:], b[db:]
			continue
		}
		if a[0] != b[0] {
			return int(a[0]) - int(b[0])
		}
		a, b = a[1:], b[1:]
	}
	return len(a) - len(b)
}

func digitRun(s string) int {
	i := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	return i
}

// readFirstInt64 returns the first value and the length of a 1-D int64
// .npy file (Open Ephys's sample_numbers.npy).
func readFirstInt64(path string) (first, n int64, err error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, 0, fmt.Errorf("recording: %w", err)
	}
	defer f.Close()
	descr, fortran, shape, err := export.ReadNPYHeader(f)
	if err != nil {
		return 0, 0, fmt.Errorf("recording: %s: %w", path, err)
	}
	if descr != "<i8" || fortran || len(shape) != 1 {
		return 0, 0, fmt.Errorf("recording: %s: dtype %s shape %v: want a 1-D little-endian int64 array", path, descr, shape)
	}
	if shape[0] == 0 {
		return 0, 0, nil
	}
	var v int64
	if err := binary.Read(f, binary.LittleEndian, &v); err != nil {
		if errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		return 0, 0, fmt.Errorf("recording: %s: %w", path, err)
	}
	return v, int64(shape[0]), nil
}
