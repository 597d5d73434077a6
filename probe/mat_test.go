package probe

import (
	"bytes"
	"compress/zlib"
	"encoding/binary"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// matVar is one variable of a test MAT-file: a numeric array stored with
// data type typ (MATLAB stores doubles of small integers as miUINT8) and
// class class, or a char array when text is set.
type matVar struct {
	name    string
	class   uint32
	typ     uint32
	logical bool
	dims    []int32
	vals    []float64
	text    string
}

// matElement returns a tagged, padded element.
func matElement(bo binary.ByteOrder, typ uint32, payload []byte) []byte {
	var b bytes.Buffer
	if len(payload) <= 4 && typ != miMATRIX && typ != miCOMPRESSED {
		var w [8]byte
		bo.PutUint32(w[:], uint32(len(payload))<<16|typ)
		copy(w[4:], payload)
		return w[:]
	}
	binary.Write(&b, bo, typ)
	binary.Write(&b, bo, uint32(len(payload)))
	b.Write(payload)
	for typ != miCOMPRESSED && b.Len()%8 != 0 {
		b.WriteByte(0)
	}
	return b.Bytes()
}

func (v matVar) encode(bo binary.ByteOrder) []byte {
	var flags [8]byte
	class := v.class
	if v.text != "" {
		class = 4 // mxCHAR
	}
	f := class
	if v.logical {
		f |= 0x0200
	}
	bo.PutUint32(flags[:], f)
	var dims bytes.Buffer
	binary.Write(&dims, bo, v.dims)
	var data []byte
	if v.text != "" {
		var d bytes.Buffer
		for _, r := range v.text {
			binary.Write(&d, bo, uint16(r))
		}
		data = matElement(bo, miUINT16, d.Bytes())
	} else {
		var d bytes.Buffer
		for _, x := range v.vals {
			switch v.typ {
			case miDOUBLE:
				binary.Write(&d, bo, x)
			case miSINGLE:
				binary.Write(&d, bo, float32(x))
			case miUINT8:
				d.WriteByte(uint8(x))
			case miINT16:
				binary.Write(&d, bo, int16(x))
			case miINT32:
				binary.Write(&d, bo, int32(x))
			}
		}
		data = matElement(bo, v.typ, d.Bytes())
	}
	var m bytes.Buffer
	m.Write(matElement(bo, miUINT32, flags[:]))
	m.Write(matElement(bo, miINT32, dims.Bytes()))
	m.Write(matElement(bo, miINT8, []byte(v.name)))
	m.Write(data)
	return matElement(bo, miMATRIX, m.Bytes())
}

// matFile writes a level-5 MAT-file of vars, each element zlib-compressed
// (MATLAB's default since v7) if compress.
func matFile(bo binary.ByteOrder, compress bool, vars ...matVar) []byte {
	var b bytes.Buffer
	hdr := make([]byte, 128)
	copy(hdr, "MATLAB 5.0 MAT-file, Platform: GLNXA64, Created on: Tue Dec  1 20:00:00 2026")
	for i := 76; i < 116; i++ {
		hdr[i] = ' '
	}
	bo.PutUint16(hdr[124:], 0x0100)
	bo.PutUint16(hdr[126:], 'M'<<8|'I')
	b.Write(hdr)
	for _, v := range vars {
		e := v.encode(bo)
		if compress {
			var z bytes.Buffer
			w := zlib.NewWriter(&z)
			w.Write(e)
			w.Close()
			e = matElement(bo, miCOMPRESSED, z.Bytes())
		}
		b.Write(e)
	}
	return b.Bytes()
}

// ksMatVars is a Kilosort-style 6-channel map of two tetrode-like groups
// in a file of 8 channels, channel 5 (1-based 6) disconnected.
func ksMatVars() []matVar {
	col := func(n int) []int32 { return []int32{int32(n), 1} }
	return []matVar{
		{name: "chanMap", class: mxDOUBLE, typ: miUINT8, dims: col(6), vals: []float64{1, 2, 3, 5, 6, 8}},
		{name: "chanMap0ind", class: mxDOUBLE, typ: miUINT8, dims: col(6), vals: []float64{0, 1, 2, 4, 5, 7}},
		{name: "connected", class: 9, typ: miUINT8, logical: true, dims: col(6), vals: []float64{1, 1, 1, 1, 0, 1}},
		{name: "xcoords", class: mxDOUBLE, typ: miDOUBLE, dims: []int32{1, 6}, vals: []float64{0, 20.5, 0, 250, 270, 250}},
		{name: "ycoords", class: mxDOUBLE, typ: miINT16, dims: col(6), vals: []float64{0, 0, -20, 0, 0, 20}},
		{name: "kcoords", class: mxDOUBLE, typ: miUINT8, dims: col(6), vals: []float64{1, 1, 1, 2, 2, 2}},
		{name: "fs", class: mxDOUBLE, typ: miINT32, dims: []int32{1, 1}, vals: []float64{30000}},
		{name: "name", text: "two groups", dims: []int32{1, 10}},
	}
}

func TestParseKilosortMat(t *testing.T) {
	for _, tc := range []struct {
		name     string
		bo       binary.ByteOrder
		compress bool
	}{{"compressed", binary.LittleEndian, true}, {"plain", binary.LittleEndian, false}, {"big-endian", binary.BigEndian, false}} {
		t.Run(tc.name, func(t *testing.T) {
			data := matFile(tc.bo, tc.compress, ksMatVars()...)
			p, err := ParseKilosortMat(data, "map.mat")
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(p.ChanMap, []int{0, 1, 2, 4, 7}) || !slices.Equal(p.X, []float64{0, 20.5, 0, 250, 250}) ||
				!slices.Equal(p.Y, []float64{0, 0, -20, 0, 20}) || !slices.Equal(p.Shank, []int{1, 1, 1, 2, 2}) || p.NChanFile != 8 || p.Name != "map.mat" {
				t.Errorf("%+v", p)
			}
			// Through Load, by extension and by content.
			dir := t.TempDir()
			for _, name := range []string{"map.mat", "chanmap.bin"} {
				path := filepath.Join(dir, name)
				os.WriteFile(path, data, 0o644)
				q, err := Load(path)
				if err != nil || !slices.Equal(q.ChanMap, p.ChanMap) {
					t.Errorf("Load(%s): %v", name, err)
				}
			}
		})
	}
	// Without chanMap, chanMap0ind; without connected, every channel.
	vars := ksMatVars()
	p, err := ParseKilosortMat(matFile(binary.LittleEndian, true, vars[1], vars[3], vars[4]), "m0.mat")
	if err != nil || !slices.Equal(p.ChanMap, []int{0, 1, 2, 4, 5, 7}) || !slices.Equal(p.Shank, make([]int, 6)) {
		t.Errorf("chanMap0ind: %+v %v", p, err)
	}
}

func TestParseKilosortMatErrors(t *testing.T) {
	v := ksMatVars()
	le := binary.LittleEndian
	bad := func(i int, f func(*matVar)) []byte {
		vars := ksMatVars()
		f(&vars[i])
		if i == 0 { // a changed chanMap without the chanMap0ind that contradicts it
			vars = slices.Delete(vars, 1, 2)
		}
		return matFile(le, true, vars...)
	}
	good := matFile(le, false, v...)
	v73 := slices.Clone(good)
	copy(v73, "MATLAB 7.3 MAT-file")
	le.PutUint16(v73[124:], 0x0200)
	for name, tc := range map[string]struct {
		data []byte
		msg  string
	}{
		"short":          {good[:100], "header"},
		"v7.3":           {v73, "-v7.3"},
		"not MAT":        {append([]byte("MATLAB 4"), make([]byte, 200)...), "level-5"},
		"truncated":      {good[:len(good)-30], "byte"},
		"no chanMap":     {matFile(le, false, v[3], v[4]), "no chanMap"},
		"no ycoords":     {matFile(le, false, v[0], v[3]), "ycoords"},
		"lengths":        {bad(3, func(m *matVar) { m.vals = m.vals[:5]; m.dims = []int32{1, 5} }), "5 xcoords"},
		"zero-based map": {bad(0, func(m *matVar) { m.vals[0] = 0 }), "chanMap[0]"},
		"0ind mismatch":  {bad(1, func(m *matVar) { m.vals[2] = 9 }), "chanMap0ind"},
		"fractional k":   {bad(5, func(m *matVar) { m.typ = miDOUBLE; m.vals[0] = 1.5 }), "kcoords[0]"},
		"duplicate row":  {bad(0, func(m *matVar) { m.vals[1] = 1 }), "both map"},
		"NaN x":          {bad(3, func(m *matVar) { m.vals[0] = math.NaN() }), "non-finite"},
		"none connected": {bad(2, func(m *matVar) { clear(m.vals) }), "no connected"},
		"dims":           {bad(3, func(m *matVar) { m.dims = []int32{2, 6} }), "dimensions"},
		"bad zlib":       {append(slices.Clone(good[:128]), matElement(le, miCOMPRESSED, []byte{1, 2, 3, 4, 5})...), "compressed"},
	} {
		if _, err := ParseKilosortMat(tc.data, "bad.mat"); err == nil || !strings.Contains(err.Error(), tc.msg) || !strings.Contains(err.Error(), "bad.mat") {
			t.Errorf("%s: %v", name, err)
		}
	}
	if _, err := Parse([]byte("channel_groups = {0: {'channels': [0, 1]}}"), "tetrode.prb"); err == nil ||
		!strings.Contains(err.Error(), "Python") || !strings.Contains(err.Error(), "probeinterface") {
		t.Errorf(".prb: %v", err)
	}
}

func FuzzParseKilosortMat(f *testing.F) {
	f.Add(matFile(binary.LittleEndian, true, ksMatVars()...))
	f.Add(matFile(binary.BigEndian, false, ksMatVars()...))
	f.Add(matFile(binary.LittleEndian, false, ksMatVars()[:2]...))
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := ParseKilosortMat(data, "fuzz.mat")
		if err != nil {
			if !strings.Contains(err.Error(), "fuzz.mat") {
				t.Fatalf("error without the file name: %v", err)
			}
			return
		}
		if err := p.Validate(); err != nil {
			t.Fatalf("invalid probe returned: %v", err)
		}
	})
}

