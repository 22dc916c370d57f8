// Package arm says what an arm of an experiment is: the knobs it sets
// on the subject, its clients' policies and its selection on a service
// herdbench does not control, and the kinds of arm a plan may name.
package arm
