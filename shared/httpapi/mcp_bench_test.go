package httpapi_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"
	"time"
)

// BenchmarkToolCall compares one recall through the mcp function (tools/call recall_memory,
// stateless, no initialize) with the same recall through the recall function, over real HTTP,
// at 1 and 8 concurrent clients; it reports the p50 and p99 latency of a call.
//
//	go test ./shared/httpapi -run '^$' -bench BenchmarkToolCall -benchtime 400x
func BenchmarkToolCall(b *testing.B) {
	e := buildEnv(b, envConfig{})
	ts := httptest.NewServer(e.h)
	b.Cleanup(ts.Close)
	u := e.newUser("")
	for i := range 50 {
		body := fmt.Sprintf(`{"op":"create","content":"Fact number %d about the user's preferences and plans."}`, i)
		req, _ := http.NewRequest(http.MethodPost, ts.URL+"/v1/memories", bytes.NewReader([]byte(body)))
		req.Header.Set("Authorization", "Bearer "+u.token)
		req.Header.Set("Content-Type", "application/json")
		res, err := http.DefaultClient.Do(req)
		if err != nil || res.StatusCode >= 300 {
			b.Fatalf("create memory: %v %v", err, res)
		}
		res.Body.Close()
	}
	direct := []byte(`{"query":"preferences and plans","k":10}`)
	viaMCP, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "tools/call",
		"params": map[string]any{"name": "recall_memory", "arguments": map[string]any{"query": "preferences and plans", "k": 10}}})
	for _, c := range []struct {
		name, path string
		body       []byte
	}{{"direct", "/v1/recall", direct}, {"mcp", "/v1/mcp", viaMCP}} {
		for _, clients := range []int{1, 8} {
			b.Run(fmt.Sprintf("%s/clients=%d", c.name, clients), func(b *testing.B) {
				var mu sync.Mutex
				lat := make([]time.Duration, 0, b.N)
				run := func() {
					req, _ := http.NewRequest(http.MethodPost, ts.URL+c.path, bytes.NewReader(c.body))
					req.Header.Set("Authorization", "Bearer "+u.token)
					req.Header.Set("Content-Type", "application/json")
					req.Header.Set("Accept", "application/json, text/event-stream")
					start := time.Now()
					res, err := http.DefaultClient.Do(req)
					if err != nil {
						b.Error(err)
						return
					}
					io.Copy(io.Discard, res.Body) //nolint:errcheck
					res.Body.Close()
					d := time.Since(start)
					if res.StatusCode != 200 {
						b.Errorf("status %d", res.StatusCode)
					}
					mu.Lock()
					lat = append(lat, d)
					mu.Unlock()
				}
				b.ResetTimer()
				if clients == 1 {
					for range b.N {
						run()
					}
				} else {
					var wg sync.WaitGroup
					next := make(chan struct{})
					for range clients {
						wg.Go(func() {
							for range next {
								run()
							}
						})
					}
					for range b.N {
						next <- struct{}{}
					}
					close(next)
					wg.Wait()
				}
				b.StopTimer()
				slices.Sort(lat)
				if len(lat) > 0 {
					b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
					b.ReportMetric(float64(lat[min(len(lat)-1, len(lat)*99/100)].Microseconds())/1000, "p99-ms")
				}
			})
		}
	}
}
