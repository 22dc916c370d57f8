package result

import (
	"bytes"
	"encoding/json"
	"fmt"
	"time"

	"github.com/herdbench/herdbench/triggers"
)

// UnmarshalJSON reads a trigger's result with its detail typed: the
// detail of a trigger triggers.Default knows is read, strictly, into that
// trigger's own type (a pointer, as Fire returns it), so a results file
// reads back as the run wrote it. A trigger it does not know keeps its
// detail as JSON values.
func (r *TriggerResult) UnmarshalJSON(b []byte) error {
	var raw struct {
		Name    string          `json:"name"`
		FiredAt *time.Time      `json:"fired_at"`
		EndedMS *int64          `json:"ended_ms"`
		Detail  json.RawMessage `json:"detail"`
	}
	if err := strict(b, &raw); err != nil {
		return err
	}
	*r = TriggerResult{Name: raw.Name, FiredAt: raw.FiredAt, EndedMS: raw.EndedMS}
	if len(raw.Detail) == 0 || bytes.Equal(raw.Detail, []byte("null")) {
		return nil
	}
	if t, err := triggers.Default().Get(raw.Name); err == nil {
		d := t.Detail()
		if err := strict(raw.Detail, d); err != nil {
			return fmt.Errorf("trigger %s: detail: %w", raw.Name, err)
		}
		r.Detail = d
		return nil
	}
	return json.Unmarshal(raw.Detail, &r.Detail)
}

// strict decodes b into v, refusing fields v does not have.
func strict(b []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	return dec.Decode(v)
}
