package main

import (
	"context"
	"io"
	"os"
	"time"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"

	"github.com/agentmem/agentmem/shared/service"
)

// console is where a command writes: results on out, progress and messages on err. tty says
// that err is a terminal, the only place a progress bar is drawn (in a log or a pipe, its
// redrawn lines would be noise).
type console struct {
	out, err io.Writer
	tty      bool
}

// stdConsole is the process's standard output and standard error.
func stdConsole() console {
	return console{out: os.Stdout, err: os.Stderr, tty: term.IsTerminal(int(os.Stderr.Fd()))}
}

// progressBar is the bar of the commands that take a while (ingest, backfill), on c.err: the
// share done, the count done of total, the rate and the time left. unit names what is counted;
// "" counts bytes.
func (c console) progressBar(total int64, unit string) *progressbar.ProgressBar {
	opts := []progressbar.Option{
		progressbar.OptionSetWriter(c.err),
		progressbar.OptionSetVisibility(c.tty),
		progressbar.OptionSetWidth(30),
		progressbar.OptionThrottle(100 * time.Millisecond),
		progressbar.OptionShowDescriptionAtLineEnd(),
		progressbar.OptionSetPredictTime(true),
	}
	if unit == "" {
		opts = append(opts, progressbar.OptionShowBytes(true))
	} else {
		opts = append(opts, progressbar.OptionShowCount(), progressbar.OptionShowIts(), progressbar.OptionSetItsString(unit))
	}
	return progressbar.NewOptions64(total, opts...)
}

// startQuietly starts the service for a command that draws a progress bar: unless LOG_LEVEL
// says otherwise, only warnings and errors are logged, as log lines would break the bar
// (failures are reported anyway).
func startQuietly(ctx context.Context) (*service.Service, error) {
	if os.Getenv("LOG_LEVEL") == "" {
		os.Setenv("LOG_LEVEL", "warn")
	}
	return service.Start(ctx)
}
