package replica

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
)

// MarshalJSON writes c flat, as one object: the strategy, then every
// knob in its registry's order, a mitigation's among Config's own.
func (c Config) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteString(`{"strategy":`)
	s, _ := json.Marshal(c.Strategy)
	b.Write(s)
	for _, k := range c.Registry().knobs {
		f, _ := k.Value(&c).field()
		v, err := json.Marshal(f.Interface())
		if err != nil {
			return nil, fmt.Errorf("%s: %w", k.Name, err)
		}
		name, _ := json.Marshal(k.Name)
		b.WriteByte(',')
		b.Write(name)
		b.WriteByte(':')
		b.Write(v)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// UnmarshalJSON reads what MarshalJSON wrote over c: a key left out keeps
// its value, a key c's registry does not know is ignored (results of
// another version read back). PUT /admin/config and Patch.Apply refuse
// unknown keys.
func (c *Config) UnmarshalJSON(b []byte) error { return c.decode(b, false) }

// DecodeStrict is UnmarshalJSON refusing a key that is no knob, as PUT
// /admin/config does.
func (c *Config) DecodeStrict(b []byte) error { return c.decode(b, true) }

// decode sets the keys of the object b over c; strict refuses a key that
// is no knob with the error encoding/json's DisallowUnknownFields gives.
// Keys are read in the registry's order, so the first problem found is
// the same whatever the object's order.
func (c *Config) decode(b []byte, strict bool) error {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		return err
	}
	if m == nil { // null
		return nil
	}
	reg := c.Registry()
	if strict {
		for key := range m {
			if _, ok := reg.KnobNamed(key); !ok && key != "strategy" {
				return fmt.Errorf("json: unknown field %q", key)
			}
		}
	}
	if raw, ok := m["strategy"]; ok {
		if err := unmarshalField(raw, &c.Strategy, "strategy"); err != nil {
			return err
		}
	}
	for _, k := range reg.knobs {
		raw, ok := m[k.Name]
		if !ok {
			continue
		}
		f, commit := k.Value(c).field()
		err := unmarshalField(raw, f.Addr().Interface(), k.Name)
		commit()
		if err != nil {
			return err
		}
	}
	return nil
}

// unmarshalField reads raw into p, naming the field in a type error as
// encoding/json names a struct's field.
func unmarshalField(raw json.RawMessage, p any, name string) error {
	err := json.Unmarshal(raw, p)
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) && te.Field == "" {
		te.Field = name
	}
	return err
}

// ConfigOf reads a config as a replica answers it (admin.Client.Config,
// admin.Fleet.Patch): over a zero Config, keys it does not know ignored.
func ConfigOf(raw json.RawMessage) (Config, error) {
	var c Config
	err := json.Unmarshal(raw, &c)
	return c, err
}
