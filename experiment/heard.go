package experiment

import "time"

// Hearer is a Prepared whose requests reach the arm's recorder a while
// after they end, such as the workers' (streamed every 100 ms): every
// request that ended before Heard has been filed. The live figures of the
// stop conditions and the live judge of --after auto read up to it, so a
// request still on its way is not taken for one never answered.
type Hearer interface {
	Heard() time.Time
}

// heardOf is, for the load p, the instant its requests are filed up to
// at now: now itself for a load sent from this process.
func heardOf(p Prepared) func(now time.Time) time.Time {
	h, ok := p.(Hearer)
	if !ok {
		return nil
	}
	return func(now time.Time) time.Time {
		if at := h.Heard(); at.Before(now) {
			return at
		}
		return now
	}
}

// heardAt is when the requests are filed up to at now, by heard (nil:
// now, each filed as it ends).
func heardAt(heard func(time.Time) time.Time, now time.Time) time.Time {
	if heard == nil {
		return now
	}
	return heard(now)
}
