package recording

import (
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestSpikeGLXRunFolder opens SpikeGLX run folders as Kilosort4 and
// SpikeInterface take them: the one probe's .ap.bin in the folder or a
// probe folder below, its triggers as one run; several probes, and a
// CatGT file beside its triggers, are refused with the files named; an
// Open Ephys folder still opens its stream, and a folder of neither says
// what it looked for.
func TestSpikeGLXRunFolder(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(3, 4))
	run := t.TempDir()
	probeDir := filepath.Join(run, "run_g0_imec0")
	os.Mkdir(probeDir, 0o755)
	data := randInt16(rng, 60*385)
	bin := writeSpikeGLX(t, probeDir, "Noise_g0_t0.imec0.ap.meta", data, -1)
	// An LF file and the NI-DAQ stream beside it are not the AP band.
	os.WriteFile(filepath.Join(probeDir, "run_g0_t0.imec0.lf.bin"), make([]byte, 770), 0o644)
	os.WriteFile(filepath.Join(probeDir, "run_g0_t0.imec0.lf.meta"), nil, 0o644)
	os.WriteFile(filepath.Join(run, "run_g0_t0.nidq.bin"), make([]byte, 16), 0o644)
	os.WriteFile(filepath.Join(run, "run_g0_t0.nidq.meta"), nil, 0o644)
	for _, dir := range []string{run, probeDir} {
		got, err := FindSpikeGLXRun(dir)
		if err != nil || !slices.Equal(got, []string{bin}) {
			t.Errorf("FindSpikeGLXRun(%s) = %v, %v; want %s", dir, got, err, bin)
		}
		rec, err := OpenFiles([]string{dir}, OpenOptions{})
		if err != nil {
			t.Fatalf("OpenFiles(%s): %v", dir, err)
		}
		if rec.Format() != "spikeglx" || rec.Name() != bin || rec.Samples() != 60 {
			t.Errorf("%s opened as %s %s, %d samples", dir, rec.Format(), rec.Name(), rec.Samples())
		}
		rec.Close()
	}

	// A second trigger of the same probe: both, in trigger order.
	t1 := filepath.Join(probeDir, "run_g0_t1.imec0.ap.bin")
	os.Link(bin, t1)
	os.Link(MetaPath(bin), MetaPath(t1))
	rec, err := Open(run, OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if c, ok := rec.(*Concat); !ok || !slices.Equal(c.Files(), []string{bin, t1}) || rec.Samples() != 120 {
		t.Errorf("two triggers opened as %T, %d samples", rec, rec.Samples())
	}
	rec.Close()

	// A CatGT file beside its triggers is ambiguous.
	cat := filepath.Join(probeDir, "run_g0_tcat.imec0.ap.bin")
	os.Link(bin, cat)
	os.Link(MetaPath(bin), MetaPath(cat))
	if _, err := Open(run, OpenOptions{}); err == nil || !strings.Contains(err.Error(), "CatGT") || !strings.Contains(err.Error(), cat) {
		t.Errorf("CatGT beside triggers: %v", err)
	}
	os.Remove(cat)

	// A second probe: refused, naming both probes and their files.
	other := filepath.Join(run, "run_g0_imec1")
	os.Mkdir(other, 0o755)
	bin1 := filepath.Join(other, "run_g0_t0.imec1.ap.bin")
	os.Link(bin, bin1)
	os.Link(MetaPath(bin), MetaPath(bin1))
	_, err = OpenFiles([]string{run}, OpenOptions{})
	if err == nil {
		t.Fatal("a folder of two probes opened")
	}
	for _, want := range []string{run, "2 probes (imec0, imec1)", bin, bin1, "pick one"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("two probes: %q lacks %q", err, want)
		}
	}
	// Each probe's folder still opens on its own.
	if rec, err := OpenFiles([]string{other}, OpenOptions{}); err != nil || rec.Name() != bin1 {
		t.Errorf("probe folder %s: %v", other, err)
	} else {
		rec.Close()
	}

	// A folder of neither format names both.
	empty := t.TempDir()
	if _, err := Open(empty, OpenOptions{}); err == nil || !strings.Contains(err.Error(), "SpikeGLX") || !strings.Contains(err.Error(), "structure.oebin") {
		t.Errorf("empty folder: %v", err)
	}
}

// TestSpikeGLXFolderOpenEphys checks that an Open Ephys recording folder
// with an .ap.bin copied into it opens its stream: structure.oebin comes
// first.
func TestSpikeGLXFolderOpenEphys(t *testing.T) {
	t.Parallel()
	session, _ := writeSession(t, []int{1}, 0)
	streams, err := FindOpenEphysStreams(session)
	if err != nil {
		t.Fatal(err)
	}
	recDir := filepath.Dir(streams[0].Oebin)
	writeSpikeGLX(t, recDir, "Noise_g0_t0.imec0.ap.meta", make([]int16, 385), -1)
	for _, dir := range []string{session, recDir} {
		rec, err := Open(dir, OpenOptions{})
		if err != nil {
			t.Fatalf("%s: %v", dir, err)
		}
		if rec.Format() != "openephys" {
			t.Errorf("%s opened as %s", dir, rec.Format())
		}
		rec.Close()
	}
}

// TestCheckRate refuses a sample rate typed in kHz, suggesting it in Hz,
// and takes spike-band rates.
func TestCheckRate(t *testing.T) {
	for _, c := range []struct {
		rate float64
		want string
	}{
		{30, "did you mean -rate 30000 (30 kHz)?"},
		{2.5, "did you mean -rate 2500 (2.5 kHz)?"},
		{999, "did you mean -rate 999000"},
		{-30000, "positive"},
		{0, ""}, {1000, ""}, {30000, ""},
	} {
		err := OpenOptions{Rate: c.rate}.CheckRate()
		var oe *OptionError
		if c.want == "" && err != nil || c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)) {
			t.Errorf("rate %g: %v, want %q", c.rate, err, c.want)
		} else if err != nil && !errors.As(err, &oe) {
			t.Errorf("rate %g: %T is not an *OptionError", c.rate, err)
		}
	}
	path := filepath.Join(t.TempDir(), "data.dat")
	writeInt16(t, path, make([]int16, 12))
	if _, err := OpenFiles([]string{path}, OpenOptions{Channels: 4, Rate: 30}); err == nil || !strings.Contains(err.Error(), "30000") {
		t.Errorf("OpenFiles with rate 30: %v", err)
	}
}

func TestReadPaths(t *testing.T) {
	got, err := ReadPaths(strings.NewReader("  a.ap.bin \n\n b/c d.bin\r\n\t\n"))
	if err != nil || !slices.Equal(got, []string{"a.ap.bin", "b/c d.bin"}) {
		t.Errorf("ReadPaths = %q, %v", got, err)
	}
	if got, err := ReadPaths(strings.NewReader("\n \n")); err != nil || len(got) != 0 {
		t.Errorf("ReadPaths of blank lines = %q, %v", got, err)
	}
}
