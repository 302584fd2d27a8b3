package auth

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/url"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/golang-jwt/jwt/v5"
	"github.com/google/uuid"

	"github.com/agentmem/agentmem/shared/apierror"
)

// DefaultAudience is the audience Supabase puts in user access tokens.
const DefaultAudience = "authenticated"

// MaxTenantLen is the longest tenant_id accepted, in characters, from a token or a request.
const MaxTenantLen = 128

// maxTokenLen bounds the work done on a token before its signature is checked.
const maxTokenLen = 16 << 10

// Config says how access tokens are verified. At least one of JWTSecret and JWKSURL is required;
// with both, HS256 tokens are checked against the secret and ES256/RS256 tokens against the JWKS.
type Config struct {
	// JWTSecret is the project's legacy HS256 secret (SUPABASE_JWT_SECRET). Default: none, which
	// rejects every HS256 token.
	JWTSecret string
	// JWKSURL is the project's JSON Web Key Set (SUPABASE_JWKS_URL), whose ES256 and RS256 keys
	// sign access tokens. Default: none, which rejects every ES256 and RS256 token.
	JWKSURL string
	// JWKSRefresh (SUPABASE_JWKS_REFRESH) is the age at which the cached key set is fetched
	// again before a token is checked with it: a key removed from the set is refused from then
	// on, as long as the set can be fetched (while it cannot, the last keys fetched stay in
	// use). At least MinJWKSRefresh. Default: DefaultJWKSRefresh.
	JWKSRefresh time.Duration
	// Issuer, when set (JWT_ISSUER), is the exact iss that every token must carry, service_role
	// tokens included: a token from another issuer is not trusted whatever its role. Supabase's
	// legacy service_role key carries iss "supabase" while user tokens carry
	// "https://<ref>.supabase.co/auth/v1", so a service using that key needs JWT_ISSUER unset
	// or a service token of the configured issuer. Default: none, no issuer check.
	Issuer string
	// Audience must be among a user token's aud. Default: "authenticated".
	Audience string
	// Leeway is the clock skew allowed when checking exp and nbf. Default: 0, none.
	Leeway time.Duration
	// Logger receives failures to fetch the JWKS. Default: nil, discard.
	Logger *slog.Logger
}

// Verifier checks access tokens. It is safe for concurrent use; build one per process.
type Verifier struct {
	secret   []byte
	jwks     *keySet
	issuer   string
	audience string
	parser   *jwt.Parser
	// methods are the algorithms accepted: HS256 with a secret, ES256 and RS256 with a key set.
	methods []string
}

// NewVerifier builds a Verifier from cfg. In JWKS mode it starts fetching the key set and
// returns at once: start-up never waits for it, the first tokens that need it do (at most a few
// seconds, or until their context ends). A key set that cannot be fetched is no error: it is
// logged, tokens that need it answer 503 with Retry-After until a later fetch succeeds, and
// HS256 tokens are checked as ever. A JWKS URL that is not an http or https URL is an error.
// The fetches see ctx's values; its end cuts none of them.
func NewVerifier(ctx context.Context, cfg Config) (*Verifier, error) {
	return buildVerifier(ctx, cfg, realClock)
}

// buildVerifier is NewVerifier on clk.
func buildVerifier(ctx context.Context, cfg Config, clk clock) (*Verifier, error) {
	if cfg.JWTSecret == "" && cfg.JWKSURL == "" {
		return nil, errors.New("auth: configure a JWT secret or a JWKS URL")
	}
	if cfg.Leeway < 0 {
		return nil, errors.New("auth: leeway must not be negative")
	}
	if cfg.JWKSRefresh == 0 {
		cfg.JWKSRefresh = DefaultJWKSRefresh
	}
	if cfg.JWKSRefresh < MinJWKSRefresh {
		return nil, errors.New("auth: the JWKS refresh interval must be at least a second")
	}
	v := &Verifier{issuer: cfg.Issuer, audience: cfg.Audience}
	if v.audience == "" {
		v.audience = DefaultAudience
	}
	var methods []string
	if cfg.JWTSecret != "" {
		v.secret = []byte(cfg.JWTSecret)
		methods = append(methods, jwt.SigningMethodHS256.Alg())
	}
	if cfg.JWKSURL != "" {
		if u, err := url.Parse(cfg.JWKSURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return nil, errors.New("auth: the JWKS URL must be an http or https URL")
		}
		logger := cfg.Logger
		if logger == nil {
			logger = slog.New(slog.NewTextHandler(io.Discard, nil))
		}
		v.jwks = newKeySet(ctx, cfg.JWKSURL, cfg.JWKSRefresh, logger, clk)
		v.jwks.prime()
		methods = append(methods, jwt.SigningMethodES256.Alg(), jwt.SigningMethodRS256.Alg())
	}
	v.methods = methods
	v.parser = jwt.NewParser(
		jwt.WithValidMethods(methods),
		jwt.WithExpirationRequired(),
		jwt.WithLeeway(cfg.Leeway),
	)
	return v, nil
}

