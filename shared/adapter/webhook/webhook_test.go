package webhook_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/agentmem/agentmem/shared/adapter"
	"github.com/agentmem/agentmem/shared/adapter/webhook"
	"github.com/agentmem/agentmem/shared/adapter/webhook/webhooktest"
	"github.com/agentmem/agentmem/shared/memory"
	"github.com/agentmem/agentmem/shared/upstream"
)

const content = "My card is 4111 1111 1111 1111, call me on +44 20 7946 0958"

func testEvent() adapter.Event {
	tenant, agent, session := "acme", "bot", uuid.New()
	from, to := int64(1), int64(1)
	return adapter.Event{ID: uuid.New(), Type: adapter.TurnCommitted, OccurredAt: time.Now().UTC().Truncate(time.Microsecond),
		TenantID: &tenant, UserID: uuid.NewString(), Agent: &agent, SessionID: &session, SeqFrom: &from, SeqTo: &to,
		Messages: []memory.Message{{ID: uuid.NewString(), Seq: 1, Role: "user", Content: content, CreatedAt: time.Now().UTC()}},
		Memories: []adapter.Memory{}, Metadata: map[string]any{}}
}

func newWebhook(t *testing.T, cfg webhook.Config) *webhook.Webhook {
	t.Helper()
	w, err := webhook.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// A direct delivery is the event as JSON, signed as Standard Webhooks prescribe: the
// standard's own library verifies it, and a delivery sent again carries the same webhook-id,
// which the receiver drops.
func TestDirectDeliveryIsSignedAndDeduplicable(t *testing.T) {
	t.Parallel()
	secret := webhooktest.NewSecret()
	rec, err := webhooktest.NewReceiver(secret)
	if err != nil {
		t.Fatal(err)
	}
	defer rec.Close()
	w := newWebhook(t, webhook.Config{URL: rec.URL, Secret: secret})
	if w.Name() != adapter.Webhook || w.Via() != "direct" {
		t.Errorf("name %q via %q", w.Name(), w.Via())
	}
	ev := testEvent()
	for range 2 {
		if err := w.Deliver(t.Context(), ev); err != nil {
			t.Fatal(err)
		}
	}
	requests, rejected, dups := rec.Stats()
	if requests != 2 || rejected != 0 || dups != 1 {
		t.Errorf("requests %d, rejected %d, duplicates %d", requests, rejected, dups)
	}
	got, _, ok := rec.Event(ev.ID)
	if !ok || got.Messages[0].Content != content || *got.SessionID != *ev.SessionID || got.Type != ev.Type ||
		!got.OccurredAt.Equal(ev.OccurredAt) {
		t.Errorf("received %+v", got)
	}

	// Signed with another secret, the delivery fails verification: an error, with the status.
	other := newWebhook(t, webhook.Config{URL: rec.URL, Secret: webhooktest.NewSecret()})
	err = other.Deliver(t.Context(), testEvent())
	if err == nil || !strings.Contains(err.Error(), "401") {
		t.Errorf("delivery with the wrong secret: %v", err)
	}
	if _, rejected, _ = rec.Stats(); rejected != 1 {
		t.Errorf("rejected %d, want 1", rejected)
	}
}

// Whatever the receiver answers but a 2xx is an error, never a panic; 429 and 503 say when to
// come back; a redirect is not followed; and no error holds the event's content, the answer's
// body or the URL's query.
func TestFailuresAreErrorsWithoutContent(t *testing.T) {
	t.Parallel()
	secret := webhooktest.NewSecret()
	redirected := 0
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { redirected++ }))
	defer target.Close()
	echo := func(status int, header ...string) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			for i := 0; i+1 < len(header); i += 2 {
				w.Header().Set(header[i], header[i+1])
			}
			w.WriteHeader(status)
			_, _ = io.Copy(w, r.Body) // the answer echoes the content
		}
	}
	cases := []struct {
		name       string
		handler    http.Handler
		want       string
		retryAfter time.Duration
	}{
		{"500", echo(500), "the webhook answered 500", 0},
		{"400", echo(400), "the webhook answered 400", 0},
		{"503 with Retry-After", echo(503, "Retry-After", "7"), "the webhook answered 503", 7 * time.Second},
		{"429 with a huge Retry-After", echo(429, "Retry-After", "999999"), "the webhook answered 429", upstream.MaxRetryAfter},
		{"500 with Retry-After", echo(500, "Retry-After", "7"), "the webhook answered 500", 0},
		{"redirect", echo(307, "Location", target.URL), "answered 307 (redirects are not followed)", 0},
		{"slow", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			select {
			case <-r.Context().Done():
			case <-time.After(time.Second):
			}
		}), "no answer in time", 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			srv := httptest.NewServer(c.handler)
			defer srv.Close()
			w := newWebhook(t, webhook.Config{URL: srv.URL + "/in?token=query-secret-123", Secret: secret,
				Timeout: 300 * time.Millisecond})
			err := w.Deliver(t.Context(), testEvent())
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %v, want %q", err, c.want)
			}
			if got := adapter.RetryAfter(err); got != c.retryAfter {
				t.Errorf("retry after %s, want %s", got, c.retryAfter)
			}
			for _, leak := range []string{"4111", "7946", "query-secret-123"} {
				if strings.Contains(err.Error(), leak) {
					t.Errorf("error %q holds %q", err, leak)
				}
			}
		})
	}
	if redirected != 0 {
		t.Errorf("the redirect was followed %d times", redirected)
	}
	// Nobody listening: a network error, still without the query.
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL
	srv.Close()
	w := newWebhook(t, webhook.Config{URL: url + "/in?token=query-secret-123", Secret: secret})
	err := w.Deliver(t.Context(), testEvent())
	if err == nil || strings.Contains(err.Error(), "query-secret-123") || !strings.Contains(err.Error(), "refused") {
		t.Errorf("network error %v", err)
	}
	// A caller that gave up cancels the delivery.
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if err := newWebhook(t, webhook.Config{URL: url, Secret: secret}).Deliver(ctx, testEvent()); err == nil {
		t.Error("a canceled delivery succeeded")
	}
}

