// Goroutine labels for test_go_labels: two goroutines run main.labelled under
// pprof.Do with labels worker=alpha / worker=beta, kind=spin and note=60 x's
// (longer than a profiler keeps), the main goroutine runs main.bare with none,
// for SECONDS, after 300 ms asleep (a profiler's load of the program ends
// meanwhile: samples from its start on can carry labels).  Each prints how many
// rounds it ran.
// Usage: golabels SECONDS ("1.5c": until the process has had that much CPU, so a
// test knows how many samples to expect however busy the machine)
package main

import (
	"context"
	"fmt"
	"os"
	"runtime/pprof"
	"strings"
	"sync"
	"time"
)

var sink int

//go:noinline
func burn(n int) int {
	s := 0
	for i := 0; i < n; i++ {
		s += i*i ^ s
	}
	return s
}

//go:noinline
func labelled(deadline time.Time) int {
	rounds := 0
	for !over(deadline) {
		sink += burn(200000)
		rounds++
	}
	return rounds
}

//go:noinline
func bare(deadline time.Time) int {
	rounds := 0
	for !over(deadline) {
		sink += burn(200000)
		rounds++
	}
	return rounds
}

func main() {
	secs := parseSeconds(os.Args[1])
	time.Sleep(300 * time.Millisecond)
	deadline := time.Now().Add(time.Duration(secs * float64(time.Second)))
	var wg sync.WaitGroup
	for _, name := range []string{"alpha", "beta"} {
		wg.Add(1)
		go func(name string) {
			defer wg.Done()
			pprof.Do(context.Background(), pprof.Labels("worker", name, "kind", "spin",
				"note", strings.Repeat("x", 60)),
				func(context.Context) {
					fmt.Fprintf(os.Stderr, "%s rounds %d\n", name, labelled(deadline))
				})
		}(name)
	}
	fmt.Fprintf(os.Stderr, "bare rounds %d\n", bare(deadline))
	wg.Wait()
}
