package pipeline

import (
	"fmt"

	"dspk/compute"
)

// DeviceUse says where each stage of a pipeline on dev runs, as a run's
// summary records it ([RunOptions.Device]): the device itself for the
// CPU; for a GPU, that preprocessing and detection run there.
func DeviceUse(dev *compute.Device) string {
	if dev.Kind() == compute.CPU {
		return dev.String()
	}
	return fmt.Sprintf("preprocessing and detection %s", dev)
}
