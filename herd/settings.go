package herd

import (
	"encoding/json"
	"maps"
	"slices"
)

// Settings is what an arm sets of what it runs on, by name, each value in
// its JSON form: the engine carries it from the arm's spec to its subject
// without knowing the names, and the subject reads it (the testbed's
// replicas take it as the patch of PUT /admin/config).
type Settings map[string]json.RawMessage

// With is a copy of s that also sets name to v's JSON form.
func (s Settings) With(name string, v any) Settings {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return s.Merge(Settings{name: b})
}

// Merge is a copy of s with every name o sets set as o sets it.
func (s Settings) Merge(o Settings) Settings {
	out := maps.Clone(s)
	if out == nil {
		out = Settings{}
	}
	maps.Copy(out, o)
	return out
}

// Text is the string s sets name to, "" when it sets none or not a string.
func (s Settings) Text(name string) string {
	var v string
	_ = json.Unmarshal(s[name], &v)
	return v
}

// Sets reports whether s sets name.
func (s Settings) Sets(name string) bool {
	_, ok := s[name]
	return ok
}

// Names are the names s sets, sorted.
func (s Settings) Names() []string { return slices.Sorted(maps.Keys(s)) }

// Decode decodes s into v (a struct with the names as JSON tags), as if s
// were one JSON object.
func (s Settings) Decode(v any) error {
	b, err := json.Marshal(s)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, v)
}

// SettingsOf is v's JSON object as Settings; nil when v does not marshal
// to an object.
func SettingsOf(v any) Settings {
	b, err := json.Marshal(v)
	if err != nil {
		return nil
	}
	var s Settings
	_ = json.Unmarshal(b, &s)
	return s
}
