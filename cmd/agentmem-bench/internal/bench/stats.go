package bench

import (
	"math"
	"slices"
	"time"
)

// Latency summarises the durations of many operations, in milliseconds.
type Latency struct {
	N      int     `json:"n"`
	MeanMS float64 `json:"mean_ms"`
	P50MS  float64 `json:"p50_ms"`
	P90MS  float64 `json:"p90_ms"`
	P99MS  float64 `json:"p99_ms"`
	MaxMS  float64 `json:"max_ms"`
}

// Summarize computes the latency summary of ds. Percentiles interpolate linearly between the
// closest ranks (numpy's default); an empty input gives zeros.
func Summarize(ds []time.Duration) Latency {
	if len(ds) == 0 {
		return Latency{}
	}
	ms := make([]float64, len(ds))
	var sum float64
	for i, d := range ds {
		ms[i] = float64(d) / float64(time.Millisecond)
		sum += ms[i]
	}
	slices.Sort(ms)
	return Latency{
		N:      len(ms),
		MeanMS: sum / float64(len(ms)),
		P50MS:  Percentile(ms, 50),
		P90MS:  Percentile(ms, 90),
		P99MS:  Percentile(ms, 99),
		MaxMS:  ms[len(ms)-1],
	}
}

// Percentile is the p-th percentile (0 to 100) of sorted, interpolating linearly between the
// closest ranks. It is 0 for an empty input.
func Percentile(sorted []float64, p float64) float64 {
	if len(sorted) == 0 {
		return 0
	}
	pos := p / 100 * float64(len(sorted)-1)
	lo := int(math.Floor(pos))
	hi := int(math.Ceil(pos))
	if lo == hi {
		return sorted[lo]
	}
	return sorted[lo] + (sorted[hi]-sorted[lo])*(pos-float64(lo))
}

// Median is the median of xs (not necessarily sorted), 0 for none.
func Median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	return Percentile(s, 50)
}