// claims is the part of a Supabase access token that agentmem reads. A claim of the wrong JSON
// type fails decoding, so the token is rejected as malformed.
type claims struct {
	jwt.RegisteredClaims
	Role string `json:"role"`
	// IsAnonymous is true in the tokens of Supabase's anonymous sign-ins.
	IsAnonymous nullFalse `json:"is_anonymous"`
	AppMetadata struct {
		TenantID string `json:"tenant_id"`
	} `json:"app_metadata"`
}

// Messages a caller may see. None of them quotes the token, and none contains a '.', so no JWT
// can appear inside one.
const (
	errMalformed   = "malformed token"
	errExpired     = "token has expired"
	errNoExpiry    = "token has no expiry"
	errNotYetValid = "token is not valid yet"
	errSignature   = "invalid token signature"
	errKey         = "token signing key is not accepted"
	errRole        = "token role is not accepted"
	errSubject     = "token subject must be a user id"
	errAudience    = "token audience is not accepted"
	errIssuer      = "token issuer is not accepted"
	errTenant      = "token tenant_id is invalid"
)

// errKeyMismatch means a token's alg does not fit the key its kid names.
var errKeyMismatch = errors.New("key type does not match token algorithm")

// Verify checks token and returns who it names. Every failure is an unauthenticated
// *apierror.Error whose message is safe to show.
func (v *Verifier) Verify(ctx context.Context, token string) (Principal, error) {
	if token == "" || len(token) > maxTokenLen {
		return Principal{}, apierror.New(apierror.Unauthenticated, errMalformed)
	}
	var c claims
	if _, err := v.parser.ParseWithClaims(token, &c, v.keyfunc(ctx)); err != nil {
		// The parser refuses an algorithm outside its list as an invalid signature; the
		// signature was never checked: the token's key is not one this deployment accepts.
		if errors.Is(err, jwt.ErrTokenSignatureInvalid) && !slices.Contains(v.methods, headerAlg(token)) {
			return Principal{}, apierror.Wrap(apierror.Unauthenticated, errKey, jwt.ErrTokenUnverifiable)
		}
		return Principal{}, parseError(err)
	}
	if v.issuer != "" && c.Issuer != v.issuer {
		return Principal{}, apierror.New(apierror.Unauthenticated, errIssuer)
	}
	switch c.Role {
	case RoleService:
		return Principal{Role: RoleService}, nil
	case RoleUser:
		return v.user(&c)
	default:
		return Principal{}, apierror.New(apierror.Unauthenticated, errRole)
	}
}

// user checks the claims only user tokens must carry.
func (v *Verifier) user(c *claims) (Principal, error) {
	// Any id Supabase accepts as a subject: its own Auth's UUIDs, and the ids of third-party
	// auth (Clerk's user_2abc..., Auth0's auth0|123, Firebase's, Cognito's), taken as given.
	if !ValidUserID(c.Subject) {
		return Principal{}, apierror.New(apierror.Unauthenticated, errSubject)
	}
	audOK := false
	for _, a := range c.Audience {
		if a == v.audience {
			audOK = true
			break
		}
	}
	if !audOK {
		return Principal{}, apierror.New(apierror.Unauthenticated, errAudience)
	}
	tenant := c.AppMetadata.TenantID
	if !ValidTenant(tenant) {
		return Principal{}, apierror.New(apierror.Unauthenticated, errTenant)
	}
	return Principal{Role: RoleUser, UserID: NormalUserID(c.Subject), TenantID: tenant, Anonymous: bool(c.IsAnonymous)}, nil
}

// MaxUserIDLen is the longest user id, in characters.
const MaxUserIDLen = 255

