// A cgo test program (test_go_names): main.main -> main.work calls C (c_spin ->
// c_leaf, C code with .eh_frame, run on the system stack through runtime.asmcgocall)
// and main.fib. Usage: gocgo SECONDS
package main

/*
#include <stdint.h>
__attribute__((noinline)) static uint64_t c_leaf(uint64_t n) { uint64_t s = 0; for (uint64_t i = 0; i < n; i++) s += i * i ^ (s >> 3); return s; }
__attribute__((noinline)) static uint64_t c_spin(uint64_t n) { return c_leaf(n) + 1; }
*/
import "C"

import (
	"os"
	"strconv"
	"time"
)

var sink uint64

//go:noinline
func fib(n int) int {
	if n < 2 {
		return n
	}
	return fib(n-1) + fib(n-2)
}

//go:noinline
func work(deadline time.Time) {
	for time.Now().Before(deadline) {
		sink += uint64(C.c_spin(2000000))
		sink += uint64(fib(20))
	}
}

func main() {
	secs := 1.0
	if len(os.Args) > 1 {
		secs, _ = strconv.ParseFloat(os.Args[1], 64)
	}
	work(time.Now().Add(time.Duration(secs * float64(time.Second))))
}
