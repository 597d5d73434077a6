// Package importrules holds the test that keeps dspk's import rules
// (docs/architecture.md §1): imports point down the layers, no algorithm
// package imports the CUDA bindings (internal/cuda), and recording imports
// no device package. It has no code of its own.
package importrules
