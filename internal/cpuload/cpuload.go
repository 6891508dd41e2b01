// Package cpuload loads the machine for a test the way a crawler host is
// loaded (goroutines parsing pages), so that a test of pacing sees
// sleepers woken late and answers read late, as a crawler does.
package cpuload

import (
	"runtime"
	"sync"
	"testing"
)

// Spin keeps n goroutines busy in loops until t ends.
func Spin(t testing.TB, n int) {
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			x := 0
			for {
				select {
				case <-stop:
					runtime.KeepAlive(x)
					return
				default:
				}
				for i := range 10000 {
					x += i
				}
			}
		})
	}
	t.Cleanup(func() { close(stop); wg.Wait() })
}
