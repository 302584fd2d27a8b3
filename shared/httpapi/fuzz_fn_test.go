package httpapi_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/google/uuid"

	"github.com/agentmem/agentmem/shared/app"
	"github.com/agentmem/agentmem/shared/auth"
	"github.com/agentmem/agentmem/shared/testdb"
)

// The request decoders of every function and operation, fuzzed through the handler over the
// real database: whatever the body, the answer is a success (a valid request), 400
// invalid_request, or another 4xx of the contract with its code (404 for a session that is
// not the caller's, 409...), never a 5xx, and never a panic. Seeds are the table cases; in
// them $UID, $SID, $MID and $MEM stand for the fuzz user's id, one of their sessions, one of
// its messages and one of their memories.

// fuzzTarget is the fixture one fuzz worker shares between inputs.
type fuzzTarget struct {
	h                  http.Handler
	app                *app.App
	dbURL              string
	user, service      string
	uid, sid, mid, mem string
}

// newFuzzTarget builds a server over the fuzz database (see testdb.Fuzz) and a user with a
// session, a message and a memory.
func newFuzzTarget(f *testing.F) *fuzzTarget {
	c := envConfig{url: testdb.Fuzz(f).URL, maxConns: 4, log: discardLog}
	a, srv := c.serve(f, c.openStore(f, testdb.DB{}), io.Discard)
	ft := &fuzzTarget{h: srv.Mux(), app: a, dbURL: c.url, uid: uuid.NewString(), sid: uuid.NewString()}
	var err error
	if ft.user, err = auth.MintHS256(secret, auth.MintClaims{Role: auth.RoleUser, Subject: ft.uid}); err != nil {
		f.Fatal(err)
	}
	if ft.service, err = auth.MintHS256(secret, auth.MintClaims{Role: auth.RoleService}); err != nil {
		f.Fatal(err)
	}
	status, out := ft.post(ft.user, "commit-turn", []byte(`{"session_id":"`+ft.sid+`","messages":[{"role":"user","content":"I like tea."}],"memories":[{"content":"Likes tea."}]}`))
	if status != http.StatusCreated {
		f.Fatalf("seed commit: %d %v", status, out)
	}
	var res struct {
		Messages []struct{ ID string } `json:"messages"`
		Memories []struct{ ID string } `json:"memories"`
	}
	b, _ := json.Marshal(out)
	if err := json.Unmarshal(b, &res); err != nil || len(res.Messages) != 1 || len(res.Memories) != 1 {
		f.Fatalf("seed commit answered %s", b)
	}
	ft.mid, ft.mem = res.Messages[0].ID, res.Memories[0].ID
	return ft
}

// expand replaces the seeds' $UID, $SID, $MID and $MEM with the fixture's ids.
func (ft *fuzzTarget) expand(body []byte) []byte {
	repl := []string{"$UID", ft.uid, "$SID", ft.sid, "$MID", ft.mid, "$MEM", ft.mem}
	for i := 0; i < len(repl); i += 2 {
		body = bytes.ReplaceAll(body, []byte(repl[i]), []byte(repl[i+1]))
	}
	return body
}

func (ft *fuzzTarget) post(token, fn string, body []byte, headers ...string) (int, map[string]any) {
	req := httptest.NewRequest(http.MethodPost, "/v1/"+fn, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+token)
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	rec := httptest.NewRecorder()
	ft.h.ServeHTTP(rec, req)
	var out map[string]any
	_ = json.Unmarshal(rec.Body.Bytes(), &out)
	return rec.Code, out
}

// commonSeeds are bodies every decoder must refuse or take, whatever the function.
var commonSeeds = []string{
	``, `{}`, `null`, `[]`, `"x"`, `{"op":null}`, `{"op":1}`, `{"op":"list","op":"get"}`,
	`{"OP":"list"}`, `{"user_id":"$UID","tenant_id":"\ud800"}`, `{"user_id":"$UID","USER_ID":"$UID"}`,
	`{"nope":1}`, `{} {}`, `{"agent":"\u0000"}`, `{"agent":{"a":1,"a":2}}`,
}

