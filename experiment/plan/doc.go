// Package plan is an experiment before it runs: the Plan, its checks
// (every problem refused, naming the field), its preview for a dry run,
// and what a subject kind provides before a run starts (Kind, Subject).
package plan
