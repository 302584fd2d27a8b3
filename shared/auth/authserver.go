// Why this file asks the Auth server with net/http and not supabase-go's auth client
// (github.com/supabase-community/supabase-go v0.0.4, whose auth client is
// github.com/supabase-community/gotrue-go v1.2.0; supabase-community/auth-go is not served by the
// Go module proxy), judged from that client's source:
//
//   - Client.GetUser() takes no context: a request's deadline and cancellation cannot bound the
//     call (only one http.Client timeout for every caller), where this verifier gives each token
//     check the request's context and at most DefaultAuthServerTimeout.
//   - Its errors are fmt.Errorf("response status code %d: %s", code, body): a refused token (401,
//     403) and an Auth server that is down or rate-limiting (5xx, 429) come back alike, with no
//     Retry-After, so the 401-versus-503-with-Retry-After distinction would mean parsing error
//     text; and the body is copied into the error, which must not reach logs.
//   - It reads the whole body unbounded (maxAuthAnswer here) and has no cache, no single flight
//     per token and no separate path for service_role tokens, which all stay this file's work.
//
// What it would replace is one GET with two headers; the answer's shape (id, role, app_metadata)
// is decoded here the same way. Revisit if the client gains context-aware calls and typed errors.

package auth

import (
	"container/list"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"golang.org/x/sync/singleflight"

	"github.com/agentmem/agentmem/shared/apierror"
)

// Defaults of AuthServerConfig.
const (
	DefaultAuthServerCacheTTL  = time.Minute
	DefaultAuthServerCacheSize = 10_000
	DefaultAuthServerTimeout   = 5 * time.Second
)

const (
	// authUserPath is the Auth server's endpoint that describes the user a token belongs to.
	authUserPath = "/auth/v1/user"
	// maxAuthAnswer bounds the body read from the Auth server; a user with large metadata is a
	// few KiB.
	maxAuthAnswer = 1 << 20
	// maxRetryAfter caps the Retry-After passed on from the Auth server, in seconds.
	maxRetryAfter = 60
)

// Messages a caller may see, besides those of the JWT path. None quotes the token or contains
// a '.'.
const (
	errServiceRefused = "service_role tokens are not accepted by this deployment"
	errAuthRefused    = "the Auth server did not accept the token"
	errAuthDown       = "the Auth server is unavailable; retry"
)

// AuthServerConfig says how an AuthServerVerifier asks the project's Auth server.
type AuthServerConfig struct {
	// URL is the project's URL (SUPABASE_URL), e.g. https://<ref>.supabase.co; the verifier
	// asks URL/auth/v1/user. Required.
	URL string
	// APIKey is the project's publishable or anon key (SUPABASE_ANON_KEY), sent as the apikey
	// header that Supabase's API gateway requires. Required.
	APIKey string
	// ServiceTokens verifies tokens whose payload says role service_role, locally: the Auth
	// server describes users, not service keys, so such tokens are never sent to it. Default:
	// nil, every service_role token is refused.
	ServiceTokens *Verifier
	// Audience must be the user's aud. Default: "authenticated".
	Audience string
	// Leeway is the clock skew allowed when a token's exp is read before asking. Default: 0.
	Leeway time.Duration
	// CacheTTL is the longest an answer is reused; an answer never outlives the token's exp.
	// Default: DefaultAuthServerCacheTTL.
	CacheTTL time.Duration
	// CacheSize is the most answers kept; the oldest goes first. Default:
	// DefaultAuthServerCacheSize.
	CacheSize int
	// Timeout bounds one call to the Auth server. Default: DefaultAuthServerTimeout.
	Timeout time.Duration
}

