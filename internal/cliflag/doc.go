// Package cliflag provides the spelling rules of dspk's command-line
// flags on top of the standard flag package: a flag name may be written
// with '-' or '_' between its words, whichever way it is defined
// ([Normalize]), and a flag that is not defined is answered with the
// closest one that is ([Closest], [Explain]). [Parse] parses flags
// spelt so before or after the positional arguments.
//
// The rules apply to a [flag.FlagSet] as it is, so every command of a
// program gets them from one call before its flags are parsed.
package cliflag
