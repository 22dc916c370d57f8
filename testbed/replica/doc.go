// Package replica is the vocabulary of the testbed's API replicas: what
// one is started with (Options, DefaultOptions, and their Problems), what
// it runs and can be switched to while it runs (Config: a strategy and
// every knob, with its JSON and its flag form, Knobs), the mitigations by
// name, kind and description (DefaultMitigations, Strategies, and a
// strategy's Parse), and the patch an arm sends (PatchOf).
//
// It holds words, not behaviour: the server, package testbed/api, does
// what a mitigation's name says, and only it imports the drivers. So the
// command line, the testbed's providers, its subject and its stores name
// and check a replica's settings without the server: testbed serve, which
// runs one, is the one command that needs it.
//
// Guarantees: a knob is a field with a json and a help tag, of Config or
// of a mitigation's struct, and every list of knobs (the flags, the
// scenario keys, the replicas' arguments) is made from a registry's, in
// one order; a duplicate name panics when the registry is built;
// Problems returns every problem at once, each a herd.FieldError naming
// its field and what it accepts.
package replica