// ValidUserID accepts 1 to MaxUserIDLen printable characters (unicode.IsPrint: no control,
// format or non-space separator characters), compared exactly as given. It is the one rule for
// a user id, whether a token's sub or a service caller's user_id names it: the id is a key in
// Postgres (which cannot store a NUL), in Redis and in logs, and one that looks blank or hides
// characters could pass for another.
func ValidUserID(s string) bool {
	if s == "" || !utf8.ValidString(s) || utf8.RuneCountInString(s) > MaxUserIDLen {
		return false
	}
	for _, r := range s {
		if !unicode.IsPrint(r) {
			return false
		}
	}
	return true
}

// NormalUserID is id as agentmem stores it: a UUID in its 36-character form in lower case, as
// Supabase Auth writes it (before ids were text, a UUID in upper case named the same user, and
// still does), any other id exactly as given.
func NormalUserID(id string) string {
	if len(id) == 36 {
		if _, err := uuid.Parse(id); err == nil {
			return strings.ToLower(id)
		}
	}
	return id
}

// ValidTenant accepts "" (no tenant) or up to MaxTenantLen characters without control characters
// (Unicode Cc: C0, DEL and C1): the value ends up in Postgres, which cannot store a NUL, and in
// logs. It is the one rule for a tenant, whether a token or a request body names it.
func ValidTenant(s string) bool {
	if utf8.RuneCountInString(s) > MaxTenantLen {
		return false
	}
	for _, r := range s {
		if unicode.IsControl(r) {
			return false
		}
	}
	return true
}

// validTenant is ValidTenant under the name the package's code used before it was exported.
var validTenant = ValidTenant

// keyfunc pins each algorithm to its kind of key: HS256 only ever meets the secret, ES256 and
// RS256 only the JWKS, so a token cannot choose how it is checked.
func (v *Verifier) keyfunc(ctx context.Context) jwt.Keyfunc {
	return func(t *jwt.Token) (any, error) {
		switch t.Method {
		case jwt.SigningMethodHS256:
			if v.secret == nil {
				return nil, errKeyMismatch
			}
			return v.secret, nil
		case jwt.SigningMethodES256, jwt.SigningMethodRS256:
			if v.jwks == nil {
				return nil, errKeyMismatch
			}
			kid, _ := t.Header["kid"].(string)
			key, err := v.jwks.key(ctx, kid)
			if err != nil {
				return nil, err
			}
			if key.alg != "" && key.alg != t.Method.Alg() {
				return nil, errKeyMismatch
			}
			switch k := key.key.(type) {
			case *ecdsa.PublicKey:
				if t.Method == jwt.SigningMethodES256 && k.Curve == elliptic.P256() {
					return k, nil
				}
			case *rsa.PublicKey:
				if t.Method == jwt.SigningMethodRS256 {
					return k, nil
				}
			}
			return nil, errKeyMismatch
		default:
			return nil, errKeyMismatch
		}
	}
}

// headerAlg reads the alg of a token's header, "" when it has none or is not a JWT.
func headerAlg(token string) string {
	head, _, ok := strings.Cut(token, ".")
	if !ok {
		return ""
	}
	b, err := base64.RawURLEncoding.DecodeString(head)
	if err != nil {
		return ""
	}
	var h struct {
		Alg string `json:"alg"`
	}
	if json.Unmarshal(b, &h) != nil {
		return ""
	}
	return h.Alg
}

// parseError turns a jwt parse failure into a safe 401. The cause kept is the library's
// sentinel only: the full error can quote header values chosen by the caller.
func parseError(err error) error {
	var ae *apierror.Error
	if errors.As(err, &ae) && ae.Code == apierror.Unavailable {
		return ae
	}
	for _, m := range []struct {
		sentinel error
		detail   string
	}{
		{jwt.ErrTokenMalformed, errMalformed},
		{jwt.ErrTokenExpired, errExpired},
		{jwt.ErrTokenRequiredClaimMissing, errNoExpiry},
		{jwt.ErrTokenNotValidYet, errNotYetValid},
		{jwt.ErrTokenUnverifiable, errKey},
		{jwt.ErrTokenSignatureInvalid, errSignature},
	} {
		if errors.Is(err, m.sentinel) {
			return apierror.Wrap(apierror.Unauthenticated, m.detail, m.sentinel)
		}
	}
	return apierror.Wrap(apierror.Unauthenticated, errMalformed, jwt.ErrTokenInvalidClaims)
}
