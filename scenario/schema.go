package scenario

import (
	"encoding/json"
	"reflect"

	"github.com/herdbench/herdbench/triggers"
	"github.com/invopop/jsonschema"
)

// SchemaID names the format's JSON Schema.
const SchemaID = "https://github.com/herdbench/herdbench/docs/scenario.schema.json"

// Schema is the JSON Schema of scenario files, generated from File and,
// for the trigger's keys and the knobs, from v: what editors use to
// complete and check a scenario as it is written.
func Schema(v Vocabulary) ([]byte, error) {
	reg := v.registry()
	r := &jsonschema.Reflector{
		FieldNameTag:   "yaml",
		DoNotReference: true,
		ExpandedStruct: true,
		Mapper: func(t reflect.Type) *jsonschema.Schema {
			switch t {
			case reflect.TypeOf(Duration("")):
				return durationSchema()
			case reflect.TypeOf(After("")):
				return afterSchema()
			case reflect.TypeOf(Trigger{}):
				return triggerSchema(reg)
			case reflect.TypeOf(Knobs{}):
				return knobsSchema(v.Knobs)
			}
			return nil
		},
	}
	s := r.Reflect(&File{})
	s.ID = SchemaID
	s.Title = "herdbench scenario"
	s.Description = "An experiment for herdbench run: every key is the flag of the same name (load.hot_keys is --hot-keys)."
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// JSONSchemaExtend makes an arm a name or a mapping, as UnmarshalYAML reads
// it.
func (Arm) JSONSchemaExtend(s *jsonschema.Schema) {
	object := *s
	object.Required = []string{"name"}
	*s = jsonschema.Schema{OneOf: []*jsonschema.Schema{
		{Type: "string", Description: "an arm as --arms takes it: a strategy such as lock+ttl_jitter, or a client arm such as retry=exp:100ms:1s:3"},
		&object,
	}}
}

func durationSchema() *jsonschema.Schema {
	return &jsonschema.Schema{Type: "string", Pattern: `^(0|([0-9]+(\.[0-9]+)?(ns|us|µs|ms|s|m|h))+)$`,
		Description: "a Go duration such as 500ms, 2s or 1m30s"}
}

func afterSchema() *jsonschema.Schema {
	d := `(0|([0-9]+(\.[0-9]+)?(ns|us|µs|ms|s|m|h))+)`
	return &jsonschema.Schema{Type: "string", Pattern: "^(" + d + "|auto(:" + d + ")?)$",
		Description: "a Go duration such as 8s; or auto, auto:MAX: until the arm has recovered and held, or MAX (default 60s) has passed"}
}

// knobsSchema is a knobs section: every knob of the replicas' config
// (the Vocabulary's), each typed and described as its flag is.
func knobsSchema(knobs []Knob) *jsonschema.Schema {
	props := jsonschema.NewProperties()
	for _, k := range knobs {
		props.Set(k.Name, valueSchema(k.Type, k.Enum, k.Help))
	}
	return &jsonschema.Schema{Type: "object", Properties: props, AdditionalProperties: jsonschema.FalseSchema,
		Description: "The replicas' knobs (docs/testbed.md); an arm's own override the file's, and what is not set stays as the testbed was started"}
}

// valueSchema is the schema of a value of a flag's type (pflag's names:
// duration, int, uint32, float64, bool; anything else a string, of enum's
// values when there are some), described by help.
func valueSchema(kind string, enum []string, help string) *jsonschema.Schema {
	var s *jsonschema.Schema
	switch kind {
	case "duration":
		s = durationSchema()
	case "int", "uint32":
		s = &jsonschema.Schema{Type: "integer"}
	case "float64":
		s = &jsonschema.Schema{Type: "number"}
	case "bool":
		s = &jsonschema.Schema{Type: "boolean"}
	default:
		s = &jsonschema.Schema{Type: "string"}
		for _, v := range enum {
			s.Enum = append(s.Enum, v)
		}
	}
	s.Description = help
	return s
}

// triggerSchema is the trigger section: a name the registry has, and its
// triggers' options, each typed and described as its flag is.
func triggerSchema(reg *triggers.Registry) *jsonschema.Schema {
	props := jsonschema.NewProperties()
	names := make([]any, 0, len(reg.Names()))
	for _, n := range reg.Names() {
		names = append(names, n)
	}
	props.Set("name", &jsonschema.Schema{Type: "string", Enum: names, Description: "What provokes the herd at T (herdbench triggers)"})
	for _, o := range reg.Options() {
		s := valueSchema(o.Type(), o.Enum, o.Trigger+": "+o.Help)
		if o.Pattern != "" { // its forms (api-N) are not values
			s.Enum, s.Pattern = nil, o.Pattern
		}
		props.Set(o.Key, s)
	}
	return &jsonschema.Schema{Type: "object", Properties: props, AdditionalProperties: jsonschema.FalseSchema,
		Description: "What provokes the herd at T, and its options"}
}
