package api

import (
	"testing"

	"github.com/herdbench/herdbench/testbed/replica"
)

// Every default mitigation but none has its hooks here: its words in
// package replica and no type over its knobs in hooksOf would make it
// none under another name.
func TestEveryDefaultMitigationHasItsHooks(t *testing.T) {
	for _, m := range replica.DefaultMitigations().Mitigations() {
		if _, words := hooksOf(m).(replica.Mitigation); words != (m.Kind() == replica.KindNone) {
			t.Errorf("hooksOf(%s) = %T; want a type of this package over its knobs, none only for %s", m.Name(), hooksOf(m), replica.KindNone)
		}
	}
}
