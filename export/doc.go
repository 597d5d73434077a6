// Package export provides the writers for dspk's results: a fast NumPy
// .npy writer (plain and structured dtypes) with a header reader for
// user-supplied .npy files, an output folder that appears atomically when
// committed, Phy's params.py and indented JSON provenance files.
//
// # .npy files
//
// [WriteNPY] writes format 1.0: the magic string, version 1.0, and a Python
// dict header
//
//	{'descr': '<i8', 'fortran_order': False, 'shape': (n,), }
//
// padded with spaces and a final newline so that the data start at a
// multiple of 64 bytes, followed by the data in C order and little-endian
// byte order in one write. [WriteNPYRecords] writes a one-dimensional array
// of a structured dtype by interleaving columns. [ReadNPYHeader] parses
// the header of formats 1.0, 2.0 and 3.0.
//
// # Output folders
//
// [CreateOutputDir] fills a folder under a locked temporary name and
// renames it into place on [OutputDir.Commit], recording its kind, files
// and sub-folders in a manifest ([ManifestName]); a cancelled context
// stops the commit before the final rename. With overwrite it replaces
// only a folder of the same kind whose manifest lists every file and
// sub-folder in it, files unchanged, and never one that is or holds an
// input of the run; temporary folders whose lock is stale (see
// [LockName]: a dead process here, an old heartbeat elsewhere) are
// removed by the next run writing beside them ([SweepStale]).
// [AbortPending] removes what the process is still writing, for an exit
// that cannot wait.
//
// Shape misuse (a shape whose product is not the data length, an unsupported
// element type) is a programmer error and panics; I/O problems are returned
// as errors.
package export
