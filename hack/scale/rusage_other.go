//go:build !linux

package main

import "time"

// measurable is false: the harness reads Linux rusage and thread clocks.
const measurable = false

func processCPU() time.Duration { return 0 }
func threadCPU() time.Duration  { return 0 }
func peakRSS() int64            { return 0 }

func kernelCPU() (time.Duration, int64) { return 0, 0 }
