package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"

	"github.com/jackc/pgx/v5"

	"github.com/agentmem/agentmem/shared/config"
	"github.com/agentmem/agentmem/shared/dbsecret"
)

// sweepJobName is the pg_cron job agentmem.schedule_sweep installs.
const sweepJobName = "agentmem-sweep-expired"

// scheduledJob is one pg_cron job as `agentmem schedule` prints it.
type scheduledJob struct {
	// Installed is always true: --show answers {"installed": false} when there is no job.
	Installed bool   `json:"installed"`
	JobID     int64  `json:"jobid"`
	Name      string `json:"jobname"`
	Schedule  string `json:"schedule"`
	Command   string `json:"command"`
	Database  string `json:"database"`
	Active    bool   `json:"active"`
	// LastRun is the latest run's status and end time, when there was one.
	LastRun *struct {
		Status  string `json:"status"`
		Message string `json:"message"`
		EndTime string `json:"end_time"`
	} `json:"last_run,omitempty"`
}

// schedule installs, shows or removes the pg_cron job that sweeps expired rows inside the
// database (agentmem.sweep_expired), for deployments scheduled by the database rather than by
// EventBridge. It enables pg_cron when the server offers it and it is not enabled yet.
func schedule(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("schedule", flag.ContinueOnError)
	cron := fs.String("cron", "*/15 * * * *", "when to sweep: cron syntax (UTC), or pg_cron's '<n> seconds'")
	batch := fs.Int("batch-size", 5000, "rows per batch")
	maxBatches := fs.Int("max-batches", 20, "most batches per kind of row in one run (the rest waits for the next)")
	remove := fs.Bool("remove", false, "remove the job instead")
	show := fs.Bool("show", false, "only print the job and its latest run")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() != 0 {
		return fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	if *batch < 1 || *maxBatches < 1 {
		return errors.New("--batch-size and --max-batches must be positive")
	}
	getenv, err := dbsecret.Getenv(ctx, os.Getenv)
	if err != nil {
		return err
	}
	cfg, err := config.Load(getenv)
	if err != nil {
		return err
	}
	conn, err := pgx.Connect(ctx, cfg.DatabaseURL)
	if err != nil {
		return fmt.Errorf("connect: %w", err)
	}
	defer conn.Close(context.Background())

	enc := json.NewEncoder(os.Stdout)
	enc.SetIndent("", "  ")
	switch {
	case *remove:
		var removed bool
		if err := conn.QueryRow(ctx, "select agentmem.unschedule_sweep()").Scan(&removed); err != nil {
			return err
		}
		return enc.Encode(map[string]bool{"removed": removed})
	case *show:
		job, err := loadSweepJob(ctx, conn)
		if err != nil {
			return err
		}
		if job == nil {
			// An answer that says so, rather than a bare null.
			fmt.Fprintln(os.Stderr, "schedule: no sweep job is installed; `agentmem schedule` installs one")
			return enc.Encode(map[string]bool{"installed": false})
		}
		return enc.Encode(job)
	}
	if err := enablePgCron(ctx, conn); err != nil {
		return err
	}
	if _, err := conn.Exec(ctx, "select agentmem.schedule_sweep($1, $2, $3)", *cron, *batch, *maxBatches); err != nil {
		return err
	}
	job, err := loadSweepJob(ctx, conn)
	if err != nil {
		return err
	}
	return enc.Encode(job)
}

// enablePgCron creates the pg_cron extension when the server offers it and this database lacks
// it. pg_cron's own errors say what else it needs (shared_preload_libraries, the database named
// by cron.database_name).
func enablePgCron(ctx context.Context, conn *pgx.Conn) error {
	var installed, available bool
	if err := conn.QueryRow(ctx, `select exists (select 1 from pg_extension where extname = 'pg_cron'),
		exists (select 1 from pg_available_extensions where name = 'pg_cron')`).Scan(&installed, &available); err != nil {
		return err
	}
	if installed {
		return nil
	}
	if !available {
		return errors.New("this PostgreSQL server has no pg_cron: on Supabase enable it under Database, Extensions; " +
			"elsewhere install it (Debian: postgresql-17-cron), or schedule the sweep-expired function instead (EventBridge)")
	}
	// pg_catalog is where Supabase's dashboard puts it.
	if _, err := conn.Exec(ctx, "create extension if not exists pg_cron with schema pg_catalog"); err != nil {
		return fmt.Errorf("enable pg_cron: %w", err)
	}
	return nil
}

// loadSweepJob reads the sweep's pg_cron job and its latest run; nil when there is none.
func loadSweepJob(ctx context.Context, conn *pgx.Conn) (*scheduledJob, error) {
	var hasCron bool
	if err := conn.QueryRow(ctx, "select to_regnamespace('cron') is not null").Scan(&hasCron); err != nil {
		return nil, err
	}
	if !hasCron {
		return nil, nil
	}
	j := scheduledJob{Installed: true}
	err := conn.QueryRow(ctx, `select jobid, jobname, schedule, command, database, active
		from cron.job where jobname = $1`, sweepJobName).Scan(&j.JobID, &j.Name, &j.Schedule, &j.Command, &j.Database, &j.Active)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var status, message, end string
	err = conn.QueryRow(ctx, `select status, coalesce(return_message, ''), coalesce(end_time::text, '')
		from cron.job_run_details where jobid = $1 order by runid desc limit 1`, j.JobID).Scan(&status, &message, &end)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
	case err != nil:
		return nil, err
	default:
		j.LastRun = &struct {
			Status  string `json:"status"`
			Message string `json:"message"`
			EndTime string `json:"end_time"`
		}{status, message, end}
	}
	return &j, nil
}
