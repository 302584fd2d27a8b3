package httpapi_test

import (
	"net/http"
	"strings"
	"testing"
)

// umState is what user-state shows a user: the body of get, or "none".
func umState(e *env, u user) string {
	e.t.Helper()
	r := e.call(u.token, "user-state", map[string]any{"op": "get"})
	if r.status == http.StatusNotFound {
		return "none"
	}
	return string(r.must(e.t, http.StatusOK).raw)
}

func TestUserStateLifecycle(t *testing.T) {
	t.Parallel()
	e := newEnv(t, false)
	u := e.newUser("")

	wantProblem(t, e.call(u.token, "user-state", map[string]any{"op": "get"}), http.StatusNotFound, "not_found", "")
	wantProblem(t, e.call(u.token, "user-state", map[string]any{"op": "delete"}), http.StatusNotFound, "not_found", "")

	r := e.call(u.token, "user-state", map[string]any{"op": "set", "mode": "active"}).must(t, http.StatusCreated)
	if str(r.body["mode"]) != "active" || r.body["created"] != true || str(r.body["updated_at"]) == "" {
		t.Fatalf("set new: %s", r.raw)
	}
	r = e.call(u.token, "user-state", map[string]any{"op": "set", "mode": "halted"}).must(t, http.StatusOK)
	if str(r.body["mode"]) != "halted" || r.body["created"] != false {
		t.Fatalf("set replace: %s", r.raw)
	}
	e.call(u.token, "user-state", map[string]any{"op": "set", "mode": "halted"}).must(t, http.StatusOK)
	// Modes are stored as given: case matters.
	e.call(u.token, "user-state", map[string]any{"op": "set", "mode": "Halted"}).must(t, http.StatusOK)
	r = e.call(u.token, "user-state", map[string]any{"op": "get"}).must(t, http.StatusOK)
	if len(r.body) != 2 || str(r.body["mode"]) != "Halted" || str(r.body["updated_at"]) == "" {
		t.Fatalf("get: %s", r.raw)
	}
	if n := e.count("user_state", "user_id = $1", u.id); n != 1 {
		t.Fatalf("%d rows, want 1", n)
	}

	long := strings.Repeat("ö", 64)
	e.call(u.token, "user-state", map[string]any{"op": "set", "mode": long}).must(t, http.StatusOK)
	if r = e.call(u.token, "user-state", map[string]any{"op": "get"}).must(t, http.StatusOK); str(r.body["mode"]) != long {
		t.Fatalf("get long mode: %s", r.raw)
	}

	r = e.call(u.token, "user-state", map[string]any{"op": "delete"}).must(t, http.StatusOK)
	if r.body["deleted"] != true {
		t.Fatalf("delete: %s", r.raw)
	}
	wantProblem(t, e.call(u.token, "user-state", map[string]any{"op": "get"}), http.StatusNotFound, "not_found", "")
	wantProblem(t, e.call(u.token, "user-state", map[string]any{"op": "delete"}), http.StatusNotFound, "not_found", "")
	e.call(u.token, "user-state", map[string]any{"op": "set", "mode": "active"}).must(t, http.StatusCreated)
}

