package result

import (
	"time"
)

// Windows cut an arm's load at T and at the trigger's end (its
// trigger.ended_ms): before, during and after the trigger. Each holds
// rates per second from the clients' records, summed over the timeline's
// rows (each row's requests by intended send time): what the open model
// offered, the attempts sent, and the goodput, the answers that were ok
// (2xx within the client's timeout). The before window's goodput is the
// baseline a recovery is judged against.
type Windows struct {
	Before *Window `json:"before"` // -before to T; null when no row is there
	During *Window `json:"during"` // T to the trigger's end, whole rows; null when it ended within T's row, or never said
	After  *Window `json:"after"`  // the trigger's end (T when it never said) to the end of the arm, or to its stop
}

// Window is one span of rows and its rates.
type Window struct {
	FromMS      int64   `json:"from_ms"` // its first row's t_ms
	ToMS        int64   `json:"to_ms"`   // the end of its last row, from T
	OfferedRPS  float64 `json:"offered_rps"`
	AttemptsRPS float64 `json:"attempts_rps"`
	GoodputRPS  float64 `json:"goodput_rps"`
}

// WindowsOf cuts rows at T and at endedMS (nil: the trigger never said).
// A row belongs to the window its start falls in.
func WindowsOf(rows []Row, endedMS *int64) *Windows {
	end := int64(0)
	if endedMS != nil {
		end = max(*endedMS, 0)
	}
	row := RowWidth.Milliseconds()
	return &Windows{
		Before: WindowOf(rows, func(t int64) bool { return t < 0 }),
		During: WindowOf(rows, func(t int64) bool { return t >= 0 && t+row <= end }),
		After:  WindowOf(rows, func(t int64) bool { return t >= 0 && t+row > end }),
	}
}

// WindowOf sums the rows whose start in selects; nil when there is none.
func WindowOf(rows []Row, in func(tms int64) bool) *Window {
	var w *Window
	var n int64
	var offered, attempts, ok int64
	for _, r := range rows {
		if !in(r.TMS) {
			continue
		}
		if w == nil {
			w = &Window{FromMS: r.TMS}
		}
		w.ToMS = r.TMS + RowWidth.Milliseconds()
		n++
		offered, attempts, ok = offered+r.Requests, attempts+r.Attempts, ok+r.OK
	}
	if w == nil {
		return nil
	}
	secs := (time.Duration(n) * RowWidth).Seconds()
	w.OfferedRPS = Round2(float64(offered) / secs)
	w.AttemptsRPS = Round2(float64(attempts) / secs)
	w.GoodputRPS = Round2(float64(ok) / secs)
	return w
}