// fuzzFunction fuzzes fn's decoder with the seeds, as the user (or, with service, as a
// service naming the user).
func fuzzFunction(f *testing.F, fn string, service bool, seeds ...string) {
	for _, s := range append(seeds, commonSeeds...) {
		f.Add([]byte(s))
	}
	ft := newFuzzTarget(f)
	token := ft.user
	if service {
		token = ft.service
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		body = ft.expand(body)
		status, out := ft.post(token, fn, body)
		code, _ := out["code"].(string)
		switch {
		case status >= 200 && status < 300:
		case status == http.StatusBadRequest && code == "invalid_request":
		case status > 400 && status < 500 && code != "" && code != "invalid_request":
		default:
			t.Fatalf("%s %q: %d %v", fn, body, status, out)
		}
	})
}

func FuzzActiveSession(f *testing.F) {
	fuzzFunction(f, "active-session", false,
		`{"agent":"bot","mode":"resolve"}`, `{"mode":"activate","session_id":"$SID"}`, `{"mode":"new"}`,
		`{"mode":"new","session_id":"$SID"}`, `{"mode":"Resolve"}`, `{"session_id":"not-a-uuid","mode":"activate"}`)
}

func FuzzGetContext(f *testing.F) {
	fuzzFunction(f, "get-context", false,
		`{"session_id":"$SID"}`, `{"session_id":"$SID","format":"openai","max_messages":5,"max_tokens":100,"query":"tea","recall_k":3}`,
		`{"session_id":"$SID","max_messages":0}`, `{"session_id":"$SID","max_tokens":1.5}`, `{"session_id":"$SID","format":"OPENAI"}`,
		`{"session_id":"$SID","recall_k":1e3}`, `{"session_id":"$SID","format":"anthropic","answers_only":true}`,
		`{"session_id":"$SID","format":"langchain","since":"2026-01-02T15:04:05Z"}`, `{"session_id":"$SID","since":"2026-01-02"}`,
		`{"session_id":"$SID","since":"99999-01-02T15:04:05Z"}`, `{"session_id":"$SID","answers_only":"true"}`)
}

func FuzzRecall(f *testing.F) {
	fuzzFunction(f, "recall", false,
		`{"query":"tea"}`, `{"query":"tea","k":5,"mode":"text","filter":{"kind":"pref"},"min_score":0.1,"mmr_lambda":0.5}`,
		`{"query":"tea","mode":"vector"}`, `{"query":""}`, `{"query":"tea","filter":[]}`, `{"query":"tea","mmr_lambda":2}`,
		`{"query":"tea","filter":{"k":"\ud800"}}`, `{"query":"tea","k":-1}`)
}

func FuzzSweepExpired(f *testing.F) {
	fuzzFunction(f, "sweep-expired", true,
		`{"dry_run":true}`, `{"dry_run":true,"batch_size":10,"max_duration_ms":100}`, `{"batch_size":0}`, `{"dry_run":"yes"}`)
}

func FuzzForgetUser(f *testing.F) {
	fuzzFunction(f, "forget-user", true,
		`{"user_id":"`+uuid.NewString()+`"}`, `{"user_id":"`+uuid.NewString()+`","tenant_id":"acme"}`, `{"user_id":"x"}`, `{}`)
}

func FuzzKnowledgeIngest(f *testing.F) {
	fuzzFunction(f, "knowledge", true,
		`{"op":"ingest","source":"doc.md","content":"# Tea\n\nGreen tea is nice.","metadata":{"lang":"en"}}`,
		`{"op":"ingest","source":"","content":"x"}`, `{"op":"ingest","source":"a","content":"x","metadata":1}`,
		`{"op":"ingest","tenant_id":"acme","source":"a","content":"x"}`)
}

func FuzzKnowledgeSearch(f *testing.F) {
	fuzzFunction(f, "knowledge", false,
		`{"op":"search","query":"tea"}`, `{"op":"search","query":"tea","k":3,"mode":"text"}`, `{"op":"search","query":""}`,
		`{"op":"search","query":"tea","mode":"fuzzy"}`)
}

