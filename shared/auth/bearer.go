package auth

import (
	"strings"

	"github.com/agentmem/agentmem/shared/apierror"
)

// ParseBearer returns the token of an Authorization header of the form "Bearer <token>". The
// scheme is matched case-insensitively; the token must be one RFC 6750 b64token. Anything else
// is an unauthenticated *apierror.Error.
func ParseBearer(header string) (string, error) {
	header = strings.Trim(header, " \t")
	if header == "" {
		return "", apierror.New(apierror.Unauthenticated, "missing bearer token")
	}
	scheme, token, _ := strings.Cut(header, " ")
	if !strings.EqualFold(scheme, "Bearer") {
		return "", apierror.New(apierror.Unauthenticated, "authorization scheme must be Bearer")
	}
	if token == "" {
		return "", apierror.New(apierror.Unauthenticated, "missing bearer token")
	}
	if !isB64Token(token) {
		return "", apierror.New(apierror.Unauthenticated,
			"authorization header must be Bearer and a single token")
	}
	return token, nil
}

// isB64Token reports whether s matches RFC 6750's b64token:
// 1*( ALPHA / DIGIT / "-" / "." / "_" / "~" / "+" / "/" ) *"=".
func isB64Token(s string) bool {
	body := strings.TrimRight(s, "=")
	if body == "" {
		return false
	}
	for i := 0; i < len(body); i++ {
		c := body[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		case c == '-', c == '.', c == '_', c == '~', c == '+', c == '/':
		default:
			return false
		}
	}
	return true
}
