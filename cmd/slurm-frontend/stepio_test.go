package main

import (
	"bytes"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// tcxHere: root on Linux 6.6 or later, where the eBPF step I/O meter must
// load (a silent fallback there would hide a regression).
func tcxHere() bool {
	var u unix.Utsname
	if os.Geteuid() != 0 || unix.Uname(&u) != nil {
		return false
	}
	var maj, min int
	fmt.Sscanf(unix.ByteSliceToString(u.Release[:]), "%d.%d", &maj, &min)
	return maj > 6 || maj == 6 && min >= 6
}

func scrape(t *testing.T, port int) string {
	t.Helper()
	resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/metrics", port))
	if err != nil {
		t.Fatalf("metrics: %v", err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("metrics: %d %v", resp.StatusCode, err)
	}
	return string(b)
}

// metric is the value of the series whose name and labels match re (a
// regexp of the whole series before the value), or -1.
func metric(text, re string) int64 {
	m := regexp.MustCompile(`(?m)^` + re + ` (\d+)$`).FindStringSubmatch(text)
	if m == nil {
		return -1
	}
	v, _ := strconv.ParseInt(m[len(m)-1], 10, 64)
	return v
}

// randomText is n bytes of printable lines.
func randomText(n int) []byte {
	const chars = "abcdefghijklmnopqrstuvwxyz0123456789"
	b := make([]byte, n)
	for i := range b {
		b[i] = chars[rand.IntN(len(chars))]
		if i%80 == 79 {
			b[i] = '\n'
		}
	}
	return b
}

var stepEnded = regexp.MustCompile(`step (\d+)\.0 ended: \d+ tasks, status 0x0, I/O (\d+) bytes to srun, (\d+) bytes from it \((\w+)(?:; the relay's: (\d+) and (\d+))?\)`)

// A step's task I/O is counted each way, per job and step, by the kernel
// (eBPF) where it can and by the relay otherwise, and an operator sees it
// in the metrics while the step runs and in the log when it ends.
func TestStepIOAccounting(t *testing.T) {
	mport := freePort(t)
	f := newFrontend(t, batchCluster, "--metrics-listen", fmt.Sprintf("127.0.0.1:%d", mport))
	counter := "ebpf"
	if !strings.Contains(f.Logs(), "step I/O accounting: eBPF (tcx)") {
		if tcxHere() {
			t.Fatalf("eBPF step I/O accounting did not start:\n%s", f.Logs())
		}
		counter = "userspace"
	}
	for _, rel := range releases {
		t.Run(rel, func(t *testing.T) {
			dir, ru := slurmDir(t, f, "stepio-")
			big, in := randomText(1<<20+4321), randomText(200_001)
			for name, b := range map[string][]byte{"big": big, "in": in} {
				p := filepath.Join(dir, name)
				if err := os.WriteFile(p, b, 0o644); err != nil {
					t.Fatal(err)
				}
				os.Chown(p, 64030, 64030)
			}
			before := metric(scrape(t, mport), `slurm_frontend_step_io_bytes_total\{direction="to_srun",counter="`+counter+`"\}`)
			type result struct {
				out, errs string
				code      int
			}
			done := make(chan result, 1)
			go func() {
				o, e, c := ru.run(rel, "srun", "-i", "in", "sh", "-c", "cat > got; cat big; sleep 3")
				done <- result{o, e, c}
			}()
			// While it runs: the step's own series, each way.
			var live string
			for end := time.Now().Add(20 * time.Second); time.Now().Before(end); time.Sleep(100 * time.Millisecond) {
				text := scrape(t, mport)
				series := `slurm_frontend_running_step_io_bytes\{job_id="\d+",step_id="0",node="n\d+",counter="` + counter + `",direction="%s"\}`
				if metric(text, fmt.Sprintf(series, "to_srun")) >= int64(len(big)) && metric(text, fmt.Sprintf(series, "from_srun")) >= int64(len(in)) {
					live = text
					break
				}
			}
			r := <-done
			if r.code != 0 || r.out != string(big) {
				t.Fatalf("srun -i in sh -c 'cat > got; cat big': exit %d, %d bytes of stdout (want %d), stderr %q", r.code, len(r.out), len(big), r.errs)
			}
			if got, _ := os.ReadFile(filepath.Join(dir, "got")); !bytes.Equal(got, in) {
				t.Errorf("the task's stdin: %d bytes, want the %d of srun -i", len(got), len(in))
			}
			if live == "" {
				t.Fatalf("no running step's I/O series in the metrics with its output and input:\n%s", scrape(t, mport))
			}
			var m []string
			for end := time.Now().Add(10 * time.Second); m == nil && time.Now().Before(end); time.Sleep(50 * time.Millisecond) {
				ms := stepEnded.FindAllStringSubmatch(f.Logs(), -1)
				if len(ms) > 0 {
					m = ms[len(ms)-1]
				}
			}
			if m == nil {
				t.Fatalf("no step-end line with its I/O in the log:\n%s", f.Logs())
			}
			out, _ := strconv.Atoi(m[2])
			inb, _ := strconv.Atoi(m[3])
			if m[4] != counter {
				t.Errorf("the step's I/O was counted by %s, want %s: %s", m[4], counter, m[0])
			}
			// The stream: the data in frames of a 10-byte header and at
			// most 1 KiB each, the init message, the EOFs.
			if out < len(big) || out > len(big)+len(big)/100+4096 || inb < len(in) || inb > len(in)+len(in)/100+4096 {
				t.Errorf("step I/O %d bytes out, %d in; want the %d of output and the %d of input, with framing: %s", out, inb, len(big), len(in), m[0])
			}
			if counter == "ebpf" {
				// The kernel and the relay saw the same stream.
				ro, _ := strconv.Atoi(m[5])
				ri, _ := strconv.Atoi(m[6])
				if ro != out || ri > inb || ri < len(in) {
					t.Errorf("the kernel counted %d out, %d in; the relay %d out, %d in: %s", out, inb, ro, ri, m[0])
				}
			}
			after := metric(scrape(t, mport), `slurm_frontend_step_io_bytes_total\{direction="to_srun",counter="`+counter+`"\}`)
			if after-before < int64(out) {
				t.Errorf("step_io_bytes_total to srun went from %d to %d; the step alone sent %d", before, after, out)
			}
		})
	}
	t.Run("userspace", func(t *testing.T) {
		mport := freePort(t)
		g := newFrontend(t, batchCluster+"FrontendIOAccounting=userspace\n", "--metrics-listen", fmt.Sprintf("127.0.0.1:%d", mport))
		dir, ru := slurmDir(t, g, "stepio-u-")
		big := randomText(300_000)
		p := filepath.Join(dir, "big")
		os.WriteFile(p, big, 0o644)
		os.Chown(p, 64030, 64030)
		if o := ru.mustRun("24.11", "srun", "cat", "big"); o != string(big) {
			t.Fatalf("srun cat big: %d bytes, want %d", len(o), len(big))
		}
		time.Sleep(200 * time.Millisecond)
		m := stepEnded.FindStringSubmatch(g.Logs())
		if m == nil || m[4] != "userspace" {
			t.Fatalf("want the step's I/O counted in userspace; log:\n%s", g.Logs())
		}
		text := scrape(t, mport)
		if v := metric(text, `slurm_frontend_step_io_bytes_total\{direction="to_srun",counter="userspace"\}`); v < int64(len(big)) {
			t.Errorf("userspace step_io_bytes_total to srun %d, want at least %d:\n%s", v, len(big), text)
		}
		if v := metric(text, `slurm_frontend_step_io_bytes_total\{direction="to_srun",counter="ebpf"\}`); v != 0 {
			t.Errorf("ebpf step_io_bytes_total %d with FrontendIOAccounting=userspace", v)
		}
	})
}
