package match

import (
	"fmt"

	"dspk/compute"
)

// MatchWindow peels the working array of win (C channels of T columns,
// whitened and drift-corrected; column nt is file sample ownStart and the
// window owns columns [nt, nt+owned)) as [Matcher.Match] does, and appends
// its spikes to dst. On the CPU it reads the window's host array; on a
// CUDA device it works on the device array in place and only the spikes
// come back. win must be on the matcher's device.
func (m *Matcher) MatchWindow(dst *Spikes, win *compute.Window, ownStart int64, owned int) error {
	if win.Channels() != m.c {
		return fmt.Errorf("match: window of %d channels for templates of %d", win.Channels(), m.c)
	}
	T := win.Len()
	if owned < 1 || owned > T-2*m.nt {
		return fmt.Errorf("match: %d owned columns of a %d-column window with %d of context", owned, T, m.nt)
	}
	if m.gpu == nil {
		if win.Device().Kind() != compute.CPU {
			return fmt.Errorf("match: a window on %v for a matcher on the CPU", win.Device())
		}
		x, err := win.Data()
		if err != nil {
			return err
		}
		m.Match(dst, x, ownStart, owned)
		return nil
	}
	if win.Device() != m.gpu.dev {
		return fmt.Errorf("match: a window on %v for a matcher on %v", win.Device(), m.gpu.dev)
	}
	p := win.DataMem().Ptr
	return m.matchDevice(dst, &p, nil, T, ownStart, owned)
}

// matchDevice runs the CUDA back end on the device array at *x, or on the
// host array xh uploaded first, and appends the spikes to dst.
func (m *Matcher) matchDevice(dst *Spikes, x *compute.Ptr, xh []float32, T int, ownStart int64, owned int) error {
	g := m.gpu
	err := g.dev.Do(func(c *compute.Ctx) error {
		if err := g.grow(c, m, T); err != nil {
			return err
		}
		if x != nil {
			return g.run(c, m, *x, T, owned)
		}
		// A host window goes through a buffer of its own, allocated on
		// first use (MatchWindow needs none).
		if g.x.Ptr == 0 {
			var err error
			if g.x, err = c.Alloc(m.c * T * 4); err != nil {
				return err
			}
		}
		if err := compute.Upload(c, g.x.Ptr, xh); err != nil {
			return err
		}
		return g.run(c, m, g.x.Ptr, T, owned)
	})
	if err != nil {
		return err
	}
	m.appendDevice(dst, ownStart)
	return nil
}

// appendDevice appends the spikes the CUDA back end left in m.found and
// their features to dst, dropping those whose trough falls before sample 0.
func (m *Matcher) appendDevice(dst *Spikes, ownStart int64) {
	nf := m.prm.NearestChans * m.p
	m.appendFound(dst, ownStart, func(f []float32, i int, _ spike) []float32 {
		return append(f, m.gpu.hostF[i*nf:(i+1)*nf]...)
	})
}

// Close frees the device memory of the CUDA back end and the CPU back
// end's window scratch. Channels and BestChannel still answer; matching
// cannot be used afterwards.
func (m *Matcher) Close() error {
	// The CPU back end's window scratch (projections, residual) goes;
	// Channels and BestChannel still answer.
	m.b, m.s, m.sbar, m.su, m.xres = nil, nil, nil, nil, nil
	m.gs, m.gsu = nil, nil
	if m.gpu == nil {
		return nil
	}
	err := m.gpu.close()
	m.gpu = nil
	return err
}
