package experiment

import (
	"time"
)

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

// filedMark is how far, in intended time, a recorder's requests are all
// filed. The schedule numbers its requests in the order they are due
// (load.Record.Seq), so once every number below next has its record,
// every request due up to upTo, next-1's instant, has been filed. A
// generator running late holds it back: requests due in a row but not yet
// sent are missing from it, and a row missing its requests reads as an
// empty one, which is within any band. The live judge reads no row past
// it (ending.answeredBy).
type filedMark struct {
	next uint64 // the lowest Seq not yet filed
	// ahead[i] is the instant (Unix ns) of Seq next+i once it is filed, 0
	// until then: requests end out of order, a window as wide as the
	// requests in flight
	ahead []int64
	upTo  int64 // Seq next-1's instant (Unix ns); 0 before Seq 0 is filed
}

// maxAhead bounds the window: a Seq further ahead than this (a stream
// that lost a stripe's records) is not held, and the mark stays where it
// is, which only keeps the live judge from reading past the gap.
const maxAhead = 1 << 22

// add notes request seq, due at intended, filed.
func (m *filedMark) add(seq uint64, intended time.Time) {
	if seq == m.next && len(m.ahead) == 0 { // in order: the most common
		m.upTo, m.next = intended.UnixNano(), m.next+1
		return
	}
	if seq < m.next || seq-m.next >= maxAhead {
		return // filed twice (never, by the schedule's numbering), or past the window
	}
	i := int(seq - m.next)
	for len(m.ahead) <= i {
		m.ahead = append(m.ahead, 0)
	}
	m.ahead[i] = intended.UnixNano()
	for len(m.ahead) > 0 && m.ahead[0] != 0 {
		m.upTo, m.next, m.ahead = m.ahead[0], m.next+1, m.ahead[1:]
	}
}

// filedUpTo is the instant up to which every request of the recorder's
// schedule has been filed; zero before its first.
func (r *Recorder) filedUpTo() time.Time {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.filed.upTo == 0 {
		return time.Time{}
	}
	return time.Unix(0, r.filed.upTo)
}
