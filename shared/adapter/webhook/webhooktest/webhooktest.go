// Package webhooktest runs what the webhook adapter talks to, on loopback, for tests and the
// bench: a receiver that verifies each delivery as a real one would (the Standard Webhooks
// library for direct deliveries; QStash's JWT rules for deliveries through QStash) and keeps the
// events by id, and a server speaking QStash's publish API that stores each message and
// delivers it, signed with its signing keys, with retries.
package webhooktest

import (
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/google/uuid"
	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"github.com/agentmem/agentmem/shared/adapter"
)

// NewSecret makes a Standard Webhooks secret: "whsec_" and base64 of 32 random bytes.
func NewSecret() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b)
	return "whsec_" + base64.StdEncoding.EncodeToString(b)
}

// Receiver is a webhook endpoint. It verifies each delivery, answers as told (Answer), and
// keeps each event once by id, as a receiver that drops repeats does.
type Receiver struct {
	// URL is where to deliver.
	URL string

	srv    *httptest.Server
	verify func(r *http.Request, body []byte) (id string, err error)

	mu sync.Mutex
	// answer, when set, decides the status of delivery n (1-based, counting every request).
	answer     func(n int) int
	requests   int
	rejected   int
	duplicates int
	order      []uuid.UUID
	events     map[uuid.UUID]adapter.Event
	// bodies are the bodies of the verified requests, repeats included, as they came.
	bodies   [][]byte
	received map[uuid.UUID]time.Time
	arrived  chan struct{}
}

// NewReceiver starts a receiver of direct deliveries signed with secret, verified with the
// Standard Webhooks library (timestamp within its tolerance).
func NewReceiver(secret string) (*Receiver, error) {
	wh, err := standardwebhooks.NewWebhook(secret)
	if err != nil {
		return nil, err
	}
	return newReceiver(func(r *http.Request, body []byte) (string, error) {
		if err := wh.Verify(body, r.Header); err != nil {
			return "", err
		}
		return r.Header.Get(standardwebhooks.HeaderWebhookID), nil
	}), nil
}

// NewQStashReceiver starts a receiver of deliveries through QStash, verified as QStash's
// documentation says: Upstash-Signature is an HS256 JWT signed with the current or the next
// signing key, issued by Upstash for this URL, in its validity window, whose body claim is the
// base64url SHA-256 of the body.
func NewQStashReceiver(currentKey, nextKey string) *Receiver {
	var rec *Receiver
	rec = newReceiver(func(r *http.Request, body []byte) (string, error) {
		sig := r.Header.Get("Upstash-Signature")
		if sig == "" {
			return "", errors.New("no Upstash-Signature")
		}
		var last error
		for _, key := range []string{currentKey, nextKey} {
			if err := verifyQStash(sig, key, rec.URL, body); err != nil {
				last = err
				continue
			}
			return r.Header.Get("Webhook-Id"), nil
		}
		return "", last
	})
	return rec
}

func verifyQStash(token, key, url string, body []byte) error {
	claims := jwt.MapClaims{}
	_, err := jwt.ParseWithClaims(token, claims, func(*jwt.Token) (any, error) { return []byte(key), nil },
		jwt.WithValidMethods([]string{"HS256"}), jwt.WithIssuer("Upstash"), jwt.WithSubject(url),
		jwt.WithExpirationRequired(), jwt.WithLeeway(5*time.Second))
	if err != nil {
		return err
	}
	want := sha256.Sum256(body)
	got, _ := claims["body"].(string)
	if strings.TrimRight(got, "=") != base64.RawURLEncoding.EncodeToString(want[:]) {
		return errors.New("body hash does not match")
	}
	return nil
}

func newReceiver(verify func(*http.Request, []byte) (string, error)) *Receiver {
	r := &Receiver{verify: verify, events: map[uuid.UUID]adapter.Event{}, received: map[uuid.UUID]time.Time{},
		arrived: make(chan struct{}, 1)}
	r.srv = httptest.NewServer(http.HandlerFunc(r.serve))
	r.URL = r.srv.URL + "/hooks/agentmem"
	return r
}

