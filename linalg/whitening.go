package linalg

// Whitening is a sparse whitening operator with K non-zeros per row, as
// Kilosort4's local ZCA produces (K = 32): row c of the dense matrix has
// Value[c*K+j] in column Index[c*K+j].
type Whitening struct {
	// C is the number of channels (rows and columns of the dense matrix).
	C int
	// K is the number of non-zeros stored per row.
	K int
	// Index holds the column of each stored entry, C*K values.
	Index []int32
	// Value holds the stored entries, C*K values.
	Value []float32
}
