package httpapi

import (
	"context"
	"net/http"

	"github.com/agentmem/agentmem/shared/auth"
)

// run decodes the request body strictly into In, runs the use case uc for the caller and
// answers status(out) with out as the body.
func run[In, Out any](ctx context.Context, c *call, uc func(context.Context, auth.Principal, In) (Out, error),
	status func(Out) int) (int, any, error) {
	var in In
	if err := decode(c.body, &in); err != nil {
		return 0, nil, err
	}
	out, err := uc(ctx, c.principal, in)
	if err != nil {
		return 0, nil, err
	}
	return status(out), out, nil
}

// ok200 is the status of an answer that is always 200.
func ok200[T any](T) int { return http.StatusOK }

// createdOr200 is 201 for an answer that created something, else 200.
func createdOr200(created bool) int {
	if created {
		return http.StatusCreated
	}
	return http.StatusOK
}
