// Package dbsecret reads DATABASE_URL and DATABASE_READ_URL, at start-up (a Lambda's cold
// start), from AWS Secrets Manager or SSM Parameter Store, so that the connection strings, which
// hold the database password, stay out of the functions' configuration. For each NAME of the two:
//
//   - NAME_SECRET names a Secrets Manager secret (ARN or name) whose SecretString is the value,
//     or a JSON object with a NAME key (one secret may hold both);
//   - NAME_PARAMETER names an SSM parameter (a SecureString, decrypted) whose value is the value.
//
// At most one of NAME, NAME_SECRET and NAME_PARAMETER may be set. Credentials and region come
// from the AWS SDK's default chain (the Lambda role and AWS_REGION; a secret's ARN names its own
// region). The values are never logged.
package dbsecret

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/arn"
	awsconfig "github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"
	"github.com/aws/aws-sdk-go-v2/service/ssm"
)

// Timeout bounds the calls made at start-up (one per setting read).
const Timeout = 5 * time.Second

// Names are the settings Getenv can read from a secret or a parameter.
var Names = []string{"DATABASE_URL", "DATABASE_READ_URL"}

// Getenv returns getenv with each of Names read from the secret or parameter that NAME_SECRET
// or NAME_PARAMETER names; getenv itself when none is set.
func Getenv(ctx context.Context, getenv func(string) string) (func(string) string, error) {
	ctx, cancel := context.WithTimeout(ctx, Timeout)
	defer cancel()
	values := map[string]string{}
	var cfg *aws.Config
	for _, name := range Names {
		secret := strings.TrimSpace(getenv(name + "_SECRET"))
		param := strings.TrimSpace(getenv(name + "_PARAMETER"))
		if secret == "" && param == "" {
			continue
		}
		set := 0
		for _, v := range []string{getenv(name), secret, param} {
			if v != "" {
				set++
			}
		}
		if set > 1 {
			return nil, fmt.Errorf("set one of %s, %s_SECRET and %s_PARAMETER", name, name, name)
		}
		if cfg == nil {
			var opts []func(*awsconfig.LoadOptions) error
			if a, err := arn.Parse(secret); err == nil && getenv("AWS_REGION") == "" {
				opts = append(opts, awsconfig.WithRegion(a.Region))
			}
			c, err := awsconfig.LoadDefaultConfig(ctx, opts...)
			if err != nil {
				return nil, fmt.Errorf("AWS configuration: %w", err)
			}
			cfg = &c
		}
		var v string
		var err error
		if secret != "" {
			v, err = fromSecret(ctx, secretsmanager.NewFromConfig(*cfg), name, secret)
		} else {
			v, err = fromParameter(ctx, ssm.NewFromConfig(*cfg), name, param)
		}
		if err != nil {
			return nil, err
		}
		values[name] = v
	}
	if len(values) == 0 {
		return getenv, nil
	}
	return func(k string) string {
		if v, ok := values[k]; ok {
			return v
		}
		return getenv(k)
	}, nil
}

func fromSecret(ctx context.Context, c *secretsmanager.Client, name, id string) (string, error) {
	out, err := c.GetSecretValue(ctx, &secretsmanager.GetSecretValueInput{SecretId: aws.String(id)})
	if err != nil {
		return "", fmt.Errorf("%s_SECRET %s: %w", name, id, err)
	}
	v := strings.TrimSpace(aws.ToString(out.SecretString))
	if strings.HasPrefix(v, "{") {
		var fields map[string]any
		if err := json.Unmarshal([]byte(v), &fields); err != nil {
			return "", fmt.Errorf("%s_SECRET %s: the secret is neither a URL nor a JSON object", name, id)
		}
		s, _ := fields[name].(string)
		v = strings.TrimSpace(s)
		if v == "" {
			return "", fmt.Errorf("%s_SECRET %s: the secret's JSON has no %s string", name, id, name)
		}
	}
	if v == "" {
		return "", fmt.Errorf("%s_SECRET %s: the secret has no string value", name, id)
	}
	return v, nil
}

func fromParameter(ctx context.Context, c *ssm.Client, name, param string) (string, error) {
	out, err := c.GetParameter(ctx, &ssm.GetParameterInput{Name: aws.String(param), WithDecryption: aws.Bool(true)})
	if err != nil {
		return "", fmt.Errorf("%s_PARAMETER %s: %w", name, param, err)
	}
	if out.Parameter == nil || strings.TrimSpace(aws.ToString(out.Parameter.Value)) == "" {
		return "", fmt.Errorf("%s_PARAMETER %s: the parameter is empty", name, param)
	}
	return strings.TrimSpace(aws.ToString(out.Parameter.Value)), nil
}
