package mem0_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/agentmem/agentmem/shared/adapter"
	"github.com/agentmem/agentmem/shared/adapter/adaptertest"
	"github.com/agentmem/agentmem/shared/adapter/mem0"
	"github.com/agentmem/agentmem/shared/memory"
)

// FuzzMem0Answer: whatever Mem0 answers (any status, headers and body), the adapter never
// panics and returns as soon as the answer is read. A delivery (an add, or a deletion) is
// done on a 2xx (and a deletion on a 404: nothing is left), tried again on 408, 409, 429 and
// 5xx (asking for a wait only on 429 and 503, never longer than upstream.MaxRetryAfter) and
// dead on anything else. A search gives, on a 2xx, at most k memories of the user asked
// about, each with text and a metadata object naming Mem0's id, or an error. No error holds
// the answer's body or the API key. In the seeds' bodies $USER stands for the user's id.
func FuzzMem0Answer(f *testing.F) {
	for _, s := range []struct {
		status                   uint16
		retryAfter, retryAfterMs string
		name, value              string
		body                     string
		repeat                   uint8
		deletion                 bool
	}{
		{0, "", "", "", "", `{"results":[{"id":"m1","event":"ADD","data":{"memory":"Likes tea"}}]}`, 0, false},
		{0, "", "", "", "", `{"message":"Memories deleted successfully!"}`, 0, true},
		{4, "", "", "", "", `[{"id":"8f0c2c1e-0d7e-4f57-8a39-0c9a0c6c1a01","memory":"Likes tea","user_id":"$USER","agent_id":"bot","metadata":{"k":1},"categories":["food"],"score":0.9,"created_at":"2026-11-26T09:00:00Z"}]`, 0, false},
		{0, "", "", "", "", `{"memories":[{"id":"m2","memory":"Lives in Lyon","user_id":"$USER","metadata":[1],"score":1e300}]}`, 0, false},
		{0, "", "", "", "", `{"results":[{"id":"m3","memory":"  ","user_id":"$USER"},{"id":"","memory":"x","user_id":"$USER"},{"id":"m4","memory":"other","user_id":"someone"}]}`, 0, false},
		{0, "", "", "", "", `{"results":null}`, 0, false},
		{0, "", "", "", "", `[{"id":"m5","memory":"x","user_id":"$USER","created_at":"yesterday"}]`, 0, false},
		{204, "", "", "", "", `{"detail":"Not found"}`, 0, true},
		{204, "", "", "", "", `{"detail":"Not found"}`, 0, false},
		{201, "", "", "", "", `{"detail":"Invalid API key"}`, 0, false},
		{203, "", "", "", "", "", 0, true},
		{200, "", "", "", "", `{"error":"bad filters"}`, 0, false},
		{229, "7", "", "", "", "slow down", 0, false},
		{303, "Wed, 21 Oct 2065 07:28:00 GMT", "", "", "", "", 0, true},
		{303, "1e400", "-1", "", "", "", 0, false},
		{300, "", "", "", "", "the card 4111 1111 1111 1111 of the user", 0, false},
		{208, "", "", "", "", "", 0, false},
		{209, "", "", "", "", "", 0, true},
		{102, "", "", "Location", "https://elsewhere.example.com/", "", 0, false},
		{0, "", "", "Content-Length", "100", `[]`, 0, false},
		{0, "", "", "Content-Encoding", "gzip", `[]`, 0, false},
		{0, "", "", "", "", `[{"id":"m6","memory":"0123456789","user_id":"$USER"},`, 255, false},
		{750, "", "", "", "", "", 0, false},
	} {
		f.Add(s.status, s.retryAfter, s.retryAfterMs, s.name, s.value, []byte(s.body), s.repeat, s.deletion, uint8(5))
	}
	srv := adaptertest.NewServer(f)
	m, err := mem0.New(mem0.Config{APIKey: key, URL: srv.URL, Timeout: 5 * time.Second, RecallTimeout: 5 * time.Second})
	if err != nil {
		f.Fatal(err)
	}
	add, del := turn("I like green tea.", "Noted."), turn()
	del.Type = adapter.SessionDeleted
	sc := memory.Scope{TenantID: "acme", UserID: uuid.NewString(), Agent: "bot"}
	f.Fuzz(func(t *testing.T, status uint16, retryAfter, retryAfterMs, name, value string, body []byte, repeat uint8, deletion bool, k uint8) {
		body = bytes.ReplaceAll(body, []byte("$USER"), []byte(sc.UserID))
		a := adaptertest.FuzzAnswer(status, retryAfter, retryAfterMs, name, value, body, repeat)
		srv.Answer(a)

		ev := add
		if deletion {
			ev = del
		}
		err := m.Deliver(t.Context(), ev)
		got := adaptertest.OutcomeOf(err)
		if err != nil {
			adaptertest.CheckFailure(t, err, a, key)
		}
		if d := adapter.RetryAfter(err); d > 0 && a.Status != http.StatusTooManyRequests && a.Status != http.StatusServiceUnavailable {
			t.Fatalf("status %d asks to wait %v", a.Status, d)
		}
		if a.Plain() {
			if want := mem0Outcome(a.Status, deletion); got != want {
				t.Fatalf("status %d (deletion %v): %v (%v), want %v", a.Status, deletion, got, err, want)
			}
		}

		n := int(k%20) + 1
		hits, err := m.Search(t.Context(), sc, "tea", n)
		if err != nil {
			adaptertest.CheckFailure(t, err, a, key)
			if hits != nil {
				t.Fatalf("an error (%v) and %d hits", err, len(hits))
			}
			return
		}
		if a.Plain() && (a.Status < 200 || a.Status > 299) {
			t.Fatalf("status %d: a search without an error", a.Status)
		}
		if len(hits) > n || (len(hits) > 0 && !bytes.Contains(a.Body, []byte(sc.UserID))) {
			t.Fatalf("%d hits for k %d from %q", len(hits), n, a.Body)
		}
		for _, h := range hits {
			var meta map[string]any
			if strings.TrimSpace(h.Content) == "" || h.Source != memory.HitMemory || h.Origin != mem0.OriginMem0 ||
				json.Unmarshal(h.Metadata, &meta) != nil || meta == nil || meta["mem0_id"] == "" || meta["mem0_id"] == nil {
				t.Fatalf("hit %+v (metadata %s) from %q", h, h.Metadata, a.Body)
			}
			if _, err := json.Marshal(h); err != nil {
				t.Fatalf("hit %+v does not marshal: %v", h, err)
			}
		}
	})
}

// mem0Outcome is what a delivery's answer of status must come to, as Mem0's API documents its
// statuses.
func mem0Outcome(status int, deletion bool) adaptertest.Outcome {
	switch {
	case status >= 200 && status <= 299, deletion && status == http.StatusNotFound:
		return adaptertest.Delivered
	case status == http.StatusRequestTimeout, status == http.StatusConflict, status == http.StatusTooManyRequests, status >= 500:
		return adaptertest.Retry
	}
	return adaptertest.Dead
}
