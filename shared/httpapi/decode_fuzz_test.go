package httpapi

import (
	"encoding/json"
	"errors"
	"reflect"
	"testing"

	"github.com/agentmem/agentmem/shared/apierror"
	"github.com/agentmem/agentmem/shared/app"
)

// requestTypes are the request types of every function and operation.
var requestTypes = []any{
	app.ActiveSessionInput{}, app.CommitTurnInput{}, app.GetContextInput{}, app.RecallInput{}, app.SweepInput{},
	app.ForgetUserInput{}, app.KnowledgeIngestInput{}, app.KnowledgeSearchInput{}, app.KnowledgeDeleteInput{},
	app.ListMemoriesInput{}, app.OneMemoryInput{}, app.UpdateMemoryInput{}, app.NotesInput{},
	app.ListSessionsInput{}, app.SessionHistoryInput{}, app.SessionChangeInput{}, app.SetSessionTitleInput{},
	app.UserMemoryInput{}, app.UserStateInput{},
}

// wantInvalidRequest fails unless err is nil or an invalid_request error.
func wantInvalidRequest(t *testing.T, what string, body []byte, err error) {
	t.Helper()
	if err == nil {
		return
	}
	var ae *apierror.Error
	if !errors.As(err, &ae) || ae.Code != apierror.InvalidRequest {
		t.Fatalf("%s %q: %v, want nil or invalid_request", what, body, err)
	}
}

// FuzzDecode: decode and opOf take any body into every request type without panicking, and
// answer a value or an invalid_request error; a body they take is one JSON object.
func FuzzDecode(f *testing.F) {
	for _, s := range []string{
		`{}`, `{"session_id":"0b9c7a61-5d0e-4f43-9e1c-2f6a3c4b5d6e","messages":[{"role":"user","content":"hi","metadata":{"a":1}}]}`,
		`{"op":"list"}`, `{"op":"set","key":"k","value":{"a":[1,{"b":null}]}}`, `{"SESSION_ID":"x"}`, `{"a":1,"a":2}`,
		`{"m":{"x":"\ud800"}}`, `{"messages":[{"tool_calls":[{"function":{"Name":"x"}}]}]}`, `{"k":1e400}`,
		`{"ttl_seconds":1.5}`, `{"op":"list"} x`, `[]`, `null`, `{"title":"\udc00"}`, `{"op":"\u0000"}`, ``,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		for _, rt := range requestTypes {
			dst := reflect.New(reflect.TypeOf(rt)).Interface()
			err := decode(body, dst)
			wantInvalidRequest(t, reflect.TypeOf(rt).Name(), body, err)
			if err == nil && !json.Valid(body) {
				t.Fatalf("%s took %q, which is not JSON", reflect.TypeOf(rt).Name(), body)
			}
		}
		_, err := opOf(body, "list", "get")
		wantInvalidRequest(t, "opOf", body, err)
	})
}
