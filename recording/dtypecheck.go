package recording

import "fmt"

// Sign-bit test limits of [CheckDType]: a value is far from zero at
// FarCount counts or more. Data whose sampled values are at least
// WrongTypeShare far, at most FlippedShare far with the sign bit
// flipped, and whose mean |value| flipped is at most 1/WrongAbsRatio of
// theirs, are read as the wrong 16-bit type beyond doubt; from
// SuspectShare far (four times fewer flipped, and half the mean |value|
// flipped) they are suspect. The mean |value| keeps a correctly read
// signal with a large DC offset (20 000 counts: 12 768 flipped) from
// being taken for a flipped one (32 583 as read, 185 flipped, for
// uint16 noise read as int16).
const (
	FarCount       = 16384
	WrongTypeShare = 0.5
	FlippedShare   = 0.05
	WrongAbsRatio  = 8
	SuspectShare   = 0.05
)

// DTypeCheck is what a sample of a recording's values says about its
// 16-bit integer type. Reading uint16 data (centred on 32768) as int16,
// or int16 data as uint16, flips the sign bit of every value: a signal
// near 0 lands near the rails ±32768, and its whole-file DC offset near
// one of them (for a signal of either sign, the values jump between the
// two rails). Flipping the sign bit back undoes the mistake exactly.
type DTypeCheck struct {
	// Values is the number of values sampled.
	Values int64
	// Far and FarFlipped are the shares of the values at FarCount or
	// more from 0, as read and with the sign bit flipped.
	Far, FarFlipped float64
	// Mean and MeanFlipped are the mean values (the DC offset), as read
	// and with the sign bit flipped.
	Mean, MeanFlipped float64
	// MeanAbs and MeanAbsFlipped are the mean absolute values.
	MeanAbs, MeanAbsFlipped float64
}

// Wrong reports whether the values are read as the wrong 16-bit type
// beyond doubt.
func (c DTypeCheck) Wrong() bool {
	return c.Values > 0 && c.Far >= WrongTypeShare && c.FarFlipped <= FlippedShare && c.MeanAbsFlipped*WrongAbsRatio <= c.MeanAbs
}

// Suspect reports whether the values look read as the wrong type without
// Wrong's certainty.
func (c DTypeCheck) Suspect() bool {
	return c.Values > 0 && !c.Wrong() && c.Far >= SuspectShare && c.FarFlipped*4 <= c.Far && c.MeanAbsFlipped*2 <= c.MeanAbs
}

// String describes the evidence in words.
func (c DTypeCheck) String() string {
	return fmt.Sprintf("%.1f %% of %d sampled values lie %d counts or more from 0 (mean %.0f, mean |value| %.0f); "+
		"with the sign bit flipped, as the other 16-bit type would read them, %.1f %% would (mean %.0f, mean |value| %.0f)",
		100*c.Far, c.Values, FarCount, c.Mean, c.MeanAbs, 100*c.FarFlipped, c.MeanFlipped, c.MeanAbsFlipped)
}

// dtypeChunks and dtypeChunkLen are the number and length (in samples)
// of the evenly spaced stretches of a recording [CheckDType] reads.
const (
	dtypeChunks   = 16
	dtypeChunkLen = 2000
)

// CheckDType reads up to 16 evenly spaced stretches of 2000 samples of
// the file rows rows of rec (all of a short recording) and measures how
// far its values lie from 0, as read and with the sign bit flipped (see
// [DTypeCheck]).
func CheckDType(rec Recording, rows []int) (DTypeCheck, error) {
	var c DTypeCheck
	n := rec.Samples()
	C := rec.Channels()
	if n == 0 || len(rows) == 0 {
		return c, nil
	}
	chunk := int64(dtypeChunkLen)
	starts := []int64{0}
	if n > dtypeChunks*chunk {
		starts = starts[:0]
		for i := range int64(dtypeChunks) {
			starts = append(starts, i*(n-chunk)/(dtypeChunks-1))
		}
	} else {
		chunk = n
	}
	buf := make([]int16, int(chunk)*C)
	var far, farF int64
	var sum, sumF, abs, absF float64
	for _, s := range starts {
		if err := rec.ReadInt16(buf, s, int(chunk)); err != nil {
			return c, err
		}
		for t := range int(chunk) {
			row := buf[t*C : (t+1)*C]
			for _, r := range rows {
				v := int32(row[r])
				f := int32(int16(uint16(row[r]) ^ 0x8000))
				if v >= FarCount || v <= -FarCount {
					far++
				}
				if f >= FarCount || f <= -FarCount {
					farF++
				}
				sum += float64(v)
				sumF += float64(f)
				abs += float64(max(v, -v))
				absF += float64(max(f, -f))
			}
		}
		c.Values += chunk * int64(len(rows))
	}
	k := float64(c.Values)
	c.Far, c.FarFlipped = float64(far)/k, float64(farF)/k
	c.Mean, c.MeanFlipped, c.MeanAbs, c.MeanAbsFlipped = sum/k, sumF/k, abs/k, absF/k
	return c, nil
}
