package reporters

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"

	"github.com/herdbench/herdbench/experiment"
	"github.com/herdbench/herdbench/experiment/result"
	"github.com/herdbench/herdbench/herd"
)

// JSON writes the report as indented JSON.
func JSON(w io.Writer, rep *experiment.Report) error { return indented(w, rep) }

// WriteJSONFile writes the report to path, creating its directory.
func WriteJSONFile(path string, rep *experiment.Report) error {
	return writeJSONFile(path, "results", rep)
}

func indented(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// writeJSONFile writes v as indented JSON to path, creating its
// directory; what names the file in errors.
func writeJSONFile(path, what string, v any) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	if err := indented(f, v); err != nil {
		f.Close()
		return fmt.Errorf("%s %s: %w", what, path, err)
	}
	return f.Close()
}

// resultsAccepted is what ReadJSONFile reads, as its errors name it.
const resultsAccepted = "a results.json that herdbench stampede or run wrote, such as herdbench-results/20261128-101500/results.json"

// ReadJSONFile reads a results file that JSON or WriteJSONFile wrote, of
// this version's schema or v1's. A v1 file keeps its schema and its
// verdicts as written (degraded among them): they were judged by v1's
// rule, and no word of it is read as v2's. A file it cannot read is a
// herd.FieldError at the file (and its line, where the JSON says), naming
// the file it reads.
func ReadJSONFile(path string) (*experiment.Report, error) {
	b, err := herd.ReadFile(path, resultsAccepted)
	if err != nil {
		return nil, err
	}
	bad := func(err error, format string, args ...any) error {
		return &herd.FieldError{File: path, Line: jsonLine(b, err), Err: err, Msg: fmt.Sprintf(format, args...) + " (accepted: " + resultsAccepted + ")"}
	}
	if len(bytes.TrimSpace(b)) == 0 {
		return nil, bad(nil, "empty")
	}
	var head struct {
		Schema string `json:"schema"`
	}
	var syntax *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch err := json.Unmarshal(b, &head); {
	case errors.As(err, &syntax):
		return nil, bad(err, "not JSON at column %d: %v", jsonColumn(b, syntax.Offset), err)
	case errors.As(err, &typ) && typ.Field == "":
		return nil, bad(err, "not a results file: a JSON %s, where one is an object", typ.Value)
	case err != nil:
		return nil, bad(err, "not a results file: %s is a JSON %s", typ.Field, typ.Value)
	case strings.HasPrefix(head.Schema, "herdbench.sweep/"):
		return nil, bad(nil, "a sweep's results (schema %s), which report does not read: sweep -o renders a sweep's reports", head.Schema)
	case head.Schema == "":
		return nil, bad(nil, "not a results file: it has no schema")
	case head.Schema != result.Schema && head.Schema != result.SchemaV1:
		return nil, &herd.FieldError{File: path, Msg: fmt.Sprintf("schema %q (accepted: %s, as herdbench stampede writes it, or %s, read with its own verdict words)",
			head.Schema, result.Schema, result.SchemaV1)}
	}
	var rep experiment.Report
	if err := json.Unmarshal(b, &rep); errors.As(err, &typ) {
		return nil, bad(err, "not a results file: %s is a JSON %s, where a results file has %s", typ.Field, typ.Value, jsonKind(typ.Type))
	} else if err != nil {
		return nil, bad(err, "not a results file: %v", err)
	}
	// a run writes every arm it measured, and a partial run says so
	if len(rep.Arms) == 0 && !rep.Partial {
		return nil, bad(nil, "no arms, and not partial: a run writes each arm it measured")
	}
	for i, a := range rep.Arms {
		if a.Name == "" {
			return nil, bad(nil, "arms[%d] has no name (null, or an arm without one)", i)
		}
	}
	if err := checkResults(path, b, &rep); err != nil {
		return nil, err
	}
	return &rep, nil
}

// jsonLine is the line of the JSON b where err, a decoding error, is;
// 0 when err has no offset.
func jsonLine(b []byte, err error) int {
	var syntax *json.SyntaxError
	var typ *json.UnmarshalTypeError
	offset := int64(-1)
	switch {
	case errors.As(err, &syntax):
		offset = syntax.Offset
	case errors.As(err, &typ):
		offset = typ.Offset
	}
	if offset < 0 || offset > int64(len(b)) {
		return 0
	}
	return bytes.Count(b[:offset], []byte("\n")) + 1
}

// jsonColumn is the column, from 1, of offset in b.
func jsonColumn(b []byte, offset int64) int {
	offset = min(max(offset, 0), int64(len(b)))
	return int(offset) - (bytes.LastIndexByte(b[:offset], '\n') + 1)
}

// jsonKind is what JSON value t reads, for errors.
func jsonKind(t reflect.Type) string {
	switch t.Kind() {
	case reflect.Slice, reflect.Array:
		return "a list"
	case reflect.Struct, reflect.Map, reflect.Pointer:
		return "an object"
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	}
	return "a number"
}
