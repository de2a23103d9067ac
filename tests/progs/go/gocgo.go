// A cgo test program (test_go_names): main.main -> main.work calls C (c_spin ->
// c_leaf, C code with .eh_frame, run on the system stack through runtime.asmcgocall)
// and main.mixGo. Usage: gocgo SECONDS ("1.5c": of its CPU time, so a test knows how many
// cpu-clock samples to expect however busy the machine)
package main

/*
#include <stdint.h>
__attribute__((noinline)) static uint64_t c_leaf(uint64_t n) { uint64_t s = 0; for (uint64_t i = 0; i < n; i++) s += i * i ^ (s >> 3); return s; }
__attribute__((noinline)) static uint64_t c_spin(uint64_t n) { return c_leaf(n) + 1; }
*/
import "C"

import (
	"os"
	"time"
)

var sink uint64

// Go code beside the C: its frames are walked by their pcsp rows
//
//go:noinline
func mixGo(n uint64) uint64 {
	var s uint64
	for i := uint64(0); i < n; i++ {
		s += i ^ (s >> 2)
	}
	return s
}

//go:noinline
func work(deadline time.Time) {
	for !over(deadline) {
		sink += uint64(C.c_spin(2000000))
		sink += mixGo(200000)
	}
}

func main() {
	secs := 1.0
	if len(os.Args) > 1 {
		secs = parseSeconds(os.Args[1])
	}
	work(time.Now().Add(time.Duration(secs * float64(time.Second))))
}