func TestUserStateBadInput(t *testing.T) {
	t.Parallel()
	e := newEnv(t, false)
	u := e.newUser("")
	e.call(u.token, "user-state", map[string]any{"op": "set", "mode": "active"}).must(t, http.StatusCreated)
	before := umState(e, u)

	tests := []struct {
		name, body, field string
	}{
		{"no op", `{"mode":"active"}`, "op"},
		{"unknown op", `{"op":"toggle"}`, "op"},
		{"missing mode", `{"op":"set"}`, "mode"},
		{"empty mode", `{"op":"set","mode":""}`, "mode"},
		{"mode too long", `{"op":"set","mode":"` + strings.Repeat("m", 65) + `"}`, "mode"},
		{"blank mode", `{"op":"set","mode":"  "}`, "mode"},
		{"mode with surrounding space", `{"op":"set","mode":"active "}`, "mode"},
		{"mode with a control character", `{"op":"set","mode":"act\u001bive"}`, "mode"},
		{"mode with a line break", `{"op":"set","mode":"a\r\nb"}`, "mode"},
		{"mode not a string", `{"op":"set","mode":true}`, "mode"},
		{"null mode", `{"op":"set","mode":null}`, "mode"},
		{"mode with get", `{"op":"get","mode":"active"}`, "mode"},
		{"mode with delete", `{"op":"delete","mode":"active"}`, "mode"},
		{"agent", `{"op":"set","mode":"x","agent":"bot"}`, "agent"},
		{"unknown field", `{"op":"set","mood":"happy"}`, "mood"},
		{"NUL", `{"op":"set","mode":"a\u0000"}`, ""},
		{"malformed", `{"op":"set",`, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			wantProblem(t, e.call(u.token, "user-state", tt.body), http.StatusBadRequest, "invalid_request", tt.field)
		})
	}
	if after := umState(e, u); after != before {
		t.Fatalf("bad requests changed the state: %s -> %s", before, after)
	}
}

func TestUserStateIsolation(t *testing.T) {
	t.Parallel()
	e := newEnv(t, false)
	a := e.newUser("t1")
	b := e.newUser("t1")
	aOther := umUserAs(e, a.id, "t2")
	e.call(a.token, "user-state", map[string]any{"op": "set", "mode": "halted"}).must(t, http.StatusCreated)
	before := umState(e, a)

	for name, other := range map[string]user{"other user": b, "other tenant": aOther} {
		t.Run(name, func(t *testing.T) {
			wantProblem(t, e.call(other.token, "user-state", map[string]any{"op": "get"}), http.StatusNotFound, "not_found", "")
			wantProblem(t, e.call(other.token, "user-state", map[string]any{"op": "delete"}), http.StatusNotFound, "not_found", "")
		})
	}
	// Their own set creates their own row and leaves A's alone.
	e.call(b.token, "user-state", map[string]any{"op": "set", "mode": "active"}).must(t, http.StatusCreated)
	e.call(aOther.token, "user-state", map[string]any{"op": "set", "mode": "t2"}).must(t, http.StatusCreated)
	if after := umState(e, a); after != before {
		t.Fatalf("others changed A's state: %s -> %s", before, after)
	}

	svc := e.serviceToken()
	r := e.call(svc, "user-state", map[string]any{"op": "get", "user_id": a.id.String(), "tenant_id": "t1"}).must(t, http.StatusOK)
	if str(r.body["mode"]) != "halted" {
		t.Fatalf("service get: %s", r.raw)
	}
	r = e.call(svc, "user-state", map[string]any{"op": "get", "user_id": a.id.String(), "tenant_id": "t2"}).must(t, http.StatusOK)
	if str(r.body["mode"]) != "t2" {
		t.Fatalf("service get in t2: %s", r.raw)
	}
	wantProblem(t, e.call(svc, "user-state", map[string]any{"op": "get"}), http.StatusBadRequest, "invalid_request", "user_id")
	e.call(svc, "user-state", map[string]any{"op": "set", "mode": "active", "user_id": a.id.String(), "tenant_id": "t1"}).must(t, http.StatusOK)
	if r = e.call(a.token, "user-state", map[string]any{"op": "get"}).must(t, http.StatusOK); str(r.body["mode"]) != "active" {
		t.Fatalf("after service set: %s", r.raw)
	}
	wantProblem(t, e.call(a.token, "user-state", map[string]any{"op": "delete", "user_id": b.id.String()}), http.StatusForbidden, "forbidden", "")
	e.call(b.token, "user-state", map[string]any{"op": "get"}).must(t, http.StatusOK)
}

func TestUserStateConcurrentSetCreatesOnce(t *testing.T) {
	t.Parallel()
	e := newEnv(t, false)
	u := e.newUser("")
	const n = 10
	createdOnce(t, n, func(int) response {
		return e.call(u.token, "user-state", map[string]any{"op": "set", "mode": "m"})
	})
	if c := e.count("user_state", "user_id = $1", u.id); c != 1 {
		t.Fatalf("%d rows, want 1", c)
	}
}