func FuzzKnowledgeDelete(f *testing.F) {
	fuzzFunction(f, "knowledge", true,
		`{"op":"delete","source":"doc.md"}`, `{"op":"delete","source":"doc.md","tenant_id":"acme"}`, `{"op":"delete"}`)
}

func FuzzMemoriesList(f *testing.F) {
	fuzzFunction(f, "memories", false,
		`{"op":"list"}`, `{"op":"list","agent":"bot","limit":2}`, `{"op":"list","cursor":"%%%"}`, `{"op":"list","limit":0}`)
}

func FuzzMemoriesGet(f *testing.F) {
	fuzzFunction(f, "memories", false, `{"op":"get","id":"$MEM"}`, `{"op":"get","id":"x"}`, `{"op":"get"}`)
}

func FuzzMemoriesUpdate(f *testing.F) {
	fuzzFunction(f, "memories", false,
		`{"op":"update","id":"$MEM","content":"Likes green tea."}`, `{"op":"update","id":"$MEM","metadata":{"k":"v"}}`,
		`{"op":"update","id":"$MEM"}`, `{"op":"update","id":"$MEM","content":""}`, `{"op":"update","id":"$MEM","metadata":{"k":1,"k":2}}`)
}

func FuzzMemoriesDelete(f *testing.F) {
	fuzzFunction(f, "memories", false, `{"op":"delete","id":"`+uuid.NewString()+`"}`, `{"op":"delete","id":1}`)
}

func FuzzNotesRead(f *testing.F) {
	fuzzFunction(f, "notes", false, `{"op":"read"}`, `{"op":"read","agent":"bot"}`, `{"op":"read","content":"x"}`)
}

func FuzzNotesOverwrite(f *testing.F) {
	fuzzFunction(f, "notes", false, `{"op":"overwrite","content":"# Prefs\n\n- tea"}`, `{"op":"overwrite"}`, `{"op":"overwrite","content":"a\udfffb"}`)
}

func FuzzNotesAppend(f *testing.F) {
	fuzzFunction(f, "notes", false, `{"op":"append","content":"- more tea"}`, `{"op":"append","content":""}`)
}

func FuzzNotesPrepend(f *testing.F) {
	fuzzFunction(f, "notes", false, `{"op":"prepend","content":"Note:"}`, `{"op":"prepend","content":7}`)
}

func FuzzNotesReplaceSection(f *testing.F) {
	fuzzFunction(f, "notes", false,
		`{"op":"replace_section","section":"Prefs","content":"- coffee"}`, `{"op":"replace_section","section":"","content":"x"}`,
		`{"op":"replace_section","content":"x"}`)
}

func FuzzNotesDeleteSection(f *testing.F) {
	fuzzFunction(f, "notes", false, `{"op":"delete_section","section":"Prefs"}`, `{"op":"delete_section"}`)
}

func FuzzNotesClear(f *testing.F) {
	fuzzFunction(f, "notes", false, `{"op":"clear"}`, `{"op":"clear","section":"x"}`)
}

func FuzzSessionsList(f *testing.F) {
	fuzzFunction(f, "sessions", false, `{"op":"list"}`, `{"op":"list","agent":"bot","limit":1,"cursor":"cwAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"}`, `{"op":"list","limit":101}`)
}

func FuzzSessionsHistory(f *testing.F) {
	fuzzFunction(f, "sessions", false,
		`{"op":"history","session_id":"$SID"}`, `{"op":"history","session_id":"$SID","order":"oldest","limit":1,"cursor":"bwAAAAAAAAAD"}`,
		`{"op":"history","session_id":"$SID","order":"sideways"}`, `{"op":"history"}`)
}

func FuzzSessionsReset(f *testing.F) {
	fuzzFunction(f, "sessions", false, `{"op":"reset","session_id":"$SID"}`, `{"op":"reset","session_id":"$SID","message_id":"$MID"}`)
}

func FuzzSessionsDelete(f *testing.F) {
	fuzzFunction(f, "sessions", false, `{"op":"delete","session_id":"`+uuid.NewString()+`"}`, `{"op":"delete"}`)
}

