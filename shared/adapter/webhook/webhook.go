// Package webhook is the webhook adapter: every event POSTed as JSON to one URL, either
// directly, signed as Standard Webhooks (https://www.standardwebhooks.com) prescribe, or
// through Upstash QStash's publish API, which stores the message and delivers it with its own
// retries and its own signature (Upstash-Signature).
//
// Direct delivery sends these headers:
//
//	Content-Type: application/json
//	webhook-id: <event id>            the same on every retry: drop a delivery you already have
//	webhook-timestamp: <unix seconds> when this attempt was signed
//	webhook-signature: v1,<base64>    HMAC-SHA256 with the secret of "<id>.<timestamp>.<body>"
//	Agentmem-Event-Type: <type>
//
// which the Standard Webhooks libraries verify (Go: standardwebhooks.NewWebhook(secret).Verify).
// Through QStash, the receiver verifies Upstash-Signature with QStash's signing keys (its SDKs'
// Receiver), and gets the event id and type as the forwarded headers Webhook-Id and
// Agentmem-Event-Type; the event id is also QStash's deduplication id, so publishing an event
// again (a retry of ours) never makes a second message.
package webhook

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"github.com/agentmem/agentmem/shared/adapter"
	"github.com/agentmem/agentmem/shared/upstream"
)

// The defaults of the webhook settings.
const (
	DefaultTimeout   = 10 * time.Second
	DefaultQStashURL = "https://qstash.upstash.io"
)

// Config configures the webhook adapter.
type Config struct {
	// URL (WEBHOOK_URL) receives the events; required, http or https.
	URL string
	// Secret (WEBHOOK_SECRET) signs direct deliveries: a Standard Webhooks secret, "whsec_"
	// and base64 of 24 to 64 random bytes. Required for direct delivery; unused through QStash.
	Secret string
	// Timeout (WEBHOOK_TIMEOUT) bounds one delivery; default DefaultTimeout.
	Timeout time.Duration
	// QStashToken (QSTASH_TOKEN), when set, publishes through QStash instead of POSTing
	// directly.
	QStashToken string
	// QStashURL (QSTASH_URL) is QStash's API; default DefaultQStashURL.
	QStashURL string
	// QStashRetries (QSTASH_RETRIES), when not nil, is QStash's number of retries of each
	// message (Upstash-Retries); nil leaves the plan's default.
	QStashRetries *int
	// Client makes the requests; default one with Timeout and no redirects followed.
	Client *http.Client
}

// Webhook is the adapter. It is safe for concurrent use.
type Webhook struct {
	cfg    Config
	signer *standardwebhooks.Webhook
	client *http.Client
	// publish is QStash's publish URL for cfg.URL, "" for direct delivery.
	publish string
}

// New checks cfg and builds the adapter.
func New(cfg Config) (*Webhook, error) {
	if err := checkURL("WEBHOOK_URL", cfg.URL); err != nil {
		return nil, err
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultTimeout
	}
	w := &Webhook{cfg: cfg, client: cfg.Client}
	if w.client == nil {
		w.client = &http.Client{
			Timeout: cfg.Timeout,
			// A redirect would resend the body somewhere the configuration never named.
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		}
	}
	if cfg.QStashToken != "" {
		base := strings.TrimRight(cfg.QStashURL, "/")
		if base == "" {
			base = DefaultQStashURL
		}
		if err := checkURL("QSTASH_URL", base); err != nil {
			return nil, err
		}
		if cfg.QStashRetries != nil && (*cfg.QStashRetries < 0 || *cfg.QStashRetries > 100) {
			return nil, fmt.Errorf("QSTASH_RETRIES must be a number from 0 to 100, not %d", *cfg.QStashRetries)
		}
		// QStash takes the destination as it is, after /v2/publish/.
		w.publish = base + "/v2/publish/" + cfg.URL
		return w, nil
	}
	if cfg.Secret == "" {
		return nil, errors.New("WEBHOOK_SECRET is required to sign direct deliveries (whsec_ and base64 of random bytes: " +
			"echo whsec_$(openssl rand -base64 32)); or set QSTASH_TOKEN to publish through QStash")
	}
	raw, err := secretBytes(cfg.Secret)
	if err != nil {
		return nil, err
	}
	w.signer, err = standardwebhooks.NewWebhookRaw(raw)
	if err != nil {
		return nil, fmt.Errorf("WEBHOOK_SECRET: %w", err)
	}
	return w, nil
}

