package auth

import (
	"encoding/json"
	"errors"
)

// errTimeNotNumber means a time claim is written other than as a JSON number.
var errTimeNotNumber = errors.New("exp, nbf and iat must be JSON numbers")

// UnmarshalJSON reads the claims as encoding/json does, but refuses exp, nbf and iat written
// as anything but a JSON number (RFC 7519's NumericDate): the jwt library also takes a numeric
// string ("exp": "1999999999"), which no issuer writes, so such a token is malformed.
func (c *claims) UnmarshalJSON(b []byte) error {
	var times struct {
		Exp json.RawMessage `json:"exp"`
		Nbf json.RawMessage `json:"nbf"`
		Iat json.RawMessage `json:"iat"`
	}
	if err := json.Unmarshal(b, &times); err != nil {
		return err
	}
	for _, raw := range []json.RawMessage{times.Exp, times.Nbf, times.Iat} {
		if len(raw) > 0 && string(raw) != "null" && raw[0] != '-' && (raw[0] < '0' || raw[0] > '9') {
			return errTimeNotNumber
		}
	}
	type plain claims // the same fields without this method
	return json.Unmarshal(b, (*plain)(c))
}

// nullFalse is a boolean claim whose null means what its absence means: false. encoding/json
// leaves a bool untouched on null, so a claim named twice, true and then null, would stay true,
// although its last value says absent: the one RFC 7519 says counts, and the one Supabase's
// database reads from the same token (jsonb keeps the last). Anything but true, false and null
// is an error, so such a token is malformed.
type nullFalse bool

// UnmarshalJSON reads true, false or null (false).
func (b *nullFalse) UnmarshalJSON(data []byte) error {
	if string(data) == "null" {
		*b = false
		return nil
	}
	var v bool
	if err := json.Unmarshal(data, &v); err != nil {
		return err
	}
	*b = nullFalse(v)
	return nil
}
