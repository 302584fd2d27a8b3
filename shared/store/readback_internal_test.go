package store

import (
	"encoding/json"
	"testing"
)

// The values read back from the database that a caller could have written (the answer
// stored for an idempotency key, a message's tool_calls) decode to a value or a defined error
// whatever the row holds, and never panic; so does the merge of a request's repeated facts'
// metadata.

func FuzzDecodeReplay(f *testing.F) {
	f.Add([]byte(`{"session_id":"0b9c7a61-5d0e-4f43-9e1c-2f6a3c4b5d6e","messages":[{"id":"0b9c7a61-5d0e-4f43-9e1c-2f6a3c4b5d6e","seq":1,"created_at":"2026-11-23T12:00:00Z"}],"memories":[{"id":"0b9c7a61-5d0e-4f43-9e1c-2f6a3c4b5d6e"}]}`))
	f.Add([]byte(`{"session_id":"x"}`))
	f.Add([]byte(`{"messages":[{"seq":1e400}]}`))
	f.Add([]byte(`{"messages":[{"created_at":"yesterday"}]}`))
	f.Add([]byte(`null`))
	f.Add([]byte(`[]`))
	f.Add([]byte(``))
	f.Fuzz(func(t *testing.T, raw []byte) {
		res, err := decodeReplay(raw)
		if err != nil {
			if res.Messages != nil || res.Memories != nil {
				t.Fatalf("%q: a half-filled answer beside the error %v", raw, err)
			}
			return
		}
		if !json.Valid(raw) {
			t.Fatalf("%q is not JSON, yet decoded", raw)
		}
	})
}

func FuzzDecodeToolCalls(f *testing.F) {
	f.Add([]byte(`[{"id":"c1","type":"function","function":{"name":"lookup","arguments":"{\"q\":1}"}}]`))
	f.Add([]byte(`[]`))
	f.Add([]byte(`null`))
	f.Add([]byte(`{"id":"c1"}`))
	f.Add([]byte(`[{"function":{"name":7}}]`))
	f.Add([]byte(`[{"id":"\ud800"}]`))
	f.Add([]byte(``))
	f.Fuzz(func(t *testing.T, raw []byte) {
		calls, err := decodeToolCalls(raw)
		if err != nil && calls != nil {
			t.Fatalf("%q: calls beside the error %v", raw, err)
		}
		if err == nil && len(raw) > 0 && !json.Valid(raw) {
			t.Fatalf("%q is not JSON, yet decoded", raw)
		}
	})
}

func FuzzMergeObjects(f *testing.F) {
	f.Add([]byte(`{"a":1,"b":{"c":2}}`), []byte(`{"b":3}`))
	f.Add([]byte(``), []byte(`{"k":"v"}`))
	f.Add([]byte(`null`), []byte(`{}`))
	f.Add([]byte(`null`), []byte(`{"k":1}`))
	f.Add([]byte(`[1]`), []byte(`{"a":1}`))
	f.Add([]byte(`{"a":1,"a":2}`), []byte(`{"a":"\ud800"}`))
	f.Add([]byte(`{"a":1e400}`), []byte(`{"b":1}`))
	f.Fuzz(func(t *testing.T, a, b []byte) {
		var ob map[string]json.RawMessage
		if json.Unmarshal(b, &ob) != nil || ob == nil {
			b = []byte(`{}`) // the new side is always an object the request checked
		}
		out := mergeObjects(a, b)
		var m map[string]json.RawMessage
		if err := json.Unmarshal(out, &m); err != nil || m == nil {
			t.Fatalf("merge of %q and %q is %q, not a JSON object", a, b, out)
		}
		for k, v := range ob {
			if string(m[k]) != string(v) && json.Valid(a) {
				var x, y any
				json.Unmarshal(m[k], &x) //nolint:errcheck
				json.Unmarshal(v, &y)    //nolint:errcheck
				if xj, _ := json.Marshal(x); string(xj) != func() string { yj, _ := json.Marshal(y); return string(yj) }() {
					t.Fatalf("merge of %q and %q lost %q: %q", a, b, k, out)
				}
			}
		}
	})
}
