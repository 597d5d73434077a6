package detect

// Spikes holds detections as a struct of slices, one entry per spike
// (per-channel data NC entries per spike, features NC·P). Appending keeps
// the capacity, so a reused Spikes stops allocating once it is big enough.
type Spikes struct {
	// NC and P are the channels and features per spike (set by the
	// detector that appends).
	NC, P int
	// Sample is the file sample of the spike's trough: the response peak
	// column t of its window, as a file sample, minus nt/2 − nt0min (10
	// samples for Kilosort4's defaults).
	Sample []int64
	// Center is the template centre f (into [Grid.X], [Grid.Y]).
	Center []int32
	// Template is the best universal template q = s·K + k: footprint
	// size s, temporal shape k.
	Template []int16
	// Sign is +1 where the response was positive (the spike has the
	// template's polarity, a trough for learned templates) and −1 where
	// it was negative (a positive-going spike).
	Sign []int8
	// Amplitude is the best response |A| (whitened SD).
	Amplitude []float32
	// X and Y are the spike position in µm: Kilosort4's relu-weighted
	// centroid of the NC channels' responses to template k at t.
	X, Y []float32
	// Channels holds the NC channels of the centre, nearest first:
	// Channels[n*NC+j].
	Channels []int32
	// Features holds the PCA features (Kilosort4's tF): the 61-sample
	// window centred at the response peak on channel j, projected on
	// component p: Features[(n*NC+j)*P+p].
	Features []float32
}

// Len returns the number of spikes.
func (s *Spikes) Len() int { return len(s.Sample) }

// Reset empties s, keeping its capacity.
func (s *Spikes) Reset() {
	s.Sample, s.Center, s.Template, s.Sign = s.Sample[:0], s.Center[:0], s.Template[:0], s.Sign[:0]
	s.Amplitude, s.X, s.Y = s.Amplitude[:0], s.X[:0], s.Y[:0]
	s.Channels, s.Features = s.Channels[:0], s.Features[:0]
}

// Append appends the spikes of o. It panics if both hold spikes with
// different NC or P.
func (s *Spikes) Append(o *Spikes) {
	if o.Len() == 0 {
		return
	}
	if s.Len() == 0 {
		s.NC, s.P = o.NC, o.P
	} else if s.NC != o.NC || s.P != o.P {
		panic("detect: appending spikes with different channels or features per spike")
	}
	s.Sample = append(s.Sample, o.Sample...)
	s.Center = append(s.Center, o.Center...)
	s.Template = append(s.Template, o.Template...)
	s.Sign = append(s.Sign, o.Sign...)
	s.Amplitude = append(s.Amplitude, o.Amplitude...)
	s.X = append(s.X, o.X...)
	s.Y = append(s.Y, o.Y...)
	s.Channels = append(s.Channels, o.Channels...)
	s.Features = append(s.Features, o.Features...)
}