// AuthServerVerifier checks user tokens by asking the project's Auth server who they belong
// to, so a signed-out session or a deleted user stops working within CacheTTL rather than at
// the token's exp. It is safe for concurrent use; build one per process.
type AuthServerVerifier struct {
	endpoint string
	apiKey   string
	service  *Verifier
	// rules holds only the audience: its user method applies the JWT path's rules for sub, aud
	// and tenant to the Auth server's answer.
	rules   *Verifier
	leeway  time.Duration
	ttl     time.Duration
	timeout time.Duration
	client  *http.Client
	cache   *answerCache
	group   singleflight.Group
	now     func() time.Time
}

// NewAuthServerVerifier builds an AuthServerVerifier from cfg. It makes no call: the Auth
// server is first asked by the first request.
func NewAuthServerVerifier(cfg AuthServerConfig) (*AuthServerVerifier, error) {
	base := strings.TrimRight(cfg.URL, "/")
	u, err := url.Parse(base)
	if base == "" || err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, errors.New("auth: the Auth server needs the project URL, an http or https URL")
	}
	if cfg.APIKey == "" {
		return nil, errors.New("auth: the Auth server needs the project's anon or publishable key")
	}
	if cfg.Leeway < 0 || cfg.CacheTTL < 0 || cfg.CacheSize < 0 || cfg.Timeout < 0 {
		return nil, errors.New("auth: leeway, cache and timeout settings must not be negative")
	}
	v := &AuthServerVerifier{
		endpoint: base + authUserPath,
		apiKey:   cfg.APIKey,
		service:  cfg.ServiceTokens,
		rules:    &Verifier{audience: cfg.Audience},
		leeway:   cfg.Leeway,
		ttl:      cfg.CacheTTL,
		timeout:  cfg.Timeout,
		now:      time.Now,
		client: &http.Client{
			// A redirect would carry the apikey header elsewhere; it is an unexpected answer.
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		},
	}
	if v.rules.audience == "" {
		v.rules.audience = DefaultAudience
	}
	if v.ttl == 0 {
		v.ttl = DefaultAuthServerCacheTTL
	}
	if v.timeout == 0 {
		v.timeout = DefaultAuthServerTimeout
	}
	size := cfg.CacheSize
	if size == 0 {
		size = DefaultAuthServerCacheSize
	}
	v.cache = newAnswerCache(size)
	return v, nil
}

// answer is what the Auth server said about a token, worth remembering: a user, or a refusal.
type answer struct {
	principal Principal
	// refused, when not "", is the message of the 401 the token gets.
	refused string
}

func (a answer) result() (Principal, error) {
	if a.refused != "" {
		return Principal{}, apierror.New(apierror.Unauthenticated, a.refused)
	}
	return a.principal, nil
}

