// Package figure provides dspk's pictures, drawn from plain data: the
// drift raster of a detection run ([EncodeRaster]: spike depth against
// time coloured by amplitude, and the rate along the probe), the drift
// estimate ([WriteDriftPlot]) and the summary of a sort
// ([WriteSortSummary]). The raster is drawn straight into its pixels and
// encoded on all cores, and its PNG is tagged so that dspk can tell a
// picture it drew ([IsDspkPNG]). It reads no dspk folder: package phy
// draws the pictures of the folders it writes.
package figure
