package bench

import (
	"bytes"
	"encoding/json"
	"math"
	"time"
)

// Row is one result of a benchmark. The text table shows its label,
// device, median time and text; as JSON it is an object with the op, the
// device, the size, the median time in ms, the floor in ms and the
// fraction of the floor reached (null where the op has none), then its
// other numbers, then the source of the peak rate behind the floor.
type Row struct {
	// Label is the text table's op column.
	Label string
	// Op names the op and Size the data it ran on.
	Op, Size string
	// Device is where the op ran: "cpu", "cuda:N" or "host".
	Device string
	// Time is the median time of one run.
	Time time.Duration
	// Floor is the time the op cannot beat: its work at the device's
	// peak rates, or a copy of its bytes; 0 where it has none.
	Floor time.Duration
	// Nums are the row's other numbers, in order.
	Nums []Num
	// Text is the text table's throughput column.
	Text string
	// PeakSource says where the peak rates behind Floor come from
	// (Peaks.Source); "" where Floor is a measured copy or there is none.
	PeakSource string
}

// Num is a named number of a Row.
type Num struct {
	Name  string
	Value float64
}

// MarshalJSON writes r as one JSON object, its fields in the order of
// dspk bench -json's documentation; a number that is not finite is
// written as null, and peak_source only where r has one.
func (r Row) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	add := func(k string, v any) {
		if f, ok := v.(float64); ok && (math.IsNaN(f) || math.IsInf(f, 0)) {
			v = nil
		}
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		kb, _ := json.Marshal(k)
		vb, _ := json.Marshal(v)
		b.Write(kb)
		b.WriteByte(':')
		b.Write(vb)
	}
	ms := func(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1e6 }
	add("op", r.Op)
	add("device", r.Device)
	add("size", r.Size)
	add("ms", ms(r.Time))
	if r.Floor > 0 {
		add("floor_ms", ms(r.Floor))
		add("fraction", r.Floor.Seconds()/r.Time.Seconds())
	} else {
		add("floor_ms", nil)
		add("fraction", nil)
	}
	for _, n := range r.Nums {
		add(n.Name, n.Value)
	}
	if r.PeakSource != "" {
		add("peak_source", r.PeakSource)
	}
	return append(append([]byte{'{'}, b.Bytes()...), '}'), nil
}

// seconds returns s seconds as a Duration.
func seconds(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }

// at returns the time work units take at rate units per second, 0 where
// the rate is unknown (0).
func at(work, rate float64) float64 {
	if rate <= 0 {
		return 0
	}
	return work / rate
}
