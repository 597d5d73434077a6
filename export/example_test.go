package export_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"

	"dspk/export"
)

func ExampleWriteNPY() {
	var b bytes.Buffer
	if err := export.WriteNPY(&b, []int{2, 3}, []float32{1, 2, 3, 4, 5, 6}); err != nil {
		panic(err)
	}
	descr, fortran, shape, err := export.ReadNPYHeader(&b)
	fmt.Println(descr, fortran, shape, err, b.Len())
	// Output: <f4 false [2 3] <nil> 24
}

func ExampleOutputDir() {
	parent, _ := os.MkdirTemp("", "example")
	defer os.RemoveAll(parent)
	final := filepath.Join(parent, "dspk_out")

	d, err := export.NewOutputDir(final, "detect", false)
	if err != nil {
		panic(err)
	}
	defer d.Abort() // removes the temporary folder unless committed
	if err := export.WriteNPYFile(d.Path("spike_times.npy"), []int{3}, []int64{10, 20, 30}); err != nil {
		panic(err)
	}
	if err := export.WriteParamsPy(d.Path("params.py"), export.ParamsPy{
		DatPath: []string{"rec.bin"}, NChannelsDat: 385, DType: "int16", SampleRate: 30000,
	}); err != nil {
		panic(err)
	}
	if err := d.Commit(); err != nil {
		panic(err)
	}
	params, _ := os.ReadFile(filepath.Join(final, "params.py"))
	fmt.Print(string(params))
	// Output:
	// dat_path = 'rec.bin'
	// n_channels_dat = 385
	// dtype = 'int16'
	// offset = 0
	// sample_rate = 30000.0
	// hp_filtered = False
}
