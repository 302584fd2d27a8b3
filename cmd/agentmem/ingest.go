package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"github.com/agentmem/agentmem/shared/service"
)

// textExtensions are the files `agentmem ingest` takes from a folder: text and Markdown.
var textExtensions = map[string]bool{
	".md": true, ".markdown": true, ".mdx": true, ".txt": true, ".text": true, ".rst": true, ".adoc": true,
}

// ingestFile is one file to ingest and the source name it gets.
type ingestFile struct {
	path   string
	source string
	size   int64
}

// collectFiles lists what `agentmem ingest PATH` ingests: PATH itself when it is a file (named
// by its base name), else every text or Markdown file under it, recursively, named by its path
// relative to PATH with forward slashes. Hidden files and folders (a name starting with a dot)
// and node_modules are skipped, and so are symbolic links. prefix is put before every name
// as it is (add a slash to it for a folder-like prefix). Files come in lexical order.
func collectFiles(root, prefix string) ([]ingestFile, error) {
	info, err := os.Stat(root)
	if err != nil {
		return nil, err
	}
	if !info.IsDir() {
		return []ingestFile{{path: root, source: prefix + filepath.Base(root), size: info.Size()}}, nil
	}
	var out []ingestFile
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if path != root && (strings.HasPrefix(name, ".") || (d.IsDir() && name == "node_modules")) {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if !d.Type().IsRegular() || !textExtensions[strings.ToLower(filepath.Ext(name))] {
			return nil
		}
		rel, err := filepath.Rel(root, path)
		if err != nil {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		out = append(out, ingestFile{path: path, source: prefix + filepath.ToSlash(rel), size: fi.Size()})
		return nil
	})
	return out, err
}

// ingestSummary is what `agentmem ingest` prints when it is done.
type ingestSummary struct {
	TenantID string        `json:"tenant_id"`
	Files    int           `json:"files"`
	Chunks   int           `json:"chunks"`
	Failed   []ingestError `json:"failed"`
}

type ingestError struct {
	Source string `json:"source"`
	Error  string `json:"error"`
}

// ingest stores text and Markdown files in a tenant's knowledge base, as the knowledge
// function's ingest does, with a progress bar on standard error. Each file replaces the earlier
// ingest of its source, so running it again after an interruption, or after the files changed,
// is safe. A file that fails is reported and the others go on; the exit status is then 1.
func ingest(ctx context.Context, args []string) error {
	flags := flag.NewFlagSet("ingest", flag.ContinueOnError)
	tenant := flags.String("tenant", "", "tenant_id of the knowledge base (default: the tenant-less one)")
	prefix := flags.String("source-prefix", "", "put before every source name, as is (e.g. handbook/)")
	dry := flags.Bool("dry-run", false, "list the files and their source names, ingest nothing")
	flags.Usage = func() {
		fmt.Fprint(flags.Output(), "usage: agentmem ingest [--tenant T] [--source-prefix P] [--dry-run] PATH\n\n"+
			"Ingests a file, or every text and Markdown file of a folder (recursively), into the\n"+
			"knowledge base; the source of each is its path relative to PATH, after the prefix.\n\n")
		flags.PrintDefaults()
	}
	if err := flags.Parse(args); err != nil {
		return err
	}
	if flags.NArg() != 1 {
		flags.Usage()
		return errors.New("give one PATH")
	}
	files, err := collectFiles(flags.Arg(0), *prefix)
	if err != nil {
		return err
	}
	if len(files) == 0 {
		return fmt.Errorf("no text or Markdown files in %s", flags.Arg(0))
	}
	if *dry {
		for _, f := range files {
			fmt.Printf("%s\t%s\t%d bytes\n", f.source, f.path, f.size)
		}
		return nil
	}
	svc, err := startQuietly(ctx)
	if err != nil {
		return err
	}
	defer svc.Close()

	var total int64
	for _, f := range files {
		total += f.size
	}
	con := stdConsole()
	bar := con.progressBar(total, "")
	quiet := !con.tty
	sum := ingestSummary{TenantID: *tenant, Failed: []ingestError{}}
	for i, f := range files {
		if ctx.Err() != nil {
			break
		}
		bar.Describe(fmt.Sprintf("%d/%d %s", i+1, len(files), f.source))
		chunks, err := ingestOne(ctx, svc, *tenant, f)
		bar.Add64(f.size) //nolint:errcheck
		if err != nil {
			sum.Failed = append(sum.Failed, ingestError{Source: f.source, Error: err.Error()})
			bar.Clear() //nolint:errcheck
			fmt.Fprintf(os.Stderr, "agentmem ingest: %s: %v\n", f.source, err)
			continue
		}
		sum.Files++
		sum.Chunks += chunks
		if quiet {
			fmt.Fprintf(os.Stderr, "agentmem ingest: %s: %d chunks\n", f.source, chunks)
		}
	}
	bar.Finish() //nolint:errcheck
	fmt.Fprintln(os.Stderr)
	if err := json.NewEncoder(os.Stdout).Encode(sum); err != nil {
		return err
	}
	if ctx.Err() != nil {
		return fmt.Errorf("interrupted after %d of %d files; run it again to finish (re-ingesting replaces)", sum.Files+len(sum.Failed), len(files))
	}
	if len(sum.Failed) > 0 {
		return fmt.Errorf("%d of %d files failed", len(sum.Failed), len(files))
	}
	return nil
}

func ingestOne(ctx context.Context, svc *service.Service, tenant string, f ingestFile) (int, error) {
	b, err := os.ReadFile(f.path)
	if err != nil {
		return 0, err
	}
	if !utf8.Valid(b) {
		return 0, errors.New("not UTF-8 text")
	}
	res, err := svc.App.IngestKnowledge(ctx, tenant, f.source, string(b), nil)
	if err != nil {
		return 0, problemText(err)
	}
	return res.Chunks, nil
}
