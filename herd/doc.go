// Package herd holds the few words every layer of herdbench shares, and
// nothing else: Duration (a time.Duration that reads and writes "500ms"),
// the testbed's Parts and Dependencies, FieldError, how a bad value
// travels from where it is checked to where the user is told, and
// SetText, how an optional field is set by its type's UnmarshalText.
//
// It imports nothing of herdbench, so triggers, targets, the testbed's API
// and the command line can all speak it without depending on each other.
package herd
