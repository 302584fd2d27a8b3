package dbsecret_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/agentmem/agentmem/shared/dbsecret"
)

// fakeAWS answers Secrets Manager's GetSecretValue and SSM's GetParameter as AWS does (the
// awsJson1_1 protocol: POST /, X-Amz-Target, a SigV4 Authorization header), from the values
// it holds; unknown names get AWS's not-found error.
type fakeAWS struct {
	mu       sync.Mutex
	secrets  map[string]string
	params   map[string]string
	requests []map[string]any
}

func (f *fakeAWS) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var in map[string]any
	body, _ := io.ReadAll(r.Body)
	json.Unmarshal(body, &in) //nolint:errcheck
	f.mu.Lock()
	defer f.mu.Unlock()
	in["_target"] = r.Header.Get("X-Amz-Target")
	in["_signed"] = strings.HasPrefix(r.Header.Get("Authorization"), "AWS4-HMAC-SHA256 ")
	f.requests = append(f.requests, in)
	w.Header().Set("Content-Type", "application/x-amz-json-1.1")
	notFound := func(typ string) {
		w.WriteHeader(http.StatusBadRequest)
		json.NewEncoder(w).Encode(map[string]string{"__type": typ, "message": "not found"}) //nolint:errcheck
	}
	switch r.Header.Get("X-Amz-Target") {
	case "secretsmanager.GetSecretValue":
		id, _ := in["SecretId"].(string)
		v, ok := f.secrets[id]
		if !ok {
			notFound("ResourceNotFoundException")
			return
		}
		json.NewEncoder(w).Encode(map[string]any{"ARN": id, "Name": "db", "SecretString": v, "VersionId": "v1"}) //nolint:errcheck
	case "AmazonSSM.GetParameter":
		name, _ := in["Name"].(string)
		v, ok := f.params[name]
		if !ok {
			notFound("ParameterNotFound")
			return
		}
		json.NewEncoder(w).Encode(map[string]any{"Parameter": map[string]any{ //nolint:errcheck
			"Name": name, "Type": "SecureString", "Value": v, "Version": 1}})
	default:
		w.WriteHeader(http.StatusBadRequest)
	}
}

const secretARN = "arn:aws:secretsmanager:eu-west-1:123456789012:secret:agentmem-db-AbCdEf"

func TestGetenv(t *testing.T) {
	fake := &fakeAWS{
		secrets: map[string]string{
			secretARN:  "postgresql://u:p@db.example:6543/postgres",
			"as-json":  `{"DATABASE_URL": "postgresql://j:p@db.example:6543/postgres", "other": 1}`,
			"json-bad": `{"url": "x"}`,
			"empty":    "",
			"both": `{"DATABASE_URL": "postgresql://j:p@primary.example:6543/postgres",
				"DATABASE_READ_URL": "postgresql://j:p@replica.example:6543/postgres"}`,
		},
		params: map[string]string{"/agentmem/database-url": "postgresql://s:p@db.example:6543/postgres",
			"/agentmem/read-url": "postgresql://s:p@replica.example:6543/postgres"},
	}
	srv := httptest.NewServer(fake)
	defer srv.Close()
	t.Setenv("AWS_ENDPOINT_URL_SECRETS_MANAGER", srv.URL)
	t.Setenv("AWS_ENDPOINT_URL_SSM", srv.URL)
	t.Setenv("AWS_ACCESS_KEY_ID", "AKIDEXAMPLE")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "secret")
	t.Setenv("AWS_EC2_METADATA_DISABLED", "true")
	t.Setenv("AWS_CONFIG_FILE", "/dev/null")
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", "/dev/null")

	for _, tc := range []struct {
		name, region string
		env          map[string]string
		want         string // DATABASE_URL after; "" for an error
		wantErr      string
		wantRead     string // DATABASE_READ_URL after
	}{
		{"nothing set", "", map[string]string{"DATABASE_URL": "postgresql://plain"}, "postgresql://plain", "", ""},
		{"secret by ARN, region from it", "", map[string]string{"DATABASE_URL_SECRET": secretARN}, "postgresql://u:p@db.example:6543/postgres", "", ""},
		{"secret as JSON", "eu-west-1", map[string]string{"DATABASE_URL_SECRET": "as-json"}, "postgresql://j:p@db.example:6543/postgres", "", ""},
		{"parameter", "eu-west-1", map[string]string{"DATABASE_URL_PARAMETER": "/agentmem/database-url"}, "postgresql://s:p@db.example:6543/postgres", "", ""},
		{"JSON without the key", "eu-west-1", map[string]string{"DATABASE_URL_SECRET": "json-bad"}, "", "no DATABASE_URL", ""},
		{"empty secret", "eu-west-1", map[string]string{"DATABASE_URL_SECRET": "empty"}, "", "no string value", ""},
		{"missing secret", "eu-west-1", map[string]string{"DATABASE_URL_SECRET": "nope"}, "", "ResourceNotFoundException", ""},
		{"missing parameter", "eu-west-1", map[string]string{"DATABASE_URL_PARAMETER": "/nope"}, "", "ParameterNotFound", ""},
		{"two set", "eu-west-1", map[string]string{"DATABASE_URL": "postgresql://x", "DATABASE_URL_SECRET": secretARN}, "", "set one of", ""},
		{"both URLs from one JSON secret", "eu-west-1", map[string]string{"DATABASE_URL_SECRET": "both", "DATABASE_READ_URL_SECRET": "both"},
			"postgresql://j:p@primary.example:6543/postgres", "", "postgresql://j:p@replica.example:6543/postgres"},
		{"read URL from a parameter", "eu-west-1", map[string]string{"DATABASE_URL": "postgresql://plain", "DATABASE_READ_URL_PARAMETER": "/agentmem/read-url"},
			"postgresql://plain", "", "postgresql://s:p@replica.example:6543/postgres"},
		{"read URL without its key in the JSON", "eu-west-1", map[string]string{"DATABASE_URL": "postgresql://plain", "DATABASE_READ_URL_SECRET": "as-json"},
			"", "no DATABASE_READ_URL", ""},
		{"read URL set twice", "eu-west-1", map[string]string{"DATABASE_READ_URL": "postgresql://r", "DATABASE_READ_URL_PARAMETER": "/agentmem/read-url"},
			"", "set one of DATABASE_READ_URL, DATABASE_READ_URL_SECRET", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("AWS_REGION", tc.region)
			getenv := func(k string) string {
				if k == "LOG_LEVEL" {
					return "debug"
				}
				return tc.env[k]
			}
			got, err := dbsecret.Getenv(context.Background(), getenv)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want one saying %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if v := got("DATABASE_URL"); v != tc.want {
				t.Errorf("DATABASE_URL %q, want %q", v, tc.want)
			}
			if v := got("DATABASE_READ_URL"); v != tc.wantRead {
				t.Errorf("DATABASE_READ_URL %q, want %q", v, tc.wantRead)
			}
			if v := got("LOG_LEVEL"); v != "debug" {
				t.Errorf("other settings changed: LOG_LEVEL %q", v)
			}
		})
	}
	fake.mu.Lock()
	defer fake.mu.Unlock()
	for _, r := range fake.requests {
		if r["_signed"] != true {
			t.Errorf("unsigned request %v", r)
		}
		if r["_target"] == "AmazonSSM.GetParameter" && r["WithDecryption"] != true {
			t.Errorf("GetParameter without decryption: %v", r)
		}
	}
	if len(fake.requests) != 11 {
		t.Errorf("%d requests to AWS, want 11 (one per lookup)", len(fake.requests))
	}
}