// secretBytes decodes a Standard Webhooks secret, refusing short ones.
func secretBytes(secret string) ([]byte, error) {
	raw, err := base64Decode(strings.TrimPrefix(secret, "whsec_"))
	if err != nil || len(raw) < 24 || len(raw) > 64 {
		return nil, errors.New("WEBHOOK_SECRET must be whsec_ and the base64 of 24 to 64 random bytes " +
			"(echo whsec_$(openssl rand -base64 32))")
	}
	return raw, nil
}

func checkURL(name, raw string) error {
	u, err := url.Parse(raw)
	if raw == "" || err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("%s must be an http or https URL", name)
	}
	return nil
}

// Name is adapter.Webhook.
func (w *Webhook) Name() string { return adapter.Webhook }

// Via says how events go: "direct" or "qstash".
func (w *Webhook) Via() string {
	if w.publish != "" {
		return "qstash"
	}
	return "direct"
}

// Deliver sends ev. Any answer but a 2xx (and, from QStash, one naming the message it took) is
// an error, retried later; 429 and 503 with Retry-After say when. Errors name the status or
// the network failure, never the URL's query, the body or the answer's body.
func (w *Webhook) Deliver(ctx context.Context, ev adapter.Event) error {
	body, err := json.Marshal(ev)
	if err != nil {
		return fmt.Errorf("encode event: %w", err)
	}
	ctx, cancel := context.WithTimeout(ctx, w.cfg.Timeout)
	defer cancel()
	target := w.cfg.URL
	if w.publish != "" {
		target = w.publish
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, target, bytes.NewReader(body))
	if err != nil {
		return errors.New("build the request: invalid URL")
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "agentmem-webhook/1")
	id := ev.ID.String()
	if w.publish != "" {
		req.Header.Set("Authorization", "Bearer "+w.cfg.QStashToken)
		req.Header.Set("Upstash-Deduplication-Id", id)
		req.Header.Set("Upstash-Method", http.MethodPost)
		req.Header.Set("Upstash-Forward-Webhook-Id", id)
		req.Header.Set("Upstash-Forward-Agentmem-Event-Type", ev.Type)
		if w.cfg.QStashRetries != nil {
			req.Header.Set("Upstash-Retries", strconv.Itoa(*w.cfg.QStashRetries))
		}
	} else {
		now := time.Now()
		sig, err := w.signer.Sign(id, now, body)
		if err != nil {
			return fmt.Errorf("sign: %w", err)
		}
		req.Header.Set(standardwebhooks.HeaderWebhookID, id)
		req.Header.Set(standardwebhooks.HeaderWebhookTimestamp, strconv.FormatInt(now.Unix(), 10))
		req.Header.Set(standardwebhooks.HeaderWebhookSignature, sig)
		req.Header.Set("Agentmem-Event-Type", ev.Type)
	}
	resp, err := w.client.Do(req)
	if err != nil {
		return fmt.Errorf("%s: %s", w.who(), adapter.NetworkError(err))
	}
	defer resp.Body.Close()
	// Enough of the answer to read QStash's, and to let the connection be reused.
	answer, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		err := fmt.Errorf("%s answered %d", w.who(), resp.StatusCode)
		if resp.StatusCode >= 300 && resp.StatusCode < 400 {
			err = fmt.Errorf("%s answered %d (redirects are not followed)", w.who(), resp.StatusCode)
		}
		if d := upstream.RetryAfter(resp.Header, time.Now()); d > 0 && (resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode == http.StatusServiceUnavailable) {
			return &adapter.RetryAfterError{After: d, Err: err}
		}
		return err
	}
	if w.publish != "" {
		var pub struct {
			MessageID string `json:"messageId"`
		}
		if json.Unmarshal(answer, &pub) != nil || pub.MessageID == "" {
			return fmt.Errorf("QStash answered %d without a messageId", resp.StatusCode)
		}
	}
	return nil
}

func (w *Webhook) who() string {
	if w.publish != "" {
		return "QStash"
	}
	return "the webhook"
}

// base64Decode reads standard base64, padded or not.
func base64Decode(s string) ([]byte, error) {
	if b, err := base64.StdEncoding.DecodeString(s); err == nil {
		return b, nil
	}
	return base64.RawStdEncoding.DecodeString(s)
}
