package app

import (
	"errors"

	"github.com/agentmem/agentmem/shared/apierror"
	"github.com/agentmem/agentmem/shared/embedding"
	"github.com/agentmem/agentmem/shared/store"
)

// storeCodes is the one table from the store's kinds of error to the problem codes a caller
// sees.
var storeCodes = []struct {
	kind error
	code apierror.Code
}{
	{store.ErrNotFound, apierror.NotFound},
	{store.ErrConflict, apierror.Conflict},
	{store.ErrForbidden, apierror.Forbidden},
	{store.ErrInvalid, apierror.InvalidRequest},
	{store.ErrUnavailable, apierror.Unavailable},
}

// Problem is what a use case's error shows its caller: the problem the use case gave it; else
// the store's error of a kind, with its detail and the field at fault, under the kind's code
// (storeCodes); else an internal error. A store error without a detail is a failure the store
// did not expect (a row missing where one must be), the server's: internal too. The result
// keeps err as its cause, so the transport still finds ErrDatabaseLost or ErrEmbeddingUnavailable
// in it.
func Problem(err error) *apierror.Error {
	var ae *apierror.Error
	if errors.As(err, &ae) {
		return ae
	}
	var se *store.Error
	if errors.As(err, &se) && se.Detail != "" {
		for _, c := range storeCodes {
			if se.Kind == c.kind {
				e := &apierror.Error{Code: c.code, Detail: se.Detail, Cause: err}
				if se.Field != "" {
					e.Fields = []apierror.FieldError{{Field: se.Field, Message: se.FieldIssue}}
				}
				return e
			}
		}
	}
	return apierror.As(err)
}

// ErrDatabaseLost is in the chain of an unavailable problem whose connection to the database or
// pooler broke (store.ErrConnectionLost): a restart or failover, which takes longer than a busy
// moment, so the transport may ask for a longer wait.
var ErrDatabaseLost = store.ErrConnectionLost

// ErrEmbeddingUnavailable is in the chain of an unavailable problem whose embedding provider
// failed after its own retries (embedding.ErrUnavailable).
var ErrEmbeddingUnavailable = embedding.ErrUnavailable
