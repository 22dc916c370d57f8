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

// filedMark is how far, in intended time, a recorder's requests are all
// filed. The schedule numbers its requests in the order they are due
// (load.Record.Seq), so once every number below next has its record,
// every request due up to upTo, next-1's instant, has been filed. A
// generator running late holds it back: requests due in a row but not yet
// sent are missing from it, and a row missing its requests reads as an
// empty one, which is within any band. The live judge reads no row past
// it (ending.answeredBy).
type filedMark struct {
	next  uint64               // the lowest Seq not yet filed
	ahead map[uint64]time.Time // Seqs above next filed already: their instants
	upTo  time.Time            // Seq next-1's instant; zero before Seq 0 is filed
}

// add notes request seq, due at intended, filed.
func (m *filedMark) add(seq uint64, intended time.Time) {
	switch {
	case seq > m.next:
		if m.ahead == nil {
			m.ahead = map[uint64]time.Time{}
		}
		m.ahead[seq] = intended
		return
	case seq < m.next:
		return // filed twice: never, by the schedule's numbering
	}
	m.upTo, m.next = intended, m.next+1
	for at, ok := m.ahead[m.next]; ok; at, ok = m.ahead[m.next] {
		delete(m.ahead, m.next)
		m.upTo, m.next = at, m.next+1
	}
}

// filedUpTo is the instant up to which every request of the recorder's
// schedule has been filed; zero before its first.
func (r *Recorder) filedUpTo() time.Time {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.filed.upTo
}
