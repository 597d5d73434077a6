package recording

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// OpenOptions holds what [Open] cannot learn from the files themselves.
type OpenOptions struct {
	// Channels is the number of interleaved channels of a raw file. For
	// other formats a non-zero value must match the file's own count.
	Channels int
	// Rate is the sample rate of a raw file in Hz. For other formats a
	// non-zero value must match the file's own rate.
	Rate float64
	// Stream picks the Open Ephys continuous stream (folder_name or
	// stream_name); "" means the first.
	Stream string
}

// Open opens the recording at path, choosing the reader from the path:
//
//   - a .bin with a sibling .meta (e.g. run_g0_t0.imec0.ap.bin and
//     run_g0_t0.imec0.ap.meta): SpikeGLX;
//   - a structure.oebin (or any .oebin), a folder holding one, or a
//     continuous/<stream>/continuous.dat below one: Open Ephys binary;
//   - another .bin, .dat or .raw: headerless int16, which needs
//     opts.Channels and opts.Rate, or an info.json next to it
//     ({"sample_rate": 15000.0, "shape": [-1, 4], "dtype": "int16"}).
//
// The file size is validated before Open returns.
func Open(path string, opts OpenOptions) (Recording, error) {
	rec, err := open(path, opts)
	if err != nil {
		return nil, err
	}
	if opts.Channels != 0 && rec.Format() != "raw" && opts.Channels != rec.Channels() {
		rec.Close()
		return nil, fmt.Errorf("recording: %s: %d channels were given but the %s files state %d", path, opts.Channels, rec.Format(), rec.Channels())
	}
	if opts.Rate != 0 && rec.Format() != "raw" && opts.Rate != rec.SampleRate() {
		rec.Close()
		return nil, fmt.Errorf("recording: %s: a rate of %g Hz was given but the %s files state %g Hz", path, opts.Rate, rec.Format(), rec.SampleRate())
	}
	return rec, nil
}

func open(path string, opts OpenOptions) (Recording, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("recording: %w", err)
	}
	if st.IsDir() {
		if _, err := os.Stat(filepath.Join(path, "structure.oebin")); err == nil {
			return OpenOpenEphysStream(path, opts.Stream)
		}
		return nil, fmt.Errorf("recording: %s is a folder without a structure.oebin; give the data file itself", path)
	}
	base := filepath.Base(path)
	ext := strings.ToLower(filepath.Ext(path))
	switch {
	case ext == ".oebin":
		return OpenOpenEphysStream(path, opts.Stream)
	case ext == ".meta":
		return nil, fmt.Errorf("recording: %s is a SpikeGLX meta file; give the .bin next to it", path)
	case ext == ".bin" && exists(MetaPath(path)):
		return OpenSpikeGLX(path)
	case base == "continuous.dat":
		oebin := filepath.Join(filepath.Dir(path), "..", "..", "structure.oebin")
		if exists(oebin) {
			stream := opts.Stream
			if stream == "" {
				stream = filepath.Base(filepath.Dir(path))
			}
			return OpenOpenEphysStream(oebin, stream)
		}
	}
	switch ext {
	case ".bin", ".dat", ".raw":
	default:
		return nil, fmt.Errorf("recording: %s: unknown format (want a SpikeGLX .bin with its .meta, an Open Ephys structure.oebin, or a raw .bin/.dat/.raw)", path)
	}
	ch, rate := opts.Channels, opts.Rate
	info := rawInfoPath(path)
	if exists(info) {
		ich, irate, err := readRawInfo(info)
		if err != nil {
			return nil, err
		}
		if ch != 0 && ch != ich {
			return nil, fmt.Errorf("recording: %s: %d channels were given but %s states %d", path, ch, info, ich)
		}
		if rate != 0 && rate != irate {
			return nil, fmt.Errorf("recording: %s: a rate of %g Hz was given but %s states %g Hz", path, rate, info, irate)
		}
		ch, rate = ich, irate
	}
	if ch == 0 || rate == 0 {
		var missing []string
		if ch == 0 {
			missing = append(missing, "--channels")
		}
		if rate == 0 {
			missing = append(missing, "--rate")
		}
		return nil, fmt.Errorf("recording: %s is a raw int16 file without a SpikeGLX .meta or info.json: give %s", path, strings.Join(missing, " and "))
	}
	return OpenRaw(path, ch, rate)
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return !errors.Is(err, os.ErrNotExist)
}
