package local

import "testing"

// Picked ports lie below the kernel's ephemeral range, where no outgoing
// connection can take them between the pick and the part's listen.
func TestFreePortsAreBelowTheEphemeralRange(t *testing.T) {
	lo := ephemeralLow()
	if lo <= lowestPort+100 {
		t.Skipf("the ephemeral range starts at %d: no room below it", lo)
	}
	for range 20 {
		p, err := freePort()
		if err != nil {
			t.Fatal(err)
		}
		if p < lowestPort || p >= lo {
			t.Errorf("freePort() = %d; want %d <= port < %d", p, lowestPort, lo)
		}
	}
}
