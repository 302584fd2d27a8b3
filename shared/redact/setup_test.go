package redact

import (
	"crypto/hmac"
	"crypto/sha256"
	"hash"
	"testing"
)

const testSalt = "test-salt-0123456789abcdef"

func testRedactor(t testing.TB) *Redactor {
	t.Helper()
	r, err := New(testSalt)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func (r *Redactor) newHash() hash.Hash { return hmac.New(sha256.New, r.key) }