// TestLoadIndexAndForFile: FILE.json:N picks probe N of a probe group,
// and a 384-contact probe fits a 385-channel file.
func TestLoadIndexAndForFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "group.json")
	contacts := func(n, first int) string {
		var pos, dci []string
		for i := range n {
			pos = append(pos, "["+itoa(i%2*32)+", "+itoa(i/2*20)+"]")
			dci = append(dci, itoa(first+i))
		}
		return `{"ndim": 2, "si_units": "um", "contact_positions": [` + strings.Join(pos, ", ") +
			`], "device_channel_indices": [` + strings.Join(dci, ", ") + `]}`
	}
	doc := `{"specification": "probeinterface", "version": "0.2.21", "probes": [` + contacts(384, 0) + `, ` + contacts(4, 384) + `]}`
	os.WriteFile(path, []byte(doc), 0o644)
	if _, err := Load(path); err == nil || !strings.Contains(err.Error(), path+":N") {
		t.Errorf("two probes without an index: %v", err)
	}
	p0, err := Load(path + ":0")
	if err != nil || p0.Len() != 384 || p0.NChanFile != 384 {
		t.Fatalf("probe 0: %v", err)
	}
	p1, err := Load(path + ":1")
	if err != nil || p1.Len() != 4 || p1.ChanMap[0] != 384 {
		t.Fatalf("probe 1: %+v %v", p1, err)
	}
	if _, err := Load(path + ":2"); err == nil || !strings.Contains(err.Error(), "no probe 2") {
		t.Errorf("probe 2: %v", err)
	}
	// 384 contacts on a 385-channel file: row 384 (sync) ignored.
	q, err := p0.ForFile(385, "run.ap.bin")
	if err != nil || q.NChanFile != 385 || q.Len() != 384 || p0.NChanFile != 384 {
		t.Errorf("ForFile(385): %+v %v", q, err)
	}
	if _, err := p1.ForFile(384, "run.ap.bin"); err == nil || !strings.Contains(err.Error(), "channel 384") {
		t.Errorf("a row the file lacks: %v", err)
	}
	// A Kilosort JSON of n_chan 384 on a 385-channel file.
	ks := filepath.Join(dir, "ks.json")
	os.WriteFile(ks, []byte(`{"chanMap": [0, 1, 2], "xc": [0, 32, 0], "yc": [0, 0, 20], "kcoords": [0, 0, 0], "n_chan": 384}`), 0o644)
	k, err := Load(ks)
	if err == nil {
		k, err = k.ForFile(385, "run.ap.bin")
	}
	if err != nil || k.NChanFile != 385 {
		t.Errorf("Kilosort JSON: %v", err)
	}
	if _, err := Load(ks + ":1"); err == nil || !strings.Contains(err.Error(), "probeinterface") {
		t.Errorf("index into a Kilosort JSON: %v", err)
	}
}

func itoa(i int) string { return strconv.Itoa(i) }
