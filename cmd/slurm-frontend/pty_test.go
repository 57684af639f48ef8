package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/creack/pty"
)

// terminal is a client running on a pseudo-terminal, as under tmux.
type terminal struct {
	t    *testing.T
	pty  *os.File
	cmd  *exec.Cmd
	mu   sync.Mutex
	out  bytes.Buffer
	done chan struct{}
}

func startOnTerminal(t *testing.T, f *frontend, dir, rel string, rows, cols uint16, args ...string) *terminal {
	t.Helper()
	cmd := exec.Command("bash", append([]string{filepath.Join(repoRoot(t), "tools/run-client.sh"), rel, f.clientConf}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(hermeticEnv(), "RUN_AS=slurm", "TERM=xterm")
	p, err := pty.StartWithSize(cmd, &pty.Winsize{Rows: rows, Cols: cols})
	if err != nil {
		t.Fatal(err)
	}
	term := &terminal{t: t, pty: p, cmd: cmd, done: make(chan struct{})}
	go func() {
		defer close(term.done)
		buf := make([]byte, 4096)
		for {
			n, err := p.Read(buf)
			term.mu.Lock()
			term.out.Write(buf[:n])
			term.mu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			cmd.Process.Kill()
			cmd.Wait()
		}
		p.Close()
	})
	return term
}

func (term *terminal) send(s string) {
	if _, err := term.pty.Write([]byte(s)); err != nil {
		term.t.Fatal(err)
	}
}

// expect waits until the output after position from matches re and
// returns the match and where it ended.
func (term *terminal) expect(re *regexp.Regexp, from int, d time.Duration) ([]string, int) {
	term.t.Helper()
	deadline := time.Now().Add(d)
	for {
		term.mu.Lock()
		b := term.out.Bytes()
		var m []int
		if from <= len(b) {
			m = re.FindSubmatchIndex(b[from:])
		}
		var sub []string
		if m != nil {
			for i := 0; i < len(m); i += 2 {
				sub = append(sub, string(b[from+m[i]:from+m[i+1]]))
			}
		}
		all := string(b)
		term.mu.Unlock()
		if m != nil {
			return sub, from + m[1]
		}
		if time.Now().After(deadline) {
			term.t.Fatalf("no %q on the terminal after %v; it shows:\n%q", re, d, all[min(from, len(all)):])
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestSrunPty: srun --pty bash on a terminal, for each release: the shell
// runs in the job (SLURM_JOB_ID), sees the terminal's size and its
// changes, Ctrl-C interrupts its foreground command and not the shell,
// and its exit status is srun's.
func TestSrunPty(t *testing.T) {
	f := newFrontend(t, batchCluster)
	for _, rel := range releases {
		t.Run(rel, func(t *testing.T) {
			dir, _ := slurmDir(t, f, "pty-")
			term := startOnTerminal(t, f, dir, rel, 40, 120, "srun", "--pty", "bash", "--norc", "--noprofile")
			// Markers the shell computes, so that the echo of what is
			// typed does not match.
			term.send("echo JOB-$SLURM_JOB_ID-$((40+2))\r")
			m, at := term.expect(regexp.MustCompile(`JOB-(\d+)-42`), 0, 30*time.Second)
			job := atoi(m[1])
			term.send("echo SZ $(stty size) $((1+1))ZS\r")
			m, at = term.expect(regexp.MustCompile(`SZ (\d+ \d+) 2ZS`), at, 10*time.Second)
			if m[1] != "40 120" {
				t.Errorf("stty size in the job: %q, want 40 120", m[1])
			}
			// The window shrinks: srun hears SIGWINCH and tells the node.
			if err := pty.Setsize(term.pty, &pty.Winsize{Rows: 30, Cols: 100}); err != nil {
				t.Fatal(err)
			}
			var size string
			for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline) && size != "30 100"; {
				time.Sleep(200 * time.Millisecond)
				term.send("echo SZ $(stty size) $((1+1))ZS\r")
				m, at = term.expect(regexp.MustCompile(`SZ (\d+ \d+) 2ZS`), at, 10*time.Second)
				size = m[1]
			}
			if size != "30 100" {
				t.Errorf("stty size after the resize: %q, want 30 100", size)
			}
			// Ctrl-C stops sleep, the shell lives on.
			term.send("sleep 100; echo AFTER-$((2+3))\r")
			time.Sleep(500 * time.Millisecond)
			term.send("\x03")
			term.send("echo ALIVE-$((3+4))\r")
			_, at = term.expect(regexp.MustCompile(`ALIVE-7`), at, 10*time.Second)
			term.mu.Lock()
			after := strings.Contains(term.out.String(), "AFTER-5")
			term.mu.Unlock()
			if after {
				t.Errorf("Ctrl-C did not interrupt sleep 100 (its list went on)")
			}
			term.send("exit 3\r")
			select {
			case <-term.done:
			case <-time.After(30 * time.Second):
				t.Fatalf("srun did not end after exit 3")
			}
			err := term.cmd.Wait()
			code := -1
			if ee, ok := err.(*exec.ExitError); ok {
				code = ee.ExitCode()
			} else if err == nil {
				code = 0
			}
			if ws, ok := term.cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
				t.Fatalf("srun died of %v", ws.Signal())
			}
			if code != 3 {
				t.Errorf("srun --pty bash, exit 3: srun exited %d", code)
			}
			waitRows(t, f, dir, 30*time.Second, func(rows map[int]jobRow) bool { return rows[job].state == "FAILED" })
			_ = fmt.Sprint
		})
	}
}
