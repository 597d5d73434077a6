// Package testseed provides the seeds of tests' random inputs: a fixed
// one given by DSPK_TEST_SEED, else a fresh one each run, always logged,
// so that a failure is reproduced by running the test again with
// DSPK_TEST_SEED set to it.
package testseed
