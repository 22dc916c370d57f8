package api

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
)

// RespondJSON answers code with v as JSON. The edge role answers with it too.
func RespondJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v)
}

// RespondError answers code with {"error": msg}, the testbed's error body.
func RespondError(w http.ResponseWriter, code int, msg string) {
	RespondJSON(w, code, map[string]string{"error": msg})
}

// describeJSONError names the field a decoding error is about.
func describeJSONError(err error) string { return describeConfigError(err, defaultRegistry()) }

// describeConfigError is describeJSONError of a config of reg's.
func describeConfigError(err error, reg *Mitigations) string {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		return fmt.Sprintf("%s: want %s, got %s", te.Field, te.Type, te.Value)
	}
	msg := err.Error()
	if f, ok := strings.CutPrefix(msg, "json: unknown field "); ok {
		return fmt.Sprintf("unknown field %s (accepted: %s)", f, strings.Join(reg.configFields(), ", "))
	}
	return msg
}

// configFields lists the JSON names of a Config of r's, sorted.
func (r *Mitigations) configFields() []string {
	return slices.Sorted(slices.Values(append(r.KnobNames(), "strategy")))
}
