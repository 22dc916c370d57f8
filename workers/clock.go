package workers

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"time"
)

// offsetSamples is how many round trips Offset takes; the shortest wins.
const offsetSamples = 8

// Offset measures this machine's clock less the one at base, as NTP does:
// the remote reading against the midpoint of the round trip that fetched
// it, from the shortest of a few round trips. The error bound is half
// that round trip: the remote clock was read somewhere within it.
func Offset(ctx context.Context, c *http.Client, base string) (offset, bound time.Duration, err error) {
	best := time.Duration(-1)
	for range offsetSamples {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+pathClock, nil)
		if err != nil {
			return 0, 0, err
		}
		sent := time.Now()
		resp, err := c.Do(req)
		if err != nil {
			return 0, 0, err
		}
		var r clockReading
		err = json.NewDecoder(resp.Body).Decode(&r)
		resp.Body.Close()
		rtt := time.Since(sent) // monotonic
		if err != nil {
			return 0, 0, fmt.Errorf("%s: %w", pathClock, err)
		}
		if best < 0 || rtt < best {
			// sent.Add keeps its wall reading; r.Now has no monotonic one,
			// so the difference is of wall clocks
			best, offset = rtt, sent.Add(rtt/2).Sub(r.Now)
		}
	}
	return offset, best / 2, nil
}
