package phy

import (
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"os"
	"strings"

	"dspk/export"
)

// pyArray is a numpy array as unpickled by unpickleNPY: its dtype name
// ("f4", "i8", "O8", …), shape, raw little-endian bytes (numeric arrays)
// and items (object arrays).
type pyArray struct {
	dtype string
	shape []int
	raw   []byte
	items []any
}

// pyDtype is numpy.dtype(name, …) as unpickled.
type pyDtype struct{ name string }

// pyMark is the MARK opcode's place on the stack.
type pyMark struct{}

// readOpsNPY reads the ops.npy at path as numpy's np.load(path,
// allow_pickle=True).item() does, with a reader of the pickle opcodes
// that numpy's object arrays and export.WritePickledDictNPY use: dicts
// are map[string]any, lists []any, tuples pyTuple, numpy arrays *pyArray,
// ints int64, floats float64, None nil.
func readOpsNPY(path string) (map[string]any, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	descr, fortran, shape, err := export.ReadNPYHeader(f)
	if err != nil || descr != "|O" || fortran || len(shape) != 0 {
		return nil, fmt.Errorf("%s: descr %q, fortran %v, shape %v: %v", path, descr, fortran, shape, err)
	}
	body, err := io.ReadAll(f)
	if err != nil {
		return nil, err
	}
	v, err := unpickle(body)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	a, ok := v.(*pyArray)
	if !ok || a.dtype != "O8" || len(a.shape) != 0 || len(a.items) != 1 {
		return nil, fmt.Errorf("%s: not a 0-d object array: %#v", path, v)
	}
	d, ok := a.items[0].(map[string]any)
	if !ok {
		return nil, fmt.Errorf("%s: the item is a %T, not a dict", path, a.items[0])
	}
	return d, nil
}

// pyTuple is a Python tuple.
type pyTuple []any

// unpickle runs the pickle b and returns the object it builds.
func unpickle(b []byte) (v any, err error) {
	defer func() {
		if r := recover(); r != nil { // a malformed pickle
			v, err = nil, fmt.Errorf("pickle: %v", r)
		}
	}()
	var st []any
	pop := func() any { v := st[len(st)-1]; st = st[:len(st)-1]; return v }
	popMark := func() []any {
		for i := len(st) - 1; i >= 0; i-- {
			if _, ok := st[i].(pyMark); ok {
				items := append([]any(nil), st[i+1:]...)
				st = st[:i]
				return items
			}
		}
		panic("no mark")
	}
	le := binary.LittleEndian
	for i := 0; i < len(b); {
		op := b[i]
		i++
		need := func(n int) []byte {
			if i+n > len(b) {
				panic("truncated")
			}
			s := b[i : i+n]
			i += n
			return s
		}
		switch op {
		case 0x80: // PROTO
			need(1)
		case '.':
			if len(st) != 1 {
				return nil, fmt.Errorf("pickle: %d objects at STOP", len(st))
			}
			return st[0], nil
		case 'c': // GLOBAL module\nname\n
			rest := string(b[i:])
			parts := strings.SplitN(rest, "\n", 3)
			if len(parts) < 3 {
				return nil, fmt.Errorf("pickle: bad GLOBAL")
			}
			i += len(parts[0]) + len(parts[1]) + 2
			st = append(st, parts[0]+"."+parts[1])
		case 'K':
			st = append(st, int64(need(1)[0]))
		case 'J':
			st = append(st, int64(int32(le.Uint32(need(4)))))
		case 0x8a: // LONG1
			n := int(need(1)[0])
			raw := need(n)
			var v int64
			for j := n - 1; j >= 0; j-- {
				v = v<<8 | int64(raw[j])
			}
			if n > 0 && n < 8 && raw[n-1]&0x80 != 0 {
				v -= 1 << (8 * n)
			}
			st = append(st, v)
		case 'G':
			st = append(st, math.Float64frombits(binary.BigEndian.Uint64(need(8))))
		case 'X':
			st = append(st, string(need(int(le.Uint32(need(4))))))
		case 'C':
			st = append(st, append([]byte(nil), need(int(need(1)[0]))...))
		case 'B':
			st = append(st, append([]byte(nil), need(int(le.Uint32(need(4))))...))
		case '(':
			st = append(st, pyMark{})
		case 't':
			st = append(st, pyTuple(popMark()))
		case ')':
			st = append(st, pyTuple{})
		case 0x85, 0x86, 0x87: // TUPLE1, TUPLE2, TUPLE3
			n := int(op-0x85) + 1
			t := append(pyTuple(nil), st[len(st)-n:]...)
			st = append(st[:len(st)-n], t)
		case 'N':
			st = append(st, nil)
		case 0x88:
			st = append(st, true)
		case 0x89:
			st = append(st, false)
		case ']':
			st = append(st, []any{})
		case 'a':
			v := pop()
			st[len(st)-1] = append(st[len(st)-1].([]any), v)
		case 'e':
			items := popMark()
			st[len(st)-1] = append(st[len(st)-1].([]any), items...)
		case '}':
			st = append(st, map[string]any{})
		case 'u':
			items := popMark()
			d := st[len(st)-1].(map[string]any)
			for j := 0; j+1 < len(items); j += 2 {
				d[items[j].(string)] = items[j+1]
			}
		case 'R':
			args, fn := pop().(pyTuple), pop().(string)
			switch fn {
			case "numpy.core.multiarray._reconstruct":
				st = append(st, &pyArray{})
			case "numpy.dtype":
				st = append(st, &pyDtype{name: args[0].(string)})
			default:
				return nil, fmt.Errorf("pickle: call of %s", fn)
			}
		case 'b': // BUILD
			state := pop()
			if a, ok := st[len(st)-1].(*pyArray); ok {
				s := state.(pyTuple) // (version, shape, dtype, fortran, data)
				a.dtype = s[2].(*pyDtype).name
				for _, d := range s[1].(pyTuple) {
					a.shape = append(a.shape, int(d.(int64)))
				}
				switch d := s[4].(type) {
				case []byte:
					a.raw = d
				case []any:
					a.items = d
				}
			}
		default:
			return nil, fmt.Errorf("pickle: opcode %q at %d", op, i-1)
		}
	}
	return nil, fmt.Errorf("pickle: no STOP")
}
