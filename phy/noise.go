package phy

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"dspk/export"
	"dspk/pipeline"
	"dspk/probe"
	"dspk/quality"
	"dspk/recording"
)

// recordingScales returns the channel scales of the sites of pr in rec:
// the noise levels of the data preprocessed by cfg
// ([pipeline.NoiseLevels]) and the µV per count where rec knows every
// site's gain (nil otherwise). A recording too short to sample gets nil
// scales and no error.
func recordingScales(rec recording.Recording, pr *probe.Probe, cfg pipeline.Config) (*quality.ChannelScales, error) {
	noise, err := pipeline.NoiseLevels(rec, pr, cfg)
	if errors.Is(err, pipeline.ErrNoiseTooShort) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	sc := &quality.ChannelScales{Noise: noise}
	uv := rec.MicrovoltsPerCount()
	gains := make([]float32, pr.Len())
	for i, row := range pr.ChanMap {
		if row >= len(uv) || !(uv[row] > 0) {
			return sc, nil
		}
		gains[i] = float32(uv[row])
	}
	sc.Gains = gains
	return sc, nil
}

// writeScales writes [quality.NoiseFile] and, where the gains are known,
// [quality.GainFile] of the sort r into dir (nothing for a recording too
// short to sample).
func writeScales(dir string, r *pipeline.SortResult) error {
	sc, err := recordingScales(r.Info.Recording, r.Info.Probe, r.Info.Config)
	if err != nil || sc == nil {
		return err
	}
	if err := export.WriteNPYFile(filepath.Join(dir, quality.NoiseFile), []int{len(sc.Noise)}, sc.Noise); err != nil {
		return fmt.Errorf("phy: %w", err)
	}
	if sc.Gains != nil {
		if err := export.WriteNPYFile(filepath.Join(dir, quality.GainFile), []int{len(sc.Gains)}, sc.Gains); err != nil {
			return fmt.Errorf("phy: %w", err)
		}
	}
	return nil
}

// folderScales returns the channel scales of the sort folder dir when it
// lacks [quality.NoiseFile] (a Kilosort folder, an older dspk one): those
// of the recording at params.py's dat_path, preprocessed by dspk.json's
// settings (Kilosort4's defaults without it), with channel_map.npy's
// sites. Where the folder has the file it returns nil (read with the
// folder); where the recording cannot be read, nil and a note saying
// that the noise levels come from the whitening.
func folderScales(dir string) (*quality.ChannelScales, string) {
	if _, err := os.Stat(filepath.Join(dir, quality.NoiseFile)); err == nil {
		return nil, ""
	}
	sc, err := readFolderScales(dir)
	if err == nil && sc != nil {
		return sc, ""
	}
	why := "the recording is too short to sample"
	if err != nil {
		why = err.Error()
	}
	return nil, fmt.Sprintf("%s: no %s and no readable recording (%s): snr and sd_ratio use the noise levels implied by the whitening, "+
		"which count the spikes and run higher than SpikeInterface's", dir, quality.NoiseFile, why)
}

// readFolderScales opens the recording of the folder dir and measures its
// scales (see folderScales).
func readFolderScales(dir string) (*quality.ChannelScales, error) {
	rec, rows, err := openFolderRecording(dir)
	if err != nil {
		return nil, err
	}
	defer rec.Close()
	pr := &probe.Probe{NChanFile: rec.Channels(), ChanMap: rows, Shank: make([]int, len(rows))}
	cfg := pipeline.DefaultSortConfig()
	if b, err := os.ReadFile(filepath.Join(dir, "dspk.json")); err == nil {
		var prov struct {
			Config json.RawMessage `json:"config"`
		}
		if json.Unmarshal(b, &prov) == nil && prov.Config != nil {
			if err := json.Unmarshal(prov.Config, &cfg); err != nil {
				return nil, fmt.Errorf("dspk.json: config: %w", err)
			}
		}
	}
	if cfg.CARGroups {
		sh, err := export.ReadNPYFile(filepath.Join(dir, "channel_shanks.npy"))
		if err != nil {
			return nil, err
		}
		ids, err := sh.Int64()
		if err != nil || len(ids) != len(rows) {
			return nil, fmt.Errorf("channel_shanks.npy: not one shank per channel")
		}
		for i, s := range ids {
			pr.Shank[i] = int(s)
		}
	}
	return recordingScales(rec, pr, cfg)
}

// openFolderRecording opens the raw recording that the params.py of the
// folder dir names and returns it with each of the sort's channels' row
// in it (channel_map.npy). A folder whose dat_path is preprocessed
// (hp_filtered = True) or not one file is an error.
func openFolderRecording(dir string) (recording.Recording, []int, error) {
	fr, err := quality.ReadFolderRecording(dir)
	if err != nil {
		return nil, nil, err
	}
	if fr.Path == "" {
		return nil, nil, errors.New("params.py names no single dat_path")
	}
	if fr.Filtered {
		return nil, nil, errors.New("params.py's dat_path holds preprocessed data (hp_filtered = True)")
	}
	opts := recording.OpenOptions{Channels: fr.Channels, Rate: fr.SampleRate}
	if fr.DType != "" && fr.DType != "int16" {
		opts.DType = fr.DType
	}
	rec, err := recording.Open(fr.Path, opts)
	if err != nil {
		return nil, nil, err
	}
	cm, err := export.ReadNPYFile(filepath.Join(dir, "channel_map.npy"))
	if err == nil {
		var rows []int64
		if rows, err = cm.Int64(); err != nil {
			err = fmt.Errorf("channel_map.npy: %w", err)
		} else {
			out := make([]int, len(rows))
			for i, r := range rows {
				if r < 0 || int(r) >= rec.Channels() {
					err = fmt.Errorf("channel_map.npy: entry %d is row %d of a file of %d channels", i, r, rec.Channels())
					break
				}
				out[i] = int(r)
			}
			if err == nil {
				return rec, out, nil
			}
		}
	}
	rec.Close()
	return nil, nil, err
}
