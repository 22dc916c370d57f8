package result

import (
	"reflect"
	"testing"
)

// The windows cut the rows at T and at the trigger's end, a row going
// where its start falls, and turn their counts into rates per second.
func TestWindowsCutAtTAndTheTriggersEnd(t *testing.T) {
	var rows []Row
	for tms := int64(-300); tms < 500; tms += 100 {
		rows = append(rows, Row{TMS: tms, Requests: 10, Attempts: 12, OK: 9})
	}
	at := func(ms int64) *int64 { return &ms }
	w := func(from, to int64) *Window {
		return &Window{FromMS: from, ToMS: to, OfferedRPS: 100, AttemptsRPS: 120, GoodputRPS: 90}
	}
	for _, c := range []struct {
		name  string
		ended *int64
		want  Windows
	}{
		{"a fault of 200 ms", at(200), Windows{Before: w(-300, 0), During: w(0, 200), After: w(200, 500)}},
		{"ended mid-row", at(250), Windows{Before: w(-300, 0), During: w(0, 200), After: w(200, 500)}},
		{"ended within T's row", at(40), Windows{Before: w(-300, 0), After: w(0, 500)}},
		{"never said", nil, Windows{Before: w(-300, 0), After: w(0, 500)}},
		{"outlasting the arm", at(9000), Windows{Before: w(-300, 0), During: w(0, 500)}},
	} {
		if got := WindowsOf(rows, c.ended); !reflect.DeepEqual(*got, c.want) {
			t.Errorf("%s: windowsOf(rows -300..400, ended %v) = %+v; want %+v", c.name, c.ended, *got, c.want)
		}
	}
	if got := WindowOf(nil, func(int64) bool { return true }); got != nil {
		t.Errorf("window of no rows = %+v; want nil", got)
	}
}
