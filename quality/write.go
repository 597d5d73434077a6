package quality

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
)

// LabelFile and LabelColumn name the labels' table: the column bc_label
// (Bombcell's labels under SpikeInterface's names) in
// cluster_bc_label.tsv, which Phy shows and SpikeInterface's read_phy and
// read_kilosort load as the unit property bc_label.
const (
	LabelFile   = "cluster_bc_label.tsv"
	LabelColumn = "bc_label"
)

// WideFile is the table of every metric and the label, one row per unit,
// its first column "unit_id" (as SpikeInterface names its units). Phy
// loads only cluster_*.tsv and SpikeInterface's read_phy/read_kilosort
// every table with a cluster_id column: neither loads the metrics of this
// file a second time.
const WideFile = "quality_metrics.tsv"

// WideIDColumn is the header of WideFile's first column.
const WideIDColumn = "unit_id"

// WriteTSV writes t into dir as Phy's cluster tables: one
// cluster_<metric>.tsv per column (header "cluster_id\t<metric>", one row
// per unit: the id, a tab, the value; counts as integers, NaN as "nan"),
// the labels as [LabelFile] and every column in [WideFile]. Each file is
// written under a temporary name and renamed into place.
func WriteTSV(dir string, t *Table) error {
	for _, c := range t.Columns {
		var b bytes.Buffer
		fmt.Fprintf(&b, "cluster_id\t%s\n", c.Name)
		for i, id := range t.UnitIDs {
			fmt.Fprintf(&b, "%d\t%s\n", id, formatValue(c.Values[i], c.Integer))
		}
		if err := writeAtomic(filepath.Join(dir, "cluster_"+c.Name+".tsv"), b.Bytes()); err != nil {
			return err
		}
	}
	if t.Labels != nil {
		var b bytes.Buffer
		fmt.Fprintf(&b, "cluster_id\t%s\n", LabelColumn)
		for i, id := range t.UnitIDs {
			fmt.Fprintf(&b, "%d\t%s\n", id, t.Labels[i])
		}
		if err := writeAtomic(filepath.Join(dir, LabelFile), b.Bytes()); err != nil {
			return err
		}
	}
	var b bytes.Buffer
	b.WriteString(WideIDColumn)
	for _, c := range t.Columns {
		b.WriteString("\t" + c.Name)
	}
	if t.Labels != nil {
		b.WriteString("\t" + LabelColumn)
	}
	b.WriteByte('\n')
	for i, id := range t.UnitIDs {
		b.WriteString(strconv.Itoa(int(id)))
		for _, c := range t.Columns {
			b.WriteString("\t" + formatValue(c.Values[i], c.Integer))
		}
		if t.Labels != nil {
			b.WriteString("\t" + t.Labels[i])
		}
		b.WriteByte('\n')
	}
	return writeAtomic(filepath.Join(dir, WideFile), b.Bytes())
}

// formatValue writes v as Python reads it back: the shortest round-trip
// decimal, "nan", "inf", or an integer for a count.
func formatValue(v float64, integer bool) string {
	switch {
	case math.IsNaN(v):
		return "nan"
	case math.IsInf(v, 1):
		return "inf"
	case math.IsInf(v, -1):
		return "-inf"
	case integer:
		return strconv.FormatInt(int64(v), 10)
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}

// writeAtomic writes b to a temporary file beside path and renames it to
// path, so a reader sees the old file or the new one, never a part.
func writeAtomic(path string, b []byte) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return fmt.Errorf("quality: %w", err)
	}
	tmp := f.Name()
	_, werr := f.Write(b)
	cerr := f.Close()
	if err := errors.Join(werr, cerr); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("quality: %s: %w", path, err)
	}
	if err := os.Chmod(tmp, 0o644); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("quality: %w", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("quality: %w", err)
	}
	return nil
}
