// Package verdict judges an arm from its figures: the written rules
// (recovered, recovering, metastable, overloaded, degraded), the retry
// loop that holds a metastable arm, and the escape steps.
package verdict
