package main

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/agentmem/agentmem/cmd/agentmem-bench/internal/bench"
)

// clockTicks is the unit of /proc/<pid>/stat's CPU times (USER_HZ, 100 on Linux).
const clockTicks = 100

// serverCPU reads the CPU time of a PostgreSQL server on this machine: that of the backends
// connected to one database (by their process titles, "postgres: user database host ..."), so
// that other work on a shared server is not counted. The server's own processes (the WAL
// writer, the checkpointer, autovacuum) are left out for the same reason. A backend that exits
// takes its time with it; the workloads' pools keep theirs open.
type serverCPU struct {
	postmaster int
	database   string
}

// newServerCPU finds the postmaster of the server conn is connected to, through the backend's
// parent; nil when the server is not on this machine (no such process, or not PostgreSQL).
func newServerCPU(ctx context.Context, conn *pgx.Conn) *serverCPU {
	var backend int
	if err := conn.QueryRow(ctx, "select pg_backend_pid()").Scan(&backend); err != nil {
		return nil
	}
	pm := parentPID(backend)
	if pm <= 1 || !isPostgres(backend) || !isPostgres(pm) {
		return nil
	}
	return &serverCPU{postmaster: pm}
}

// For is s reading the backends of database.
func (s *serverCPU) For(database string) *serverCPU {
	if s == nil {
		return nil
	}
	return &serverCPU{postmaster: s.postmaster, database: database}
}

// Total is the CPU time so far of the backends of s's database.
func (s *serverCPU) Total() time.Duration {
	if s == nil {
		return 0
	}
	var total time.Duration
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == s.postmaster || parentPID(pid) != s.postmaster {
			continue
		}
		title, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil {
			continue
		}
		f := strings.Fields(strings.ReplaceAll(string(title), "\x00", " "))
		if len(f) >= 3 && f[0] == "postgres:" && f[2] == s.database {
			total += procCPU(pid)
		}
	}
	return total
}

func isPostgres(pid int) bool {
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "comm"))
	return err == nil && strings.HasPrefix(strings.TrimSpace(string(b)), "postgres")
}

// statFields are the fields of /proc/<pid>/stat after the command name (which may hold spaces):
// field 3 (state) is statFields[0].
func statFields(pid int) []string {
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return nil
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return nil
	}
	return strings.Fields(s[i+1:])
}

func parentPID(pid int) int {
	f := statFields(pid)
	if len(f) < 2 {
		return 0
	}
	ppid, _ := strconv.Atoi(f[1])
	return ppid
}

// procCPU is a process' user and system CPU time (fields 14 and 15 of its stat), 0 when it is
// gone.
func procCPU(pid int) time.Duration {
	f := statFields(pid)
	if len(f) < 13 {
		return 0
	}
	u, _ := strconv.ParseInt(f[11], 10, 64)
	s, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(u+s) * time.Second / clockTicks
}

// selfCPU is this process' user and system CPU time.
func selfCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// cpuSpan measures the CPU a phase costs: this process' and the server's.
type cpuSpan struct {
	server        *serverCPU
	self, pgStart time.Duration
}

func startCPU(server *serverCPU) cpuSpan {
	return cpuSpan{server: server, self: selfCPU(), pgStart: server.Total()}
}

// per1000 is the cost of the span per 1,000 of ops; nil without a local server to read.
func (c cpuSpan) per1000(ops int) *bench.CPUCost {
	if c.server == nil || ops <= 0 {
		return nil
	}
	return bench.NewCPUCost(ops, selfCPU()-c.self, c.server.Total()-c.pgStart)
}

// cpuSample is one reading of a peer's process and the server.
type cpuSample struct {
	at              time.Time
	process, server time.Duration
}

// cpuSampler reads a process' and the server's CPU every interval until stopped, and keeps the
// time each marked line of the process' output was written, so that the CPU of a phase between
// two lines can be read back.
type cpuSampler struct {
	pid     int
	server  *serverCPU
	mu      sync.Mutex
	samples []cpuSample
	lines   map[string]time.Time
	partial []byte
	marks   []string
	stop    chan struct{}
	done    chan struct{}
}

func newCPUSampler(server *serverCPU, marks ...string) *cpuSampler {
	return &cpuSampler{server: server, marks: marks, lines: map[string]time.Time{}}
}

// Start samples process pid every interval.
func (s *cpuSampler) Start(pid int, interval time.Duration) {
	s.pid = pid
	s.stop, s.done = make(chan struct{}), make(chan struct{})
	go func() {
		defer close(s.done)
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			s.sample()
			select {
			case <-s.stop:
				return
			case <-t.C:
			}
		}
	}()
}

func (s *cpuSampler) sample() {
	c := cpuSample{at: time.Now(), process: procCPU(s.pid), server: s.server.Total()}
	s.mu.Lock()
	s.samples = append(s.samples, c)
	s.mu.Unlock()
}

// Stop ends the sampling.
func (s *cpuSampler) Stop() {
	if s.stop != nil {
		close(s.stop)
		<-s.done
	}
}

// Write implements io.Writer for the process' output: the first line that holds a mark gives
// the mark's time.
func (s *cpuSampler) Write(p []byte) (int, error) {
	now := time.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.partial = append(s.partial, p...)
	for {
		i := strings.IndexByte(string(s.partial), '\n')
		if i < 0 {
			break
		}
		line := string(s.partial[:i])
		s.partial = s.partial[i+1:]
		for _, m := range s.marks {
			if _, seen := s.lines[m]; !seen && strings.Contains(line, m) {
				s.lines[m] = now
			}
		}
	}
	return len(p), nil
}

// Between is the cost per 1,000 of ops between the lines of two marks; nil when either line
// was not written, or there is no local server, or no sample after the second line.
func (s *cpuSampler) Between(from, to string, ops int) *bench.CPUCost {
	s.mu.Lock()
	defer s.mu.Unlock()
	t0, ok0 := s.lines[from]
	t1, ok1 := s.lines[to]
	if !ok0 || !ok1 || s.server == nil || ops <= 0 {
		return nil
	}
	a, okA := s.at(t0)
	b, okB := s.at(t1)
	if !okA || !okB {
		return nil
	}
	return bench.NewCPUCost(ops, b.process-a.process, b.server-a.server)
}

// at is the reading at t, interpolated between the samples around it.
func (s *cpuSampler) at(t time.Time) (cpuSample, bool) {
	for i := 1; i < len(s.samples); i++ {
		a, b := s.samples[i-1], s.samples[i]
		if b.at.Before(t) {
			continue
		}
		if a.at.After(t) {
			return a, true
		}
		f := float64(t.Sub(a.at)) / float64(max(b.at.Sub(a.at), 1))
		lerp := func(x, y time.Duration) time.Duration { return x + time.Duration(f*float64(y-x)) }
		return cpuSample{at: t, process: lerp(a.process, b.process), server: lerp(a.server, b.server)}, true
	}
	return cpuSample{}, false
}
