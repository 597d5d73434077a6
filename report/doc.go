// Package report provides the curation report of a sort folder: one
// self-contained HTML page (inline CSS and JavaScript, no network, no
// server) with the sort's summary, a sortable and filterable table of
// the units with their quality metrics and labels, and per unit its
// waveform on the best channels, autocorrelogram, inter-spike-interval
// histogram, and amplitude and depth over time.
//
// [Write] reads the folder (Kilosort's or Phy's files through
// quality.ReadSortFolder, dspk.json for the summary, the labels' and
// metrics' tables), computes every figure's data in Go and embeds it in
// the page as JSON, compactly: the scatter plots keep at most
// [Options].MaxPoints spikes per unit (every k-th spike in time) as
// 16-bit values in base64, the waveforms as integers of a per-unit
// scale, the numbers with 4 significant digits. The page draws them as
// inline SVG when a unit is opened.
//
// The page reads its location's fragment on load, so a link (or a test
// in a headless browser) can open a given view: #sort=snr sorts the
// table by snr ascending (#sort=-snr descending), #unit=3 opens unit 3,
// #filter=good filters the rows, joined with "&".
package report