// Through QStash: the publish request is QStash's (bearer token, destination in the path,
// the event id as deduplication id and forwarded Webhook-Id), QStash delivers the body signed
// with its keys, which the receiver verifies, and publishing the same event again makes no
// second message. A publish answer that is not QStash's is an error.
func TestQStashPublish(t *testing.T) {
	t.Parallel()
	q := webhooktest.NewQStash()
	defer q.Close()
	rec := webhooktest.NewQStashReceiver(q.CurrentKey, q.NextKey)
	defer rec.Close()
	retries := 2
	w := newWebhook(t, webhook.Config{URL: rec.URL, QStashToken: q.Token, QStashURL: q.URL + "/", QStashRetries: &retries})
	if w.Via() != "qstash" {
		t.Errorf("via %q", w.Via())
	}
	ev := testEvent()
	for range 2 {
		if err := w.Deliver(t.Context(), ev); err != nil {
			t.Fatal(err)
		}
	}
	if !rec.WaitFor(1, 10*time.Second) {
		t.Fatal("QStash never delivered the event")
	}
	got, _, _ := rec.Event(ev.ID)
	if got.Messages[0].Content != content {
		t.Errorf("received %+v", got)
	}
	// A receiver's failure is QStash's to retry: the second delivery attempt gets through.
	rec.Answer(func(n int) int {
		if n == 2 {
			return http.StatusInternalServerError
		}
		return 0
	})
	ev2 := testEvent()
	if err := w.Deliver(t.Context(), ev2); err != nil {
		t.Fatal(err)
	}
	if !rec.WaitFor(2, 10*time.Second) {
		t.Fatal("QStash never redelivered the second event")
	}
	// QStash counts a delivery once the receiver's answer is back.
	var published, refused, delivered int
	for start := time.Now(); time.Since(start) < 10*time.Second; time.Sleep(10 * time.Millisecond) {
		if published, refused, delivered = q.Stats(); delivered == 2 {
			break
		}
	}
	requests, rejected, dups := rec.Stats()
	if published != 3 || refused != 0 || delivered != 2 || requests != 3 || rejected != 0 || dups != 0 {
		t.Errorf("QStash: %d published, %d refused, %d delivered; receiver: %d requests, %d rejected, %d duplicates",
			published, refused, delivered, requests, rejected, dups)
	}

	q.Answer(func(int) int { return -1 })
	if err := w.Deliver(t.Context(), testEvent()); err == nil || !strings.Contains(err.Error(), "without a messageId") {
		t.Errorf("a malformed QStash answer: %v", err)
	}
	q.Answer(func(int) int { return http.StatusTooManyRequests })
	if err := w.Deliver(t.Context(), testEvent()); err == nil || !strings.Contains(err.Error(), "QStash answered 429") {
		t.Errorf("QStash refusing: %v", err)
	}
	q.Answer(nil)
	bad := newWebhook(t, webhook.Config{URL: rec.URL, QStashToken: "wrong", QStashURL: q.URL})
	if err := bad.Deliver(t.Context(), testEvent()); err == nil || !strings.Contains(err.Error(), "401") ||
		strings.Contains(err.Error(), "wrong") {
		t.Errorf("a wrong token: %v", err)
	}
}

func TestConfig(t *testing.T) {
	t.Parallel()
	ok := webhooktest.NewSecret()
	for _, c := range []struct {
		cfg  webhook.Config
		want string
	}{
		{webhook.Config{Secret: ok}, "WEBHOOK_URL"},
		{webhook.Config{URL: "ftp://x", Secret: ok}, "WEBHOOK_URL"},
		{webhook.Config{URL: "https://"}, "WEBHOOK_URL"},
		{webhook.Config{URL: "https://example.com/h"}, "WEBHOOK_SECRET is required"},
		{webhook.Config{URL: "https://example.com/h", Secret: "whsec_c2hvcnQ="}, "24 to 64"},
		{webhook.Config{URL: "https://example.com/h", Secret: "whsec_!!!"}, "24 to 64"},
		{webhook.Config{URL: "https://example.com/h", QStashToken: "t", QStashURL: "nope"}, "QSTASH_URL"},
	} {
		t.Run(c.want, func(t *testing.T) {
			_, err := webhook.New(c.cfg)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("%+v: %v, want %q", c.cfg, err, c.want)
			}
			if err != nil && strings.Contains(err.Error(), ok) {
				t.Errorf("error %q holds the secret", err)
			}
		})
	}
	neg := -1
	if _, err := webhook.New(webhook.Config{URL: "https://example.com/h", QStashToken: "t", QStashRetries: &neg}); err == nil {
		t.Error("QSTASH_RETRIES -1 taken")
	}
	for _, s := range []string{ok, strings.TrimRight(ok, "=")} {
		if _, err := webhook.New(webhook.Config{URL: "https://example.com/h", Secret: s}); err != nil {
			t.Errorf("secret %q: %v", s, err)
		}
	}
	if err := errors.Unwrap(&adapter.RetryAfterError{Err: io.EOF}); err != io.EOF {
		t.Errorf("unwrap %v", err)
	}
}
