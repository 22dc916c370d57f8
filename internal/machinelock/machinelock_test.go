package machinelock

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// waiters counts the requests blocked on this test's lock files, as the
// kernel lists them (/proc/locks marks a blocked request "->").
func waiters(t *testing.T) int {
	t.Helper()
	var inodes []string
	for _, file := range []string{mainFile, turnstileFile} {
		fi, err := os.Stat(filepath.Join(dir, file))
		if err != nil {
			continue // not created yet: nobody waits on it
		}
		inodes = append(inodes, fmt.Sprintf(":%d ", fi.Sys().(*syscall.Stat_t).Ino))
	}
	b, err := os.ReadFile("/proc/locks")
	if err != nil {
		t.Fatalf("no /proc/locks to see who waits: %v", err)
	}
	n := 0
	for _, l := range strings.Split(string(b), "\n") {
		if strings.Contains(l, "->") && slices.ContainsFunc(inodes, func(i string) bool { return strings.Contains(l, i) }) {
			n++
		}
	}
	return n
}

// waitUntil polls cond every millisecond until it holds or 5 s pass.
func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); !cond(); {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within 5s", what)
		}
		time.Sleep(time.Millisecond) // polling, bounded by the deadline
	}
}

// Sharers hold the machine together; a Take waits for them, and once it
// waits, a new sharer waits behind it: the order is A (shared), B (alone),
// then C (shared), never C beside A while B starves.
func TestAWaitingTakeHoldsBackNewSharers(t *testing.T) {
	dir = t.TempDir()
	var (
		mu    sync.Mutex
		order []string
		wg    sync.WaitGroup
	)
	note := func(s string) { mu.Lock(); order = append(order, s); mu.Unlock() }
	noted := func(s string) func() bool {
		return func() bool { mu.Lock(); defer mu.Unlock(); return slices.Contains(order, s) }
	}
	releaseA, releaseB := make(chan struct{}), make(chan struct{})
	wg.Go(func() { t.Run("A shares", func(t *testing.T) { Share(t); note("A"); <-releaseA }) })
	waitUntil(t, "A holds the machine", noted("A"))
	wg.Go(func() { t.Run("B takes", func(t *testing.T) { Take(t); note("B"); <-releaseB }) })
	// B waits for the machine, holding the turnstile; A still shares it
	waitUntil(t, "B waits", func() bool { return waiters(t) == 1 })
	wg.Go(func() { t.Run("C shares", func(t *testing.T) { Share(t); note("C") }) })
	// C either slipped in beside A (the bug) or waits, as B does
	waitUntil(t, "C holds the machine or waits", func() bool { return noted("C")() || waiters(t) == 2 })
	close(releaseA)
	waitUntil(t, "B holds the machine", noted("B"))
	close(releaseB)
	wg.Wait()
	if want := []string{"A", "B", "C"}; !slices.Equal(order, want) {
		t.Errorf("held the machine in the order %v; want %v: a sharer that came after a waiting Take went first", order, want)
	}
}

// Two sharers hold the machine at once; a Take waits until both let go.
func TestSharersShareAndTakeWaitsForAll(t *testing.T) {
	dir = t.TempDir()
	var (
		mu    sync.Mutex
		count int
		wg    sync.WaitGroup
	)
	inside := make(chan struct{})
	release := make(chan struct{})
	for _, name := range []string{"one", "two"} {
		wg.Go(func() {
			t.Run(name, func(t *testing.T) {
				Share(t)
				mu.Lock()
				count++
				if count == 2 {
					close(inside)
				}
				mu.Unlock()
				<-release
			})
		})
	}
	select {
	case <-inside:
	case <-time.After(5 * time.Second):
		t.Fatal("two sharers never held the machine at once")
	}
	took := make(chan struct{})
	wg.Go(func() { t.Run("alone", func(t *testing.T) { Take(t); close(took) }) })
	isClosed := func(c chan struct{}) bool {
		select {
		case <-c:
			return true
		default:
			return false
		}
	}
	waitUntil(t, "the Take holds the machine or waits", func() bool { return isClosed(took) || waiters(t) == 1 })
	if isClosed(took) {
		t.Fatal("Take held the machine while two sharers held it")
	}
	close(release)
	wg.Wait()
	if !isClosed(took) {
		t.Fatal("Take never held the machine after the sharers let go")
	}
}

// A test that shares the machine takes Share again, itself and in a
// subtest, while a Take waits for it: it keeps its share and goes on,
// where waiting at the turnstile behind the Take would wait for itself.
func TestShareAgainBesideAWaitingTake(t *testing.T) {
	dir = t.TempDir()
	var wg sync.WaitGroup
	shares := make(chan struct{})
	took := make(chan struct{})
	wg.Go(func() {
		t.Run("A shares twice", func(t *testing.T) {
			Share(t)
			close(shares)
			waitUntil(t, "B waits", func() bool { return waiters(t) == 1 })
			again := make(chan struct{})
			go func() {
				Share(t)
				t.Run("its subtest", func(t *testing.T) { Share(t) })
				close(again)
			}()
			select {
			case <-again:
			case <-time.After(5 * time.Second):
				t.Error("Share again waited behind the Take that waits for the first")
			}
		})
	})
	<-shares
	wg.Go(func() { t.Run("B takes", func(t *testing.T) { Take(t); close(took) }) })
	wg.Wait()
	select {
	case <-took:
	default:
		t.Error("B never took the machine once A let go")
	}
}

// At most Seats tests share the machine at once: with every seat held, a
// new sharer waits, and it goes on once one is let go, not before.
func TestASharerWaitsForASeat(t *testing.T) {
	dir = t.TempDir()
	seats := Seats
	Seats = 2
	t.Cleanup(func() { Seats = seats })
	var (
		wg       sync.WaitGroup
		held     sync.WaitGroup
		released atomic.Bool
	)
	release := make(chan struct{})
	held.Add(Seats)
	for i := range Seats {
		wg.Go(func() {
			t.Run(fmt.Sprint("holder ", i), func(t *testing.T) {
				Share(t)
				held.Done()
				<-release
				released.Store(true) // before its seat is let go, at the subtest's end
			})
		})
	}
	held.Wait()
	third := make(chan bool, 1)
	wg.Go(func() {
		t.Run("third", func(t *testing.T) {
			Share(t)
			third <- released.Load()
		})
	})
	// a window for a third sharer that slips past the seats to show it
	// holds the machine: one that waits never does
	select {
	case <-time.After(200 * time.Millisecond):
	case early := <-third:
		third <- early
	}
	close(release)
	wg.Wait()
	if !<-third {
		t.Errorf("a third sharer held the machine while %d held its %d seats", Seats, Seats)
	}
}
