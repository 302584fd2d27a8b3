package main

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/agentmem/agentmem/cmd/agentmem-bench/internal/bench"
)

// pgSettings are the server settings a reader needs to judge the figures.
var pgSettings = []string{
	"shared_buffers", "work_mem", "maintenance_work_mem", "effective_cache_size", "synchronous_commit",
	"fsync", "wal_level", "max_wal_size", "checkpoint_timeout", "max_connections",
	"max_parallel_workers_per_gather", "random_page_cost", "jit",
}

// captureEnv records versions, the machine and the server's settings.
func captureEnv(ctx context.Context, db *benchDB, repo string) (bench.Env, error) {
	e := bench.Env{Go: runtime.Version(), PGSettings: map[string]string{}}
	c, err := pgx.Connect(ctx, db.url)
	if err != nil {
		return e, err
	}
	defer c.Close(ctx)
	if err := c.QueryRow(ctx, "show server_version").Scan(&e.PostgreSQL); err != nil {
		return e, err
	}
	if err := c.QueryRow(ctx, "select extversion from pg_extension where extname = 'vector'").Scan(&e.Pgvector); err != nil {
		return e, err
	}
	for _, name := range pgSettings {
		var v string
		if err := c.QueryRow(ctx, "select current_setting($1)", name).Scan(&v); err == nil {
			e.PGSettings[name] = v
		}
	}
	e.Commit, e.Dirty = gitCommit(repo)
	e.Machine = bench.Machine{Cores: runtime.NumCPU(), OS: runtime.GOOS, Arch: runtime.GOARCH}
	e.Machine.MemoryBytes = memTotal()
	e.Machine.CPUModel = cpuModel()
	e.Machine.LoadAvg1 = loadAvg()
	return e, nil
}

func gitCommit(repo string) (string, bool) {
	out, err := exec.Command("git", "-C", repo, "rev-parse", "HEAD").Output()
	if err != nil {
		return "unknown", false
	}
	status, _ := exec.Command("git", "-C", repo, "status", "--porcelain", "--untracked-files=no").Output()
	return strings.TrimSpace(string(out)), len(strings.TrimSpace(string(status))) > 0
}

func procField(path, key string) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if k, v, ok := strings.Cut(sc.Text(), ":"); ok && strings.TrimSpace(k) == key {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

func memTotal() int64 {
	v := strings.TrimSuffix(procField("/proc/meminfo", "MemTotal"), " kB")
	n, _ := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
	return n * 1024
}

func cpuModel() string {
	if m := procField("/proc/cpuinfo", "model name"); m != "" {
		return m
	}
	return runtime.GOARCH
}

func loadAvg() float64 {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return 0
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return 0
	}
	v, _ := strconv.ParseFloat(f[0], 64)
	return v
}