func (r *Receiver) serve(w http.ResponseWriter, req *http.Request) {
	at := time.Now()
	body, err := io.ReadAll(req.Body)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.requests++
	n := r.requests
	if err != nil || req.Method != http.MethodPost || req.URL.Path != "/hooks/agentmem" ||
		req.Header.Get("Content-Type") != "application/json" {
		r.rejected++
		http.Error(w, "bad request", http.StatusBadRequest)
		return
	}
	id, err := r.verify(req, body)
	if err != nil {
		r.rejected++
		http.Error(w, "bad signature", http.StatusUnauthorized)
		return
	}
	r.bodies = append(r.bodies, body)
	status := 0
	if r.answer != nil {
		status = r.answer(n)
	}
	if status > 0 && status != http.StatusOK {
		if status == http.StatusServiceUnavailable || status == http.StatusTooManyRequests {
			w.Header().Set("Retry-After", "1")
		}
		http.Error(w, "not now", status)
		return
	}
	var ev adapter.Event
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&ev); err != nil || ev.ID.String() != id {
		r.rejected++
		http.Error(w, "bad event", http.StatusBadRequest)
		return
	}
	if _, ok := r.events[ev.ID]; ok {
		r.duplicates++
	} else {
		r.events[ev.ID] = ev
		r.received[ev.ID] = at
		r.order = append(r.order, ev.ID)
	}
	select {
	case r.arrived <- struct{}{}:
	default:
	}
	if status < 0 {
		// Kept, but the answer says otherwise: an acknowledgement lost on the way back.
		http.Error(w, "lost", -status)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// Answer makes the receiver answer delivery n (1-based, every request counted) with status
// answer(n) after verifying it; 0 or 200 accepts it, and a negative status keeps the event but
// answers -status (the sender sees a failure and sends it again). nil accepts every delivery.
func (r *Receiver) Answer(answer func(n int) int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.answer = answer
}

// Down makes every delivery answer 503 with Retry-After (down) or accepts them again.
func (r *Receiver) Down(down bool) {
	if down {
		r.Answer(func(int) int { return http.StatusServiceUnavailable })
	} else {
		r.Answer(nil)
	}
}

// Stats counts requests, requests refused as unverifiable or malformed, and verified repeats
// of an event already kept.
func (r *Receiver) Stats() (requests, rejected, duplicates int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.requests, r.rejected, r.duplicates
}

// Events are the events kept, in the order they first arrived.
func (r *Receiver) Events() []adapter.Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]adapter.Event, len(r.order))
	for i, id := range r.order {
		out[i] = r.events[id]
	}
	return out
}

// Bodies are the bodies of every verified delivery, repeats included, byte for byte: what a
// receiver was sent, before any decoding.
func (r *Receiver) Bodies() [][]byte {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.bodies)
}

// Event is the event of id and when it first arrived.
func (r *Receiver) Event(id uuid.UUID) (adapter.Event, time.Time, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	ev, ok := r.events[id]
	return ev, r.received[id], ok
}

