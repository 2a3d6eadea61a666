package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"log"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// proc is a child process serving HTTP on a loopback port: the service or
// the floor.
type proc struct {
	cmd  *exec.Cmd
	base string
	done chan struct{}
}

// floorProc is the floor's process.
type floorProc = proc

// listeningLine matches the service's "listening" log line, as slog text
// or JSON.
var listeningLine = regexp.MustCompile(`msg=listening addr=(\S+)|"msg":"listening","addr":"([^"]+)"`)

// startServer starts `cryptointel serve` on 127.0.0.1:0 against the
// benchmark database, with the per-response statement count header on
// (STATEMENT_COUNT_HEADER) and, when asked, the pprof listener. Its log
// goes to tests/bench/.cache/server.log.
func startServer(ctx context.Context, o options, logName string) (*proc, error) {
	env := append(os.Environ(),
		// serve refuses to start without its signing secrets; the bench's
		// are fixed so that its cursors verify across restarts.
		"CURSOR_SECRET=bench-cursor-secret-0123456789abcdef",
		"EXPORT_URL_SECRET=bench-export-secret-0123456789abcdef",
		"DATABASE_URL="+o.databaseURL,
		"ADDR=127.0.0.1:0",
		"DB_MAX_CONNS="+strconv.Itoa(o.dbMaxConns),
		"STATEMENT_COUNT_HEADER=true",
		"EXPORT_DIR="+filepath.Join(cacheDir(o), "exports"),
	)
	if o.pprofAddr != "" {
		env = append(env, "PPROF_ADDR="+o.pprofAddr)
	}
	env = append(env, o.serverEnv...)
	cmd := exec.Command(o.bin, "serve")
	cmd.Env = env
	logPath := filepath.Join(cacheDir(o), logName)
	return startProc(ctx, cmd, logPath, func(line string) string {
		if m := listeningLine.FindStringSubmatch(line); m != nil {
			return m[1] + m[2]
		}
		return ""
	})
}

// startFloor starts this program as `bench floor` on 127.0.0.1:0.
func startFloor(ctx context.Context, o options) (*proc, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("error finding the harness binary: %w", err)
	}
	cmd := exec.Command(self, "floor", "-database-url", o.databaseURL, "-addr", "127.0.0.1:0",
		"-max-conns", strconv.Itoa(o.dbMaxConns))
	logPath := filepath.Join(cacheDir(o), "floor.log")
	return startProc(ctx, cmd, logPath, func(line string) string {
		if addr, ok := strings.CutPrefix(line, "floor listening on "); ok {
			return strings.TrimSpace(addr)
		}
		return ""
	})
}

// startProc starts cmd, copies its stdout and stderr to logPath and waits
// (up to a minute) for a line from which addrOf extracts the address; with
// addrOf nil it returns at once (the caller knows the address).
func startProc(ctx context.Context, cmd *exec.Cmd, logPath string, addrOf func(string) string) (*proc, error) {
	logFile, err := os.Create(logPath)
	if err != nil {
		return nil, fmt.Errorf("error creating %s: %w", logPath, err)
	}
	pr, pw := io.Pipe()
	cmd.Stdout = pw
	cmd.Stderr = pw
	if err := cmd.Start(); err != nil {
		logFile.Close()
		return nil, fmt.Errorf("error starting %s: %w", cmd.Path, err)
	}
	p := &proc{cmd: cmd, done: make(chan struct{})}
	addrc := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(pr)
		sc.Buffer(make([]byte, 64*1024), 1024*1024)
		found := addrOf == nil
		for sc.Scan() {
			line := sc.Text()
			fmt.Fprintln(logFile, line)
			if !found {
				if addr := addrOf(line); addr != "" {
					found = true
					addrc <- addr
				}
			}
		}
		io.Copy(io.Discard, pr) //nolint:errcheck
		logFile.Close()
	}()
	go func() {
		cmd.Wait() //nolint:errcheck
		pw.Close()
		close(p.done)
	}()
	if addrOf == nil {
		return p, nil
	}
	select {
	case addr := <-addrc:
		p.base = "http://" + addr
		return p, nil
	case <-p.done:
		return nil, fmt.Errorf("%s exited before listening; see %s", cmd.Path, logPath)
	case <-time.After(time.Minute):
		p.stop()
		return nil, fmt.Errorf("%s did not listen within a minute; see %s", cmd.Path, logPath)
	case <-ctx.Done():
		p.stop()
		return nil, ctx.Err()
	}
}

// pid is the process id.
func (p *proc) pid() int { return p.cmd.Process.Pid }

