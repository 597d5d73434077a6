package sim

import (
	"math"
	"math/rand/v2"
)

// parts selects the components a render adds (tests render them alone).
type parts uint8

const (
	partNoise parts = 1 << iota
	partCommon
	partOffsets
	partSpikes
	partSync
	partAll = partNoise | partCommon | partOffsets | partSpikes | partSync
)

// workspace holds one goroutine's scratch buffers for render.
type workspace struct {
	buf   []float32 // ChunkSamples × nSites: the chunk being built
	white []float32 // (ChunkSamples+1) × nSites: white noise, row 0 the row before the chunk
	cm    []float64 // ChunkSamples common-mode normals
	prev  []float32 // smoothed noise of the row before the chunk
	cmv   []float32 // ChunkSamples common-mode values
	zeros []float32 // nSites zeros
	gain  []float32 // per-spike footprint under drift
}

func (m *model) newWorkspace() *workspace {
	return &workspace{
		buf:   make([]float32, ChunkSamples*m.nSites),
		white: make([]float32, (ChunkSamples+1)*m.nSites),
		cm:    make([]float64, ChunkSamples),
		prev:  make([]float32, m.nSites),
		cmv:   make([]float32, ChunkSamples),
		zeros: make([]float32, m.nSites),
		gain:  make([]float32, m.nSites),
	}
}

// smooth sets the rows of dst (nSites wide) to the spatial noise kernel
// applied to the rows of src, eight rows at a time so that each kernel
// weight and index is loaded once per eight products.
func (m *model) smooth(dst, src []float32) {
	nS := m.nSites
	rows := len(dst) / nS
	kIdx, kW := m.kIdx, m.kW
	t := 0
	for ; t+8 <= rows; t += 8 {
		e := src[t*nS : (t+8)*nS]
		e0, e1, e2, e3 := e[:nS], e[nS:2*nS], e[2*nS:3*nS], e[3*nS:4*nS]
		e4, e5, e6, e7 := e[4*nS:5*nS], e[5*nS:6*nS], e[6*nS:7*nS], e[7*nS:]
		d := dst[t*nS : (t+8)*nS]
		for c := range nS {
			a, b := m.kStart[c], m.kStart[c+1]
			w := kW[a:b]
			var v0, v1, v2, v3, v4, v5, v6, v7 float32
			for k, j := range kIdx[a:b] {
				wk := w[k]
				v0 += wk * e0[j]
				v1 += wk * e1[j]
				v2 += wk * e2[j]
				v3 += wk * e3[j]
				v4 += wk * e4[j]
				v5 += wk * e5[j]
				v6 += wk * e6[j]
				v7 += wk * e7[j]
			}
			d[c], d[nS+c], d[2*nS+c], d[3*nS+c] = v0, v1, v2, v3
			d[4*nS+c], d[5*nS+c], d[6*nS+c], d[7*nS+c] = v4, v5, v6, v7
		}
	}
	for ; t < rows; t++ {
		e := src[t*nS : (t+1)*nS]
		d := dst[t*nS : (t+1)*nS]
		for c := range nS {
			a, b := m.kStart[c], m.kStart[c+1]
			w := kW[a:b]
			var v float32
			for k, j := range kIdx[a:b] {
				v += w[k] * e[j]
			}
			d[c] = v
		}
	}
}

// The noise stream of chunk k draws, per row, nSites site normals and then
// one common-mode normal: first for the chunk's last row, then for its
// other rows in order. The row before the chunk is thus the first nSites
// draws of stream k−1 and costs nothing to reproduce.

// render writes chunk k, interleaved as stored (ChunkSamples or fewer rows
// of nChan values), into dst, adding only the parts in p.
func (m *model) render(k int64, dst []int16, ws *workspace, p parts) {
	start, end := m.chunkBounds(k)
	n := int(end - start)
	nS := m.nSites
	buf := ws.buf[:n*nS]
	m.addBackground(k, buf, n, ws, p)
	if p&partSpikes != 0 {
		m.addSpikes(start, end, buf, ws)
	}

	dst = dst[:n*m.nChan]
	if m.syncRow >= 0 || len(m.siteRow) != m.nChan {
		clear(dst)
	}
	for t := range n {
		row := buf[t*nS : (t+1)*nS]
		out := dst[t*m.nChan : (t+1)*m.nChan]
		for c, r := range m.siteRow {
			out[r] = toInt16(row[c])
		}
	}
	if p&partSync != 0 && m.syncRow >= 0 {
		for t := range n {
			dst[t*m.nChan+m.syncRow] = m.sync(start + int64(t))
		}
	}
}

