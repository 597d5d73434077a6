// Package cluster groups spikes into units by Kilosort4's graph clustering.
package cluster