func FuzzSessionsDeleteMessage(f *testing.F) {
	fuzzFunction(f, "sessions", false, `{"op":"delete_message","session_id":"$SID","message_id":"`+uuid.NewString()+`"}`,
		`{"op":"delete_message","session_id":"$SID"}`)
}

func FuzzSessionsSetTitle(f *testing.F) {
	fuzzFunction(f, "sessions", false, `{"op":"set_title","session_id":"$SID","title":"Tea talk"}`,
		`{"op":"set_title","session_id":"$SID","title":null}`, `{"op":"set_title","session_id":"$SID","title":"\t"}`,
		`{"op":"set_title","session_id":"$SID","title":["x"]}`, `{"op":"set_title","session_id":"$SID"}`)
}

func FuzzUserMemorySet(f *testing.F) {
	fuzzFunction(f, "user-memory", false, `{"op":"set","key":"prefs","value":{"drink":"tea"}}`,
		`{"op":"set","key":"k","value":[1]}`, `{"op":"set","key":"","value":{}}`, `{"op":"set","key":"k","value":{"s":"\ud800"}}`)
}

func FuzzUserMemoryGet(f *testing.F) {
	fuzzFunction(f, "user-memory", false, `{"op":"get","key":"prefs"}`, `{"op":"get"}`)
}

func FuzzUserMemoryList(f *testing.F) {
	fuzzFunction(f, "user-memory", false, `{"op":"list"}`, `{"op":"list","key":"k"}`)
}

func FuzzUserMemoryDelete(f *testing.F) {
	fuzzFunction(f, "user-memory", false, `{"op":"delete","key":"prefs"}`, `{"op":"delete","key":1}`)
}

func FuzzUserMemoryClear(f *testing.F) {
	fuzzFunction(f, "user-memory", false, `{"op":"clear"}`, `{"op":"clear","value":{}}`)
}

func FuzzUserStateSet(f *testing.F) {
	fuzzFunction(f, "user-state", false, `{"op":"set","mode":"halted"}`, `{"op":"set","mode":""}`, `{"op":"set","mode":"\ud800"}`)
}

func FuzzUserStateGet(f *testing.F) {
	fuzzFunction(f, "user-state", false, `{"op":"get"}`, `{"op":"get","mode":"x"}`)
}

func FuzzUserStateDelete(f *testing.F) {
	fuzzFunction(f, "user-state", false, `{"op":"delete"}`, `{"op":"delete","agent":"bot"}`)
}

func FuzzIntents(f *testing.F) {
	fuzzFunction(f, "intents", false,
		`{"type":"syncSession","session_id":"$SID"}`, `{"type":"backfillSession","session_id":"$SID","user_id":"$UID"}`,
		`{"type":"fetchContext","session_id":"$SID"}`, `{"type":"syncSession"}`, `{"type":"SyncSession","session_id":"$SID"}`,
		`{"type":"syncSession","session_id":"`+uuid.NewString()+`"}`)
}

func FuzzJobsList(f *testing.F) {
	fuzzFunction(f, "jobs", true,
		`{"op":"list"}`, `{"op":"list","status":"dead","adapter":"webhook","limit":10}`, `{"op":"list","limit":0}`,
		`{"op":"list","cursor":"x"}`, `{"op":"list","status":"Dead"}`)
}

func FuzzJobsOne(f *testing.F) {
	fuzzFunction(f, "jobs", true,
		`{"op":"get","id":"`+uuid.NewString()+`"}`, `{"op":"retry","id":"`+uuid.NewString()+`"}`, `{"op":"get"}`,
		`{"op":"retry","id":"x"}`, `{"op":"purge","status":"done"}`, `{"op":"purge","status":"dead","older_than_seconds":60}`,
		`{"op":"purge","status":"pending"}`, `{"op":"purge","older_than_seconds":-1}`)
}

func FuzzProcessJobs(f *testing.F) {
	fuzzFunction(f, "process-jobs", true,
		`{"limit":10,"max_duration_ms":100}`, `{"limit":0}`, `{"max_duration_ms":900001}`, `{"limit":"many"}`)
}
