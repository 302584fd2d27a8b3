package bench

import (
	"fmt"
	"testing"
	"time"
)

func TestPercentile(t *testing.T) {
	s := []float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}
	for _, c := range []struct{ p, want float64 }{{0, 1}, {50, 5.5}, {90, 9.1}, {100, 10}} {
		t.Run(fmt.Sprint(c.p), func(t *testing.T) {
			if got := Percentile(s, c.p); got < c.want-1e-9 || got > c.want+1e-9 {
				t.Errorf("p%v = %v, want %v", c.p, got, c.want)
			}
		})
	}
	if Percentile(nil, 50) != 0 || Median([]float64{3, 1, 2}) != 2 {
		t.Error("empty input gives 0; the median of 3, 1, 2 is 2")
	}
}

func TestSummarize(t *testing.T) {
	var ds []time.Duration
	for i := 1; i <= 100; i++ {
		ds = append(ds, time.Duration(i)*time.Millisecond)
	}
	l := Summarize(ds)
	if l.N != 100 || l.P50MS != 50.5 || l.MaxMS != 100 || l.MeanMS != 50.5 {
		t.Fatalf("summary = %+v", l)
	}
	if l.P99MS < 99 || l.P99MS > 100 || l.P90MS < 90 || l.P90MS > 91 {
		t.Fatalf("summary = %+v", l)
	}
	if (Summarize(nil) != Latency{}) {
		t.Fatal("no durations give a zero summary")
	}
}
