package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"time"
)

// benchRow is one result of dspk bench. The text table shows its label,
// device, median time and text; -json writes it as an object with the
// op, the device, the size, the median time in ms, the floor in ms and
// the fraction of the floor reached (null where the op has none), then
// its other numbers.
type benchRow struct {
	label    string // the text table's op column
	op, size string
	device   string
	d        time.Duration
	floor    time.Duration // the time at the floor; 0: no floor
	nums     []benchNum    // the line's other numbers, in order
	text     string        // the text table's throughput column
}

// benchNum is a named number of a benchRow.
type benchNum struct {
	name string
	v    float64
}

// benchRows collects the rows of a -json run; nil for the text table.
var benchRows *[]benchRow

// row prints r in the text table or keeps it for the JSON document.
func row(r benchRow) {
	if benchRows != nil {
		*benchRows = append(*benchRows, r)
		return
	}
	fmt.Fprintf(cmdOut, "%-36s %-8s %10.3f ms  %s\n", r.label, r.device, float64(r.d.Microseconds())/1000, r.text)
}

// MarshalJSON writes r as one JSON object, its fields in the order of the
// -json documentation; a number that is not finite is written as null.
func (r benchRow) MarshalJSON() ([]byte, error) {
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
	add("op", r.op)
	add("device", r.device)
	add("size", r.size)
	add("ms", ms(r.d))
	if r.floor > 0 {
		add("floor_ms", ms(r.floor))
		add("fraction", r.floor.Seconds()/r.d.Seconds())
	} else {
		add("floor_ms", nil)
		add("fraction", nil)
	}
	for _, n := range r.nums {
		add(n.name, n.v)
	}
	return append(append([]byte{'{'}, b.Bytes()...), '}'), nil
}

// seconds returns s seconds as a Duration.
func seconds(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }
