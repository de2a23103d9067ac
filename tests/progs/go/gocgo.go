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
	"strconv"
	"syscall"
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

// Whether the process has used cpu of CPU time (0: whether deadline has passed).
func over(deadline time.Time, cpu time.Duration) bool {
	if cpu == 0 {
		return !time.Now().Before(deadline)
	}
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return true
	}
	return time.Duration(ru.Utime.Nano()+ru.Stime.Nano()) >= cpu
}

//go:noinline
func work(deadline time.Time, cpu time.Duration) {
	for !over(deadline, cpu) {
		sink += uint64(C.c_spin(2000000))
		sink += mixGo(200000)
	}
}

func main() {
	secs, cpu := 1.0, time.Duration(0)
	if len(os.Args) > 1 {
		arg := os.Args[1]
		inCPU := len(arg) > 0 && arg[len(arg)-1] == 'c'
		if inCPU {
			arg = arg[:len(arg)-1]
		}
		secs, _ = strconv.ParseFloat(arg, 64)
		if inCPU {
			cpu = time.Duration(secs * float64(time.Second))
		}
	}
	work(time.Now().Add(time.Duration(secs*float64(time.Second))), cpu)
}
