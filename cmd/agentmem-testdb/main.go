// Command agentmem-testdb makes and drops databases for the tests that are not written in Go
// (the TypeScript client's and the demo page's, run by scripts/test-js.sh): each gets the
// migrations by a clone of shared/testdb's template, as every Go test does.
//
//	agentmem-testdb create NAME   make database NAME (replacing one of that name); print its URL
//	agentmem-testdb drop NAME     drop database NAME
//
// The server is AGENTMEM_TEST_DATABASE_URL (a superuser URL).
package main

import (
	"context"
	"fmt"
	"os"
	"regexp"
	"time"

	"github.com/agentmem/agentmem/shared/testdb"
)

// validName keeps the command to databases of its own making.
var validName = regexp.MustCompile(`^agentmem_jstest_[a-z0-9_]{1,40}$`)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintf(os.Stderr, "agentmem-testdb: %v\n", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	if len(args) != 2 || (args[0] != "create" && args[0] != "drop") {
		return fmt.Errorf("usage: agentmem-testdb create|drop NAME")
	}
	name := args[1]
	if !validName.MatchString(name) {
		return fmt.Errorf("database name %q must match %s", name, validName)
	}
	server := os.Getenv(testdb.EnvURL)
	if server == "" {
		return fmt.Errorf("%s is not set", testdb.EnvURL)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if args[0] == "drop" {
		return testdb.Open(server, name).Drop()
	}
	db, err := testdb.Create(ctx, server, name)
	if err != nil {
		return err
	}
	fmt.Println(db.URL)
	return nil
}
