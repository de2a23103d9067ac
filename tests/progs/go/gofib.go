// A pure Go test program with known call chains (test_gopclntab, docs/runtimes.md): main.main ->
// main.work -> main.fib (deep recursion), main.sumSquares inlined into main.work, goroutines running
// main.spin -> main.fib beside it. gofib SECONDS ("1.5c": of its CPU time) [GOROUTINES [clock]]
package main

import (
	"os"
	"strconv"
	"sync"
	"time"
)

var sink int

//go:noinline
func fib(n int) int {
	if n < 2 {
		return n
	}
	return fib(n-1) + fib(n-2)
}

// small enough for the compiler to inline into work: its loop runs as main.work's code
func sumSquares(n int) int {
	s := 0
	for i := 0; i < n; i++ {
		s += i * i
	}
	return s
}

//go:noinline
func work(deadline time.Time) int {
	s := 0
	for !over(deadline) {
		s += fib(22)
		s += sumSquares(200000)
	}
	return s
}

// gofib's clock mode: main.main -> main.clock -> time.Now, most of its time in the
// vDSO, which Go calls on the system stack (test_go_names).
//
//go:noinline
func clock(deadline time.Time) int {
	s := 0
	for i := 1; ; i++ {
		now := time.Now()
		// of its CPU time: the rusage call now and then, so the vDSO keeps most samples
		if cpuLimit == 0 && now.After(deadline) || cpuLimit != 0 && i%4096 == 0 && over(deadline) {
			return s
		}
		s += now.Nanosecond() & 1
	}
}

//go:noinline
func spin(deadline time.Time, wg *sync.WaitGroup) {
	defer wg.Done()
	for !over(deadline) {
		sink += fib(20)
	}
}

func main() {
	secs, goroutines := 1.0, 2
	if len(os.Args) > 1 {
		secs = parseSeconds(os.Args[1])
	}
	if len(os.Args) > 2 {
		goroutines, _ = strconv.Atoi(os.Args[2])
	}
	deadline := time.Now().Add(time.Duration(secs * float64(time.Second)))
	var wg sync.WaitGroup
	for i := 0; i < goroutines; i++ {
		wg.Add(1)
		go spin(deadline, &wg)
	}
	if len(os.Args) > 3 && os.Args[3] == "clock" {
		sink += clock(deadline)
	} else {
		sink += work(deadline)
	}
	wg.Wait()
}
