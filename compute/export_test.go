package compute

// HostPinned reports whether h is pinned memory the device d knows (the
// test's view of what Window.Load uploads from at full speed).
func HostPinned(d *Device, h *HostMem) bool {
	_, _, ok := d.pinnedOf(h.Ptr(), h.Len())
	return ok && h.h != nil
}
