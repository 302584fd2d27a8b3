// Package dbsecret reads DATABASE_URL, at start-up (a Lambda's cold start), from AWS Secrets
// Manager or SSM Parameter Store, so that the connection string, which holds the database
// password, stays out of the functions' configuration:
//
//   - DATABASE_URL_SECRET names a Secrets Manager secret (ARN or name) whose SecretString is the
//     URL, or a JSON object with a "DATABASE_URL" key;
//   - DATABASE_URL_PARAMETER names an SSM parameter (a SecureString, decrypted) whose value is
//     the URL.
//
// At most one of DATABASE_URL, DATABASE_URL_SECRET and DATABASE_URL_PARAMETER may be set.
// Credentials and region come from the AWS SDK's default chain (the Lambda role and AWS_REGION;
// a secret's ARN names its own region). The value is never logged.
package dbsecret

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/arn"
	awsconfig "github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"
	"github.com/aws/aws-sdk-go-v2/service/ssm"
)

// Timeout bounds the one call made at start-up.
const Timeout = 5 * time.Second

// Getenv returns getenv with DATABASE_URL read from the secret or parameter that
// DATABASE_URL_SECRET or DATABASE_URL_PARAMETER names; getenv itself when neither is set.
func Getenv(ctx context.Context, getenv func(string) string) (func(string) string, error) {
	secret := strings.TrimSpace(getenv("DATABASE_URL_SECRET"))
	param := strings.TrimSpace(getenv("DATABASE_URL_PARAMETER"))
	if secret == "" && param == "" {
		return getenv, nil
	}
	set := 0
	for _, v := range []string{getenv("DATABASE_URL"), secret, param} {
		if v != "" {
			set++
		}
	}
	if set > 1 {
		return nil, errors.New("set one of DATABASE_URL, DATABASE_URL_SECRET and DATABASE_URL_PARAMETER")
	}
	ctx, cancel := context.WithTimeout(ctx, Timeout)
	defer cancel()
	var opts []func(*awsconfig.LoadOptions) error
	if a, err := arn.Parse(secret); err == nil && getenv("AWS_REGION") == "" {
		opts = append(opts, awsconfig.WithRegion(a.Region))
	}
	cfg, err := awsconfig.LoadDefaultConfig(ctx, opts...)
	if err != nil {
		return nil, fmt.Errorf("AWS configuration: %w", err)
	}
	var url string
	if secret != "" {
		url, err = fromSecret(ctx, secretsmanager.NewFromConfig(cfg), secret)
	} else {
		url, err = fromParameter(ctx, ssm.NewFromConfig(cfg), param)
	}
	if err != nil {
		return nil, err
	}
	return func(k string) string {
		if k == "DATABASE_URL" {
			return url
		}
		return getenv(k)
	}, nil
}

func fromSecret(ctx context.Context, c *secretsmanager.Client, id string) (string, error) {
	out, err := c.GetSecretValue(ctx, &secretsmanager.GetSecretValueInput{SecretId: aws.String(id)})
	if err != nil {
		return "", fmt.Errorf("DATABASE_URL_SECRET %s: %w", id, err)
	}
	v := strings.TrimSpace(aws.ToString(out.SecretString))
	if strings.HasPrefix(v, "{") {
		var fields map[string]any
		if err := json.Unmarshal([]byte(v), &fields); err != nil {
			return "", fmt.Errorf("DATABASE_URL_SECRET %s: the secret is neither a URL nor a JSON object", id)
		}
		s, _ := fields["DATABASE_URL"].(string)
		v = strings.TrimSpace(s)
		if v == "" {
			return "", fmt.Errorf("DATABASE_URL_SECRET %s: the secret's JSON has no DATABASE_URL string", id)
		}
	}
	if v == "" {
		return "", fmt.Errorf("DATABASE_URL_SECRET %s: the secret has no string value", id)
	}
	return v, nil
}

func fromParameter(ctx context.Context, c *ssm.Client, name string) (string, error) {
	out, err := c.GetParameter(ctx, &ssm.GetParameterInput{Name: aws.String(name), WithDecryption: aws.Bool(true)})
	if err != nil {
		return "", fmt.Errorf("DATABASE_URL_PARAMETER %s: %w", name, err)
	}
	if out.Parameter == nil || strings.TrimSpace(aws.ToString(out.Parameter.Value)) == "" {
		return "", fmt.Errorf("DATABASE_URL_PARAMETER %s: the parameter is empty", name)
	}
	return strings.TrimSpace(aws.ToString(out.Parameter.Value)), nil
}
