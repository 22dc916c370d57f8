package local

import "testing"

// Picked ports lie below the kernel's ephemeral range, where no outgoing
// connection can take them between the pick and the part's listen; a
// held port (the harness', a proxy's) in the room at its top, a part's
// below that room, so no part of another testbed takes a held port.
func TestFreePortsAreBelowTheEphemeralRange(t *testing.T) {
	lo := ephemeralLow()
	if lo <= lowestPort+2*heldRoom {
		t.Skipf("the ephemeral range starts at %d: no room below it", lo)
	}
	for range 20 {
		for _, held := range []bool{false, true} {
			p, err := freePort(held)
			if err != nil {
				t.Fatal(err)
			}
			from, to := lowestPort, lo-heldRoom
			if held {
				from, to = lo-heldRoom, lo
			}
			if p < from || p >= to {
				t.Errorf("freePort(held %v) = %d; want %d <= port < %d", held, p, from, to)
			}
		}
	}
}