// peakRSS is the process's peak resident set size (VmHWM) in bytes, or 0
// when unknown.
func (p *proc) peakRSS() int64 { return procStatusKB(p.pid(), "VmHWM") * 1024 }

// stop asks the process to stop (SIGTERM) and kills it after 20 seconds.
func (p *proc) stop() {
	select {
	case <-p.done:
		return
	default:
	}
	p.cmd.Process.Signal(syscall.SIGTERM) //nolint:errcheck
	select {
	case <-p.done:
	case <-time.After(20 * time.Second):
		log.Printf("pid %d did not stop; killing it", p.pid())
		p.cmd.Process.Kill() //nolint:errcheck
		<-p.done
	}
}

// procCPU is the process's user plus system CPU time so far, from
// /proc/<pid>/stat (in clock ticks of 10 ms, the Linux USER_HZ); 0 when
// unknown.
func procCPU(pid int) time.Duration {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	// The command name (field 2) may hold spaces; fields after it follow
	// the closing parenthesis.
	s := string(b)
	if i := strings.LastIndexByte(s, ')'); i >= 0 {
		s = s[i+1:]
	}
	f := strings.Fields(s)
	if len(f) < 13 {
		return 0
	}
	utime, _ := strconv.ParseInt(f[11], 10, 64)
	stime, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(utime+stime) * 10 * time.Millisecond
}

// machineTimes is the first line of /proc/stat: the CPU time of every
// core since boot, split into busy (user, nice, system, irq, softirq;
// guests are inside user), steal (time the hypervisor ran something else
// while this machine wanted a core) and the total of every field.
type machineTimes struct {
	busy, steal, total time.Duration
}

// readMachineTimes reads /proc/stat's "cpu" line (USER_HZ ticks, 10 ms);
// zero when unknown.
func readMachineTimes() machineTimes {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return machineTimes{}
	}
	return parseMachineTimes(string(b))
}

func parseMachineTimes(stat string) machineTimes {
	line, _, _ := strings.Cut(stat, "\n")
	f := strings.Fields(line)
	if len(f) < 9 || f[0] != "cpu" {
		return machineTimes{}
	}
	v := make([]int64, 8)
	for i := range v {
		v[i], _ = strconv.ParseInt(f[i+1], 10, 64)
	}
	const tick = 10 * time.Millisecond
	// user nice system idle iowait irq softirq steal
	busy := v[0] + v[1] + v[2] + v[5] + v[6]
	return machineTimes{busy: time.Duration(busy) * tick, steal: time.Duration(v[7]) * tick,
		total: time.Duration(busy+v[3]+v[4]+v[7]) * tick}
}

// procStatusKB reads a "kB" field of /proc/<pid>/status; 0 when unknown.
func procStatusKB(pid int, field string) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, field+":"); ok {
			n, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return n
		}
	}
	return 0
}

// cacheDir is tests/bench/.cache under the repository (created).
func cacheDir(o options) string {
	dir := filepath.Join(o.repo, "tests", "bench", ".cache")
	os.MkdirAll(dir, 0o755) //nolint:errcheck
	return dir
}

// backendsCPU is the CPU time so far of each PostgreSQL backend connected
// to the database of databaseURL, by process id: processes whose title
// (the command line PostgreSQL sets) is "postgres: <cluster>: <user>
// <database> …". What they used over a measured period (cpuSince) is
// PostgreSQL's work for that period's requests (the harness's own
// statistics connection included).
func backendsCPU(databaseURL string) map[int]time.Duration {
	u, err := url.Parse(databaseURL)
	if err != nil {
		return nil
	}
	name := " " + strings.TrimPrefix(u.Path, "/") + " "
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	cpu := map[int]time.Duration{}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
		if err != nil || !bytes.HasPrefix(b, []byte("postgres: ")) {
			continue
		}
		title := strings.ReplaceAll(string(b), "\x00", " ")
		if strings.Contains(title, name) {
			cpu[pid] = procCPU(pid)
		}
	}
	return cpu
}

// cpuSince is the CPU time the backends of after used since before (both
// backendsCPU readings): a backend started meanwhile counts from zero, and
// one that exited meanwhile (an autovacuum worker, a pool's connection)
// is missed for the period, never subtracted: the difference of the sums
// went negative when a backend with a long past exited during a row.
func cpuSince(before, after map[int]time.Duration) time.Duration {
	var d time.Duration
	for pid, t := range after {
		if t0, ok := before[pid]; ok && t0 <= t {
			d += t - t0
		} else {
			d += t // started meanwhile (or its pid reused)
		}
	}
	return d
}
