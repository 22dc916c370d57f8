package scenario

import (
	"encoding/json"
	"reflect"

	"github.com/invopop/jsonschema"
)

// SchemaID names the format's JSON Schema.
const SchemaID = "https://github.com/herdbench/herdbench/docs/scenario.schema.json"

// Schema is the JSON Schema of scenario files, generated from File: what
// editors use to complete and check a scenario as it is written.
func Schema() ([]byte, error) {
	r := &jsonschema.Reflector{
		FieldNameTag:   "yaml",
		DoNotReference: true,
		ExpandedStruct: true,
		Mapper: func(t reflect.Type) *jsonschema.Schema {
			if t == reflect.TypeOf(Duration("")) {
				return &jsonschema.Schema{Type: "string", Pattern: `^(0|([0-9]+(\.[0-9]+)?(ns|us|µs|ms|s|m|h))+)$`,
					Description: "a Go duration such as 500ms, 2s or 1m30s"}
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
