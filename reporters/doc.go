// Package reporters renders an experiment's Report: the terminal table and
// the results JSON file. They only format; every figure comes from the
// Report as measured.
package reporters
