package api

import (
	"encoding/json"
	"net/http"
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
