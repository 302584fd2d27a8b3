//go:build !unix

package redact

import "time"

// cpuTime is not measured here: the benchmarks report no CPU-time figure.
func cpuTime() time.Duration { return 0 }
