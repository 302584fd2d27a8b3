package webhook_test

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/agentmem/agentmem/shared/adapter"
	"github.com/agentmem/agentmem/shared/adapter/adaptertest"
	"github.com/agentmem/agentmem/shared/adapter/webhook"
	"github.com/agentmem/agentmem/shared/adapter/webhook/webhooktest"
)

// FuzzWebhookAnswer: whatever a webhook receiver, or QStash, answers (any status, headers and
// body), Deliver never panics and returns as soon as the answer is read; a 2xx (from QStash,
// one naming the message it took) is delivered and anything else is tried again, asking for a
// wait only on 429 and 503 and never for longer than upstream.MaxRetryAfter; no error holds
// the answer's body, the URL's query or the QStash token.
func FuzzWebhookAnswer(f *testing.F) {
	for _, s := range []struct {
		status                   uint16
		retryAfter, retryAfterMs string
		name, value              string
		body                     string
		repeat                   uint8
		qstash                   bool
	}{
		{0, "", "", "", "", "", 0, false},
		{4, "", "", "Content-Type", "application/json", `{"messageId":"msg_1"}`, 0, true},
		{1, "", "", "", "", `{"messageId":"msg_1","url":"https://example.com"}`, 0, true},
		{0, "", "", "", "", `[{"messageId":"msg_1"}]`, 0, true},
		{0, "", "", "", "", `{"messageId":""}`, 0, true},
		{0, "", "", "", "", `{"error":"invalid token"}`, 0, true},
		{229, "3", "", "", "", "slow down", 0, false},
		{229, "", "1500", "", "", "", 0, true},
		{303, "Wed, 21 Oct 2065 07:28:00 GMT", "", "", "", "", 0, false},
		{303, "1e400", "NaN", "", "", "", 0, false},
		{229, "-5", "", "", "", "", 0, true},
		{101, "", "", "Location", "https://elsewhere.example.com/hook", "", 0, false},
		{300, "", "", "", "", `{"error":"boom"}`, 0, false},
		{201, "", "", "", "", "the card 4111 1111 1111 1111 of the user", 0, false},
		{0, "", "", "Content-Length", "100", `{"messageId":"m"}`, 0, true},
		{0, "", "", "Content-Length", "1", `{"messageId":"m"}`, 0, true},
		{0, "", "", "Transfer-Encoding", "chunked", "x", 0, false},
		{0, "", "", "Content-Encoding", "gzip", `{"messageId":"m"}`, 0, true},
		{4, "", "", "", "", `{"messageId":"m"}`, 0, true},
		{0, "", "", "", "", "0123456789abcdef", 255, true},
		{700, "", "", "", "", "", 0, false},
	} {
		f.Add(s.status, s.retryAfter, s.retryAfterMs, s.name, s.value, []byte(s.body), s.repeat, s.qstash)
	}
	srv := adaptertest.NewServer(f)
	const token = "qstash-token-of-the-test"
	direct, err := webhook.New(webhook.Config{URL: srv.URL + "/hook?key=url-secret", Secret: webhooktest.NewSecret(), Timeout: 5 * time.Second})
	if err != nil {
		f.Fatal(err)
	}
	qstash, err := webhook.New(webhook.Config{URL: "https://receiver.example.com/hook?key=url-secret", QStashToken: token,
		QStashURL: srv.URL, Timeout: 5 * time.Second})
	if err != nil {
		f.Fatal(err)
	}
	ev := testEvent()
	f.Fuzz(func(t *testing.T, status uint16, retryAfter, retryAfterMs, name, value string, body []byte, repeat uint8, viaQStash bool) {
		a := adaptertest.FuzzAnswer(status, retryAfter, retryAfterMs, name, value, body, repeat)
		srv.Answer(a)
		w := direct
		if viaQStash {
			w = qstash
		}
		err := w.Deliver(t.Context(), ev)
		got := adaptertest.OutcomeOf(err)
		if err != nil {
			adaptertest.CheckFailure(t, err, a, "url-secret", token)
		}
		if got == adaptertest.Dead {
			t.Fatalf("status %d: dead (%v); the webhook adapter retries every failure", a.Status, err)
		}
		if d := adapter.RetryAfter(err); d > 0 && a.Status != http.StatusTooManyRequests && a.Status != http.StatusServiceUnavailable {
			t.Fatalf("status %d asks to wait %v", a.Status, d)
		}
		if !a.Plain() {
			return // the answer the client read is not a: only the properties above hold
		}
		want := adaptertest.Retry
		if a.Status >= 200 && a.Status <= 299 && (!viaQStash || namesMessage(a.Body)) {
			want = adaptertest.Delivered
		}
		if got != want {
			t.Fatalf("status %d, body %q (via QStash %v): %v (%v), want %v", a.Status, a.Body, viaQStash, got, err, want)
		}
		if (a.Status == http.StatusTooManyRequests || a.Status == http.StatusServiceUnavailable) && name == "" &&
			retryAfterMs == "" && wholeSeconds(retryAfter) && adapter.RetryAfter(err) == 0 {
			t.Fatalf("status %d with Retry-After %q asks for no wait (%v)", a.Status, retryAfter, err)
		}
	})
}

// namesMessage reports whether body is QStash's answer to a publish: an object naming the
// message it took.
func namesMessage(body []byte) bool {
	var pub struct {
		MessageID string `json:"messageId"`
	}
	return json.Unmarshal(body, &pub) == nil && pub.MessageID != ""
}

// wholeSeconds reports whether a Retry-After asks for one second or more as a plain number.
func wholeSeconds(v string) bool {
	n, err := strconv.Atoi(strings.TrimSpace(v))
	return err == nil && n >= 1
}