// whiteNoise fills white with the site normals of the row before chunk k
// and of its n rows, and cm with the chunk's common-mode normals.
func (m *model) whiteNoise(k int64, white []float32, cm []float64, n int) {
	nS := m.nSites
	normals(newRand(m.cfg.Seed, kindNoise, uint64(k-1)), white[:nS])
	r := newRand(m.cfg.Seed, kindNoise, uint64(k))
	normals(r, white[n*nS:(n+1)*nS])
	cm[n-1] = r.NormFloat64()
	for t := range n - 1 {
		normals(r, white[(t+1)*nS:(t+2)*nS])
		cm[t] = r.NormFloat64()
	}
}

// normals fills e with standard normal draws from r.
func normals(r *rand.Rand, e []float32) {
	for i := range e {
		e[i] = float32(r.NormFloat64())
	}
}

// addBackground sets buf to the local noise, common mode and offsets of
// chunk k (those of them in p).
func (m *model) addBackground(k int64, buf []float32, n int, ws *workspace, p parts) {
	nS := m.nSites
	start, _ := m.chunkBounds(k)
	cfg := m.cfg

	// Per-row common-mode values and per-site offsets, zero when left out.
	cmv := ws.cmv[:n]
	clear(cmv)
	if p&(partNoise|partCommon) != 0 {
		m.whiteNoise(k, ws.white[:(n+1)*nS], ws.cm[:n], n)
	}
	if p&partCommon != 0 {
		w := 2 * math.Pi * cfg.CommonModeHz / cfg.SampleRate
		for t := range cmv {
			cmv[t] = float32(cfg.CommonModeSD*ws.cm[t] +
				cfg.CommonModeSine*math.Sin(w*float64(start+int64(t))+m.cmPhase))
		}
	}
	off := ws.zeros
	if p&partOffsets != 0 {
		off = m.offsets
	}

	if p&partNoise == 0 {
		for t := range n {
			row := buf[t*nS : (t+1)*nS]
			for c := range row {
				row[c] = cmv[t] + off[c]
			}
		}
		return
	}
	// Row t of buf = s(start+t) = K·white(t); prev = s(start−1). Then,
	// backwards in place, row t = g·(s(t) + a·s(t−1)) + cm(t) + offset.
	white := ws.white[:(n+1)*nS]
	m.smooth(buf, white[nS:])
	prev := ws.prev
	m.smooth(prev, white[:nS])
	g, a := m.noiseGain, float32(noiseColour)
	for t := n - 1; t >= 0; t-- {
		row := buf[t*nS : (t+1)*nS]
		before := prev
		if t > 0 {
			before = buf[(t-1)*nS : t*nS]
		}
		before = before[:len(row)]
		off := off[:len(row)]
		v := cmv[t]
		for c := range row {
			row[c] = g*(row[c]+a*before[c]) + (v + off[c])
		}
	}
}

// addSpikes adds the waveforms overlapping samples [start, end) to buf.
func (m *model) addSpikes(start, end int64, buf []float32, ws *workspace) {
	nS := m.nSites
	lo, hi := m.spikeRange(start, end)
	moves := m.motion.moves
	for s := lo; s < hi; s++ {
		ts := m.times[s]
		u := &m.units[m.clusters[s]]
		g := u.gain
		switch {
		case moves:
			y := m.unitY(u, ts)
			sc := u.scale
			if m.scales != nil {
				sc *= float64(m.scales[s])
			}
			for c := range ws.gain {
				ws.gain[c] = float32(sc * m.footprintAt(u, c, y))
			}
			g = ws.gain
		case m.scales != nil && m.scales[s] != 1:
			sc := m.scales[s]
			for c, v := range u.gain {
				ws.gain[c] = sc * v
			}
			g = ws.gain
		}
		t0 := ts - int64(m.pre) // first waveform sample
		i0 := max(0, start-t0)
		i1 := min(int64(m.nt), end-t0)
		for i := i0; i < i1; i++ {
			wv := u.wave32[i]
			row := buf[int(t0+i-start)*nS:][:nS]
			for c, gc := range g {
				row[c] += wv * gc
			}
		}
	}
}

// sync is the sync word at sample t: 64 in the first half of each second.
func (m *model) sync(t int64) int16 {
	fs := m.cfg.SampleRate
	if math.Mod(float64(t), fs) < fs/2 {
		return syncValue
	}
	return 0
}

// toInt16 rounds x to the nearest integer, halves away from zero, and
// saturates it to the int16 range. Adding ±0.5 to a float32 value is exact
// in float64, so truncating the sum rounds exactly.
func toInt16(x float32) int16 {
	v := float64(x)
	switch {
	case v >= math.MaxInt16:
		return math.MaxInt16
	case v <= math.MinInt16:
		return math.MinInt16
	}
	return int16(int32(v + math.Copysign(0.5, v)))
}
