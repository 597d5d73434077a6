package cuda

import "testing"

// TestPreparedSet packs arguments without a GPU and checks Set, SetPtr
// and their type checks.
func TestPreparedSet(t *testing.T) {
	f := &Function{name: "k"}
	p := f.Prepare(D1(1), D1(32), 0, DevicePtr(0x1000), int32(7), float32(1.5))
	defer p.Free()
	p.SetPtr(0, 0x2000)
	p.Set(1, int32(-3))
	if p.slots[0] != 0x2000 || int32(uint32(p.slots[1])) != -3 {
		t.Errorf("slots %x", p.slots)
	}
	for name, bad := range map[string]func(){
		"SetPtr of an int32": func() { p.SetPtr(1, 1) },
		"Set of a float64":   func() { p.Set(2, float64(1)) },
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s did not panic", name)
				}
			}()
			bad()
		}()
	}
}
