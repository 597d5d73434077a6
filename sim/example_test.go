package sim_test

import (
	"fmt"
	"log"
	"os"
	"path/filepath"

	"dspk/sim"
)

func ExampleGenerate() {
	cfg := sim.DefaultConfig() // 120 units on a Neuropixels 1.0 probe
	cfg.Seconds = 2
	rec, err := sim.Generate(cfg)
	if err != nil {
		log.Fatal(err)
	}
	defer rec.Close()

	// Random access, as from a file: samples 1000…1099 of all channels.
	buf := make([]int16, 100*rec.Channels())
	if err := rec.ReadInt16(buf, 1000, 100); err != nil {
		log.Fatal(err)
	}
	fmt.Println(rec.Channels(), "channels,", rec.Samples(), "samples at", rec.SampleRate(), "Hz,", rec.Probe().Len(), "sites")

	tr := rec.Truth()
	fmt.Println(tr.Units(), "units; waveforms of", len(tr.UnitWaveform[0]), "samples with the trough at", tr.TroughIndex)
	// Output:
	// 385 channels, 60000 samples at 30000 Hz, 384 sites
	// 120 units; waveforms of 61 samples with the trough at 20
}

func ExampleWriteSpikeGLX() {
	dir, err := os.MkdirTemp("", "sim")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)

	cfg := sim.DefaultConfig()
	cfg.Seconds = 0.5
	bin, truth, err := sim.WriteSpikeGLX(dir, "demo_g0_t0", cfg)
	if err != nil {
		log.Fatal(err)
	}
	if err := truth.WriteDir(dir); err != nil {
		log.Fatal(err)
	}
	st, _ := os.Stat(bin)
	fmt.Println(filepath.Base(bin), st.Size(), "bytes")
	names, _ := filepath.Glob(filepath.Join(dir, "*"))
	for _, n := range names {
		fmt.Println(filepath.Base(n))
	}
	// Output:
	// demo_g0_t0.imec0.ap.bin 11550000 bytes
	// demo_g0_t0.imec0.ap.bin
	// demo_g0_t0.imec0.ap.meta
	// spike_clusters.npy
	// spike_times.npy
	// truth.json
	// unit_amplitudes.npy
	// unit_peak_channel.npy
	// unit_positions.npy
	// unit_waveforms.npy
}