// WaitFor waits until n events are kept or timeout passes, and says whether they were.
func (r *Receiver) WaitFor(n int, timeout time.Duration) bool {
	deadline := time.After(timeout)
	for {
		r.mu.Lock()
		have := len(r.order)
		r.mu.Unlock()
		if have >= n {
			return true
		}
		select {
		case <-r.arrived:
		case <-deadline:
			return false
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// Close stops the receiver.
func (r *Receiver) Close() { r.srv.Close() }

// QStash speaks QStash's publish API (POST /v2/publish/<destination URL>, Authorization:
// Bearer <token>): it answers 201 {"messageId"} for a new message and 202 with the same id for
// a repeat of an Upstash-Deduplication-Id, then delivers the body to the destination with the
// Upstash-Forward-* headers (prefix removed), Content-Type, Upstash-Message-Id, Upstash-Retried
// and Upstash-Signature, retrying a failed delivery up to Upstash-Retries times (default 3).
type QStash struct {
	// URL is the API's base URL (QSTASH_URL).
	URL string
	// Token is the bearer token it takes (QSTASH_TOKEN).
	Token string
	// CurrentKey and NextKey sign deliveries (QStash's signing keys).
	CurrentKey, NextKey string

	srv    *httptest.Server
	client *http.Client

	mu        sync.Mutex
	published int
	refused   int
	dedup     map[string]string
	delivered int
	// answer, when set, decides the status of publish request n (1-based); 0 proceeds, and
	// -1 answers 201 with a body that is not QStash's.
	answer func(n int) int
}

// NewQStash starts a QStash server.
func NewQStash() *QStash {
	q := &QStash{Token: "qstash-test-" + uuid.NewString(), CurrentKey: "sig_current_" + uuid.NewString(),
		NextKey: "sig_next_" + uuid.NewString(), dedup: map[string]string{}, client: &http.Client{Timeout: 5 * time.Second}}
	q.srv = httptest.NewServer(http.HandlerFunc(q.serve))
	q.URL = q.srv.URL
	return q
}

// Answer decides the answer to publish request n (see QStash.answer).
func (q *QStash) Answer(answer func(n int) int) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.answer = answer
}

// Stats counts publish requests, those refused (bad token, bad destination), and deliveries
// the destination accepted.
func (q *QStash) Stats() (published, refused, delivered int) {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.published, q.refused, q.delivered
}

func (q *QStash) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	q.mu.Lock()
	q.published++
	n := q.published
	answer := q.answer
	q.mu.Unlock()
	dest, ok := strings.CutPrefix(r.URL.Path, "/v2/publish/")
	if r.URL.RawQuery != "" {
		dest += "?" + r.URL.RawQuery
	}
	if r.Method != http.MethodPost || !ok || r.Header.Get("Authorization") != "Bearer "+q.Token ||
		!(strings.HasPrefix(dest, "http://") || strings.HasPrefix(dest, "https://")) {
		q.mu.Lock()
		q.refused++
		q.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusUnauthorized)
		fmt.Fprint(w, `{"error":"unauthorized"}`)
		return
	}
	if answer != nil {
		switch status := answer(n); {
		case status == -1:
			w.WriteHeader(http.StatusCreated)
			fmt.Fprint(w, `<html>not json</html>`)
			return
		case status != 0:
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(status)
			fmt.Fprint(w, `{"error":"try again"}`)
			return
		}
	}
	retries := 3
	if v := r.Header.Get("Upstash-Retries"); v != "" {
		retries, _ = strconv.Atoi(v)
	}
	q.mu.Lock()
	dd := r.Header.Get("Upstash-Deduplication-Id")
	if id, seen := q.dedup[dd]; dd != "" && seen {
		q.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusAccepted)
		fmt.Fprintf(w, `{"messageId":%q}`, id)
		return
	}
	id := "msg_" + strings.ReplaceAll(uuid.NewString(), "-", "")
	if dd != "" {
		q.dedup[dd] = id
	}
	q.mu.Unlock()
	fwd := http.Header{}
	for k, v := range r.Header {
		if name, ok := strings.CutPrefix(k, "Upstash-Forward-"); ok {
			fwd[name] = v
		}
	}
	fwd.Set("Content-Type", r.Header.Get("Content-Type"))
	go q.deliver(dest, id, body, fwd, retries)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusCreated)
	fmt.Fprintf(w, `{"messageId":%q}`, id)
}

// deliver posts a message to its destination until it answers 2xx or the retries are spent.
func (q *QStash) deliver(dest, id string, body []byte, headers http.Header, retries int) {
	for retried := 0; retried <= retries; retried++ {
		if retried > 0 {
			time.Sleep(time.Duration(retried) * 20 * time.Millisecond)
		}
		req, err := http.NewRequest(http.MethodPost, dest, bytes.NewReader(body))
		if err != nil {
			return
		}
		req.Header = headers.Clone()
		req.Header.Set("User-Agent", "Upstash-QStash")
		req.Header.Set("Upstash-Message-Id", id)
		req.Header.Set("Upstash-Retried", strconv.Itoa(retried))
		req.Header.Set("Upstash-Signature", q.sign(dest, body))
		resp, err := q.client.Do(req)
		if err != nil {
			continue
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode >= 200 && resp.StatusCode < 300 {
			q.mu.Lock()
			q.delivered++
			q.mu.Unlock()
			return
		}
	}
}

// sign makes the Upstash-Signature of a delivery, as QStash documents it.
func (q *QStash) sign(dest string, body []byte) string {
	sum := sha256.Sum256(body)
	now := time.Now()
	tok := jwt.NewWithClaims(jwt.SigningMethodHS256, jwt.MapClaims{
		"iss": "Upstash", "sub": dest, "exp": now.Add(5 * time.Minute).Unix(), "nbf": now.Unix(), "iat": now.Unix(),
		"jti": "jwt_" + uuid.NewString(), "body": base64.URLEncoding.EncodeToString(sum[:]),
	})
	s, _ := tok.SignedString([]byte(q.CurrentKey))
	return s
}

// Close stops the server.
func (q *QStash) Close() { q.srv.Close() }
