package httpapi

import (
	"encoding/json"
	"errors"
	"reflect"
	"testing"

	"github.com/agentmem/agentmem/shared/apierror"
)

// requestTypes are the request types of every function and operation.
var requestTypes = []any{
	activeSessionRequest{}, commitTurnRequest{}, getContextRequest{}, recallRequest{}, sweepRequest{},
	forgetUserRequest{}, knowledgeIngestRequest{}, knowledgeSearchRequest{}, knowledgeDeleteRequest{},
	listMemoriesRequest{}, oneMemoryRequest{}, updateMemoryRequest{}, notesRequest{},
	listSessionsRequest{}, sessionHistoryRequest{}, sessionChangeRequest{}, setSessionTitleRequest{},
	userMemoryRequest{}, userStateRequest{},
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

// FuzzCursors: the cursors of sessions, memories and history read any string as a position or
// an invalid cursor of the request, never panicking, and read back what they wrote.
func FuzzCursors(f *testing.F) {
	for _, s := range []string{"", "cwAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA", "bgAAAAAAAAAD", "bwAAAAAAAAAD", "c3_______________________________", "bv________w", "%%%", "bQ=="} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, cursor string) {
		for _, kind := range []byte{cursorSessions, cursorMemories} {
			var fe apierror.Fields
			ts, id, ok := cursorKeyOf(&fe, kind, &cursor)
			wantInvalidRequest(t, "cursorKeyOf", []byte(cursor), fe.Err())
			if ok != (len(fe) == 0) {
				t.Fatalf("cursor %q: ok %v with %d errors", cursor, ok, len(fe))
			}
			if ok && cursorAfterKey(kind, ts, id) != cursor {
				t.Fatalf("cursor %q reads as %v %v, which writes %q", cursor, ts, id, cursorAfterKey(kind, ts, id))
			}
		}
		for _, order := range []string{historyNewest, historyOldest} {
			var fe apierror.Fields
			seq := cursorSeqOf(&fe, order, &cursor)
			wantInvalidRequest(t, "cursorSeqOf", []byte(cursor), fe.Err())
			if (seq != nil) != (len(fe) == 0) {
				t.Fatalf("cursor %q: seq %v with %d errors", cursor, seq, len(fe))
			}
			if seq != nil && cursorAfterSeq(order, *seq) != cursor {
				t.Fatalf("cursor %q reads as %d, which writes %q", cursor, *seq, cursorAfterSeq(order, *seq))
			}
		}
	})
}
