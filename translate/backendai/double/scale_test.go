package double

import (
	"fmt"
	"os"
	"runtime"
	"syscall"
	"testing"
	"time"
)

func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func heapInUse() uint64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapInuse
}

// Scale mode: 2,000 agents and 100,000 batch sessions placed, run and
// destroyed, with the memory per session bounded.
var scaleSessions = 100000

func TestScale100k(t *testing.T) {
	if testing.Short() {
		t.Skip("short")
	}
	nAgents, nSessions := 2000, scaleSessions
	d, err := New(Options{Cycle: 200 * time.Millisecond, LongCycle: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	d.AddUser(User{Email: "bench@example.com", Projects: []string{"default"}})
	kp, _ := d.AddKeyPair(KeyPair{UserEmail: "bench@example.com", RateLimit: 1 << 30})
	var agents []Agent
	for i := 0; i < nAgents; i++ {
		agents = append(agents, Agent{ID: fmt.Sprintf("i-a%05d", i), Slots: map[string]string{"cpu": "64", "mem": "512g", "cuda.device": "8"}})
	}
	if err := d.AddAgents(agents); err != nil {
		t.Fatal(err)
	}
	base := heapInUse()
	cpu0, t0 := cpuTime(), time.Now()
	for i := 0; i < nSessions; i++ {
		b := batchBody(fmt.Sprintf("slurm-%d", i))
		if i%10 == 0 {
			b["config"] = map[string]any{"resources": map[string]any{"cpu": 2, "mem": "4g", "cuda.device": 1}}
		}
		if _, err := d.Enqueue(kp.AccessKey, b); err != nil {
			t.Fatal(err)
		}
	}
	enq, enqCPU := time.Since(t0), cpuTime()-cpu0
	t1, cpu1 := time.Now(), cpuTime()
	for {
		c := d.Counts()
		if c["RUNNING"] == nSessions {
			break
		}
		if time.Since(t1) > 5*time.Minute {
			t.Fatalf("not all running: %v", c)
		}
		time.Sleep(100 * time.Millisecond)
	}
	toRun, runCPU := time.Since(t1), cpuTime()-cpu1
	used := heapInUse() - base
	perSession := used / uint64(nSessions)
	// idle cost of 100k running sessions per scheduler cycle
	cpu2 := cpuTime()
	time.Sleep(2 * time.Second)
	idle := cpuTime() - cpu2
	// a client query over all of them
	c := newClient(t, d, kp.AccessKey, "")
	c.sk = kp.SecretKey
	t3 := time.Now()
	data := c.gqlData(`{ compute_session_list(limit: 100, offset: 0, status: "RUNNING") { total_count items { id status } } }`, nil)
	gqlTime := time.Since(t3)
	if fmt.Sprint(data["compute_session_list"].(map[string]any)["total_count"]) != fmt.Sprint(nSessions) {
		t.Fatalf("%v", data)
	}
	t4, cpu4 := time.Now(), cpuTime()
	for _, si := range d.Sessions() {
		d.Destroy(si.ID, false)
	}
	for d.Counts()["TERMINATED"] != nSessions {
		if time.Since(t4) > 5*time.Minute {
			t.Fatalf("not all terminated: %v", d.Counts())
		}
		time.Sleep(100 * time.Millisecond)
	}
	toEnd, endCPU := time.Since(t4), cpuTime()-cpu4
	t.Logf("agents %d, sessions %d", nAgents, nSessions)
	t.Logf("enqueue: %v wall, %v CPU (%.1f µs/session)", enq.Round(time.Millisecond), enqCPU.Round(time.Millisecond), float64(enqCPU.Microseconds())/float64(nSessions))
	t.Logf("all RUNNING after %v wall, %v CPU", toRun.Round(time.Millisecond), runCPU.Round(time.Millisecond))
	t.Logf("heap in use for 100k running sessions: %.1f MiB (%d bytes/session incl. kernel)", float64(used)/(1<<20), perSession)
	t.Logf("idle: %v CPU per 2 s with 100k running sessions (cycle 200 ms)", idle.Round(time.Millisecond))
	t.Logf("GQL compute_session_list over 100k: %v", gqlTime.Round(time.Millisecond))
	t.Logf("destroy all → TERMINATED: %v wall, %v CPU", toEnd.Round(time.Millisecond), endCPU.Round(time.Millisecond))
	if perSession > 8192 {
		t.Fatalf("%d bytes per session exceeds the 8 KiB bound", perSession)
	}
}

func init() {
	if v := os.Getenv("DOUBLE_SCALE_SESSIONS"); v != "" {
		fmt.Sscan(v, &scaleSessions)
	}
}
