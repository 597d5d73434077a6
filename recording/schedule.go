package recording

import "fmt"

// Schedule splits samples [Start, End) of a recording into Kilosort4's
// windows: window i owns samples Start+i·BatchSize … Start+(i+1)·BatchSize
// (the last one fewer) and sees Pad more samples of context on each side
// (Kilosort4's batch_size and nt, kilosort.Settings). Context
// beyond [Start, End) repeats the edge sample. A last window that would
// own fewer than Pad samples is dropped, so End may be less than the
// range asked for.
type Schedule struct {
	BatchSize, Pad int
	Start, End     int64
	Windows        int
}

// NewSchedule returns the schedule of samples [start, end) with windows
// owning batch samples and pad samples of context. It returns an error if
// the range holds no full window's worth of context (fewer than pad
// samples) or the sizes are not positive.
func NewSchedule(start, end int64, batch, pad int) (Schedule, error) {
	if batch <= 0 || pad <= 0 {
		return Schedule{}, fmt.Errorf("recording: window of %d samples with %d of context: both must be positive", batch, pad)
	}
	if pad > batch {
		return Schedule{}, fmt.Errorf("recording: context %d longer than the window %d", pad, batch)
	}
	if start < 0 || end < start {
		return Schedule{}, fmt.Errorf("recording: bad sample range [%d, %d)", start, end)
	}
	n := end - start
	w := (n + int64(batch) - 1) / int64(batch)
	if w > 0 {
		last := n - (w-1)*int64(batch)
		if last < int64(pad) {
			w--
			end = start + w*int64(batch)
		}
	}
	if w == 0 {
		return Schedule{}, fmt.Errorf("recording: %d samples is shorter than the %d-sample minimum of one window", n, pad)
	}
	return Schedule{BatchSize: batch, Pad: pad, Start: start, End: end, Windows: int(w)}, nil
}

// Len is the number of columns of a padded window, BatchSize + 2·Pad.
func (s Schedule) Len() int { return s.BatchSize + 2*s.Pad }

// Window describes window i of a schedule.
type Window struct {
	// Index is the window's number in the schedule.
	Index int
	// OwnStart and OwnEnd are the file samples the window owns; column
	// Pad+j of the padded window is file sample OwnStart+j.
	OwnStart, OwnEnd int64
	// ReadStart and ReadEnd are the file samples actually read.
	ReadStart, ReadEnd int64
	// Offset is the column of the padded window that ReadStart lands in;
	// columns before it repeat ReadStart and columns from
	// Offset+(ReadEnd-ReadStart) on repeat ReadEnd-1.
	Offset int
}

// Owned is the number of samples the window owns.
func (w Window) Owned() int { return int(w.OwnEnd - w.OwnStart) }

// Window returns window i. It panics if i is out of range.
func (s Schedule) Window(i int) Window {
	if i < 0 || i >= s.Windows {
		panic(fmt.Sprintf("recording: window %d of %d", i, s.Windows))
	}
	own0 := s.Start + int64(i)*int64(s.BatchSize)
	own1 := min(own0+int64(s.BatchSize), s.End)
	r0 := max(own0-int64(s.Pad), s.Start)
	r1 := min(own1+int64(s.Pad), s.End)
	return Window{Index: i, OwnStart: own0, OwnEnd: own1, ReadStart: r0, ReadEnd: r1,
		Offset: int(r0 - (own0 - int64(s.Pad)))}
}

// Batch is one padded window of int16 samples, interleaved as stored:
// Data[t*channels+c] for t in [0, Schedule.Len()), with context beyond
// the schedule's range filled by repeating the edge sample.
type Batch struct {
	Window Window
	Data   []int16
	buf    []int16 // a Loader's buffer, which Data is while handed out
}
