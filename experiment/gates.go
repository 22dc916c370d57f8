package experiment

import (
	"reflect"
	"slices"

	"github.com/herdbench/herdbench/gates"
)

// GatePaths lists every path a gate may name: the numbers of an arm's
// results, sorted.
func GatePaths() []string {
	var a ArmResult
	fill(reflect.ValueOf(&a).Elem())
	nums, _ := gates.Numbers(a)
	paths := make([]string, 0, len(nums))
	for p := range nums {
		paths = append(paths, p)
	}
	slices.Sort(paths)
	return paths
}

// fill sets every nil pointer in v, recursively, so that every field of a
// results struct shows in its JSON.
func fill(v reflect.Value) {
	switch v.Kind() {
	case reflect.Pointer:
		if v.IsNil() {
			v.Set(reflect.New(v.Type().Elem()))
		}
		fill(v.Elem())
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				fill(v.Field(i))
			}
		}
	}
}

// CheckGates evaluates gs on every finished arm of rep.
func CheckGates(gs []gates.Gate, arms []ArmResult) []gates.Result {
	named := make([]gates.Arm, 0, len(arms))
	for _, a := range arms {
		nums, _ := gates.Numbers(a)
		named = append(named, gates.Arm{Name: a.Name, Figures: nums})
	}
	if out := gates.Check(gs, named); out != nil {
		return out
	}
	return []gates.Result{}
}

// Passed says whether the run passes: every gate held and no arm aborted.
func (r *Report) Passed() bool {
	for _, a := range r.Arms {
		if a.Aborted != nil {
			return false
		}
	}
	return gates.Passed(r.Gates)
}
