// Package apierror is agentmem's one error vocabulary: a stable code, a message that is safe
// to show to the caller, and the fields at fault. It knows no transport: the HTTP status of each
// code and the Retry-After policy live with HTTP (shared/httpapi).
package apierror

import (
	"errors"
	"fmt"
)

// Code is a stable, machine-readable error code. Clients branch on it; it never changes meaning.
type Code string

// The codes of the HTTP contract.
const (
	InvalidRequest       Code = "invalid_request"
	Unauthenticated      Code = "unauthenticated"
	Forbidden            Code = "forbidden"
	NotFound             Code = "not_found"
	MethodNotAllowed     Code = "method_not_allowed"
	Conflict             Code = "conflict"
	PayloadTooLarge      Code = "payload_too_large"
	UnsupportedMediaType Code = "unsupported_media_type"
	RateLimited          Code = "rate_limited"
	Unavailable          Code = "unavailable"
	Internal             Code = "internal"
)

// HeadersTooLarge is the code of a request whose line and headers are over the limit (431).
const HeadersTooLarge Code = "request_header_fields_too_large"

// CallerFault reports whether the code puts the failure on the request (invalid, not
// found, conflict, refused, rate limited): its detail says all the caller needs. The others
// (unavailable, internal, and any code not listed here) are the server's.
func (c Code) CallerFault() bool {
	switch c {
	case InvalidRequest, Unauthenticated, Forbidden, NotFound, MethodNotAllowed, Conflict,
		PayloadTooLarge, HeadersTooLarge, UnsupportedMediaType, RateLimited:
		return true
	}
	return false
}

// FieldError names one invalid part of a request, by its JSON path (e.g. "messages[2].role").
type FieldError struct {
	Field   string `json:"field"`
	Message string `json:"message"`
}

// Error is an error a caller may see. Detail and Fields are safe to show; Cause is logged only.
type Error struct {
	Code   Code
	Detail string
	Fields []FieldError
	// RetryAfter is the wait in seconds the failure itself names (a rate limit's next free
	// slot, an upstream's Retry-After); 0 when it names none, and the transport's policy
	// decides.
	RetryAfter int
	// Cause is the underlying error, for the log; it is never shown to the caller.
	Cause error
}

func (e *Error) Error() string {
	if e.Cause != nil {
		return fmt.Sprintf("%s: %s: %v", e.Code, e.Detail, e.Cause)
	}
	return fmt.Sprintf("%s: %s", e.Code, e.Detail)
}

func (e *Error) Unwrap() error { return e.Cause }

// New returns an error with a code and a safe detail message.
func New(code Code, detail string) *Error { return &Error{Code: code, Detail: detail} }

// Newf is New with a formatted detail.
func Newf(code Code, format string, args ...any) *Error {
	return &Error{Code: code, Detail: fmt.Sprintf(format, args...)}
}

// Wrap returns an error with a code and safe detail that keeps cause for the log.
func Wrap(code Code, detail string, cause error) *Error {
	return &Error{Code: code, Detail: detail, Cause: cause}
}

// Invalid is a 400 about one field.
func Invalid(field, message string) *Error {
	return &Error{Code: InvalidRequest, Detail: field + " " + message,
		Fields: []FieldError{{Field: field, Message: message}}}
}

// Fields collects field errors while a request is validated, in the order found.
type Fields []FieldError

// Add records that field is invalid.
func (f *Fields) Add(field, message string) {
	*f = append(*f, FieldError{Field: field, Message: message})
}

// Addf records that field is invalid, with a formatted message.
func (f *Fields) Addf(field, format string, args ...any) {
	f.Add(field, fmt.Sprintf(format, args...))
}

// Err is nil when nothing was recorded, else one invalid_request error naming every field.
func (f Fields) Err() error {
	if len(f) == 0 {
		return nil
	}
	detail := f[0].Field + " " + f[0].Message
	if len(f) > 1 {
		detail = fmt.Sprintf("%s (and %d more)", detail, len(f)-1)
	}
	return &Error{Code: InvalidRequest, Detail: detail, Fields: f}
}

// As returns the *Error in err's chain, or an internal error wrapping err.
func As(err error) *Error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	return &Error{Code: Internal, Detail: "an internal error occurred", Cause: err}
}
