// SECONDS for the Go test programs (gofib, gocgo, golabels), built beside each: wall
// seconds, or ending in c ("1.5c") the process's CPU time, so a test knows how many
// cpu-clock samples to expect however busy the machine (the program's start, growing
// its goroutines' stacks, is then a fixed share of them).
package main

import (
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Set by parseSeconds for SECONDS ending in c: the process's CPU time to run for.
var cpuLimit time.Duration

// The seconds of arg; with a trailing c, cpuLimit too.
func parseSeconds(arg string) float64 {
	secs, _ := strconv.ParseFloat(strings.TrimSuffix(arg, "c"), 64)
	if strings.HasSuffix(arg, "c") {
		cpuLimit = time.Duration(secs * float64(time.Second))
	}
	return secs
}

// Whether the run is over: the process has had cpuLimit of CPU, or, without one,
// deadline has passed.
func over(deadline time.Time) bool {
	if cpuLimit == 0 {
		return !time.Now().Before(deadline)
	}
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return true
	}
	return time.Duration(ru.Utime.Nano()+ru.Stime.Nano()) >= cpuLimit
}