// Verify returns who token belongs to. A token the Auth server refuses, or that is malformed
// or expired, is an unauthenticated *apierror.Error; an Auth server that does not answer is an
// unavailable one with RetryAfter, so clients retry rather than sign their users out.
func (v *AuthServerVerifier) Verify(ctx context.Context, token string) (Principal, error) {
	if token == "" || len(token) > maxTokenLen {
		return Principal{}, apierror.New(apierror.Unauthenticated, errMalformed)
	}
	// The payload is read unverified, only to route service tokens and bound the cache: the
	// Auth server's answer is what authorises a user.
	var c jwt.MapClaims
	if _, _, err := jwt.NewParser().ParseUnverified(token, &c); err != nil {
		return Principal{}, apierror.Wrap(apierror.Unauthenticated, errMalformed, jwt.ErrTokenMalformed)
	}
	role, ok := c["role"].(string)
	if !ok && c["role"] != nil {
		return Principal{}, apierror.Wrap(apierror.Unauthenticated, errMalformed, jwt.ErrTokenMalformed)
	}
	if role == RoleService {
		if v.service == nil {
			return Principal{}, apierror.New(apierror.Unauthenticated, errServiceRefused)
		}
		return v.service.Verify(ctx, token)
	}
	exp, err := c.GetExpirationTime()
	if err != nil {
		return Principal{}, apierror.Wrap(apierror.Unauthenticated, errMalformed, jwt.ErrTokenMalformed)
	}
	if exp == nil {
		return Principal{}, apierror.New(apierror.Unauthenticated, errNoExpiry)
	}
	if v.now().After(exp.Add(v.leeway)) {
		return Principal{}, apierror.New(apierror.Unauthenticated, errExpired)
	}

	key := sha256.Sum256([]byte(token))
	if a, ok := v.cache.get(key, v.now()); ok {
		return a.result()
	}
	// One call per token however many requests wait for it. The call belongs to none of them:
	// a caller that gives up does not fail the others.
	ch := v.group.DoChan(string(key[:]), func() (any, error) {
		if a, ok := v.cache.get(key, v.now()); ok {
			return a, nil
		}
		callCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), v.timeout)
		defer cancel()
		a, err := v.ask(callCtx, token)
		if err != nil {
			return nil, err
		}
		now := v.now()
		until := now.Add(v.ttl)
		if exp.Time.Before(until) {
			until = exp.Time
		}
		v.cache.put(key, a, until, now)
		return a, nil
	})
	select {
	case r := <-ch:
		if r.Err != nil {
			// A fresh copy each time: the error is shared by every caller of the one call.
			e := *r.Err.(*apierror.Error)
			return Principal{}, &e
		}
		return r.Val.(answer).result()
	case <-ctx.Done():
		return Principal{}, &apierror.Error{Code: apierror.Unavailable, Detail: errAuthDown, RetryAfter: 1,
			Cause: fmt.Errorf("wait for auth server: %w", ctx.Err())}
	}
}

// ask calls GET /auth/v1/user. It returns an answer to remember, or an unavailable
// *apierror.Error when the Auth server gave none. No error quotes the token: the request's
// URL carries none, and the Auth server's bodies are never quoted.
func (v *AuthServerVerifier) ask(ctx context.Context, token string) (answer, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, v.endpoint, nil)
	if err != nil {
		return answer{}, unavailable(fmt.Errorf("build auth server request: %w", err), 1)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("apikey", v.apiKey)
	req.Header.Set("Accept", "application/json")
	resp, err := v.client.Do(req)
	if err != nil {
		return answer{}, unavailable(fmt.Errorf("ask auth server: %w", err), 1)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxAuthAnswer+1))
	if err != nil {
		return answer{}, unavailable(fmt.Errorf("read auth server answer: %w", err), 1)
	}
	switch {
	case resp.StatusCode == http.StatusOK:
		if len(body) > maxAuthAnswer {
			return answer{}, unavailable(errors.New("auth server answer is too large"), 1)
		}
		return v.decodeUser(body)
	case resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden:
		if gatewayRefusal(body) {
			// The API gateway refused the apikey, not the token: signing every user out for a
			// configuration mistake would be worse than a 503 in the log.
			return answer{}, unavailable(fmt.Errorf("auth server gateway refused the api key (SUPABASE_ANON_KEY): status %d", resp.StatusCode), 5)
		}
		return answer{refused: errAuthRefused}, nil
	default:
		return answer{}, unavailable(fmt.Errorf("ask auth server: status %d", resp.StatusCode), retryAfter(resp.Header))
	}
}

// authUser is the part of the Auth server's user object that agentmem reads.
type authUser struct {
	ID          string          `json:"id"`
	Aud         string          `json:"aud"`
	Role        string          `json:"role"`
	IsAnonymous nullFalse       `json:"is_anonymous"`
	AppMetadata json.RawMessage `json:"app_metadata"`
}

// decodeUser maps a 200 answer to a principal with the rules of the JWT path. A body that is
// not a user object means the URL does not lead to an Auth server: unavailable, not 401.
func (v *AuthServerVerifier) decodeUser(body []byte) (answer, error) {
	var u authUser
	if err := json.Unmarshal(body, &u); err != nil || u.ID == "" {
		return answer{}, unavailable(errors.New("auth server answer is not a user object"), 1)
	}
	if u.Role != RoleUser {
		return answer{refused: errRole}, nil
	}
	var md struct {
		TenantID any `json:"tenant_id"`
	}
	if len(u.AppMetadata) > 0 {
		if err := json.Unmarshal(u.AppMetadata, &md); err != nil {
			return answer{refused: errTenant}, nil
		}
	}
	var c claims
	switch t := md.TenantID.(type) {
	case nil:
	case string:
		c.AppMetadata.TenantID = t
	default:
		return answer{refused: errTenant}, nil
	}
	c.Subject, c.Audience, c.Role, c.IsAnonymous = u.ID, jwt.ClaimStrings{u.Aud}, u.Role, u.IsAnonymous
	p, err := v.rules.user(&c)
	if err != nil {
		return answer{refused: apierror.As(err).Detail}, nil
	}
	return answer{principal: p}, nil
}

// gatewayRefusal reports whether a 401 or 403 body is Supabase's API gateway refusing the
// apikey ({"message":"Invalid API key",...}) rather than the Auth server refusing the token:
// the Auth server's errors always carry a code.
func gatewayRefusal(body []byte) bool {
	var e struct {
		Code      json.RawMessage `json:"code"`
		ErrorCode json.RawMessage `json:"error_code"`
		Message   *string         `json:"message"`
	}
	if json.Unmarshal(body, &e) != nil {
		return false
	}
	return e.Code == nil && e.ErrorCode == nil && e.Message != nil
}

func unavailable(cause error, retryAfter int) *apierror.Error {
	return &apierror.Error{Code: apierror.Unavailable, Detail: errAuthDown, RetryAfter: retryAfter, Cause: cause}
}

// retryAfter is the Auth server's Retry-After in seconds, from 1 to maxRetryAfter; 1 when it
// sent none.
func retryAfter(h http.Header) int {
	n, err := strconv.Atoi(strings.TrimSpace(h.Get("Retry-After")))
	switch {
	case err != nil || n < 1:
		return 1
	case n > maxRetryAfter:
		return maxRetryAfter
	}
	return n
}

// answerCache keeps answers by the SHA-256 of their token, never the token itself, oldest
// first, so that the oldest goes when it is full.
type answerCache struct {
	mu      sync.Mutex
	max     int
	entries map[[sha256.Size]byte]*list.Element
	order   *list.List // of *cacheEntry, oldest at the front
}

type cacheEntry struct {
	key     [sha256.Size]byte
	answer  answer
	expires time.Time
}

func newAnswerCache(max int) *answerCache {
	return &answerCache{max: max, entries: map[[sha256.Size]byte]*list.Element{}, order: list.New()}
}

func (c *answerCache) get(key [sha256.Size]byte, now time.Time) (answer, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	el, ok := c.entries[key]
	if !ok {
		return answer{}, false
	}
	e := el.Value.(*cacheEntry)
	if !now.Before(e.expires) {
		c.remove(el)
		return answer{}, false
	}
	return e.answer, true
}

// put keeps a until expires; an answer already expired is not kept.
func (c *answerCache) put(key [sha256.Size]byte, a answer, expires, now time.Time) {
	if !now.Before(expires) {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.entries[key]; ok {
		c.remove(el)
	}
	c.entries[key] = c.order.PushBack(&cacheEntry{key: key, answer: a, expires: expires})
	// Expired entries at the front go now; then the oldest, while there are too many.
	for el := c.order.Front(); el != nil && (c.order.Len() > c.max || !now.Before(el.Value.(*cacheEntry).expires)); el = c.order.Front() {
		c.remove(el)
	}
}

func (c *answerCache) remove(el *list.Element) {
	delete(c.entries, el.Value.(*cacheEntry).key)
	c.order.Remove(el)
}

func (c *answerCache) size() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.order.Len()
}
