package double

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
)

func requireRunner(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("run mode needs root (uid switching, namespaces)")
	}
	cmd := exec.Command("/bin/true")
	cmd.SysProcAttr = &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWPID | syscall.CLONE_NEWNS}
	if err := cmd.Run(); err != nil {
		t.Skipf("cannot create PID and mount namespaces here: %v", err)
	}
}

// End to end in run mode: the batch command runs as the owner's container
// uid/gid (user "slurm", 64030), in its scratch directory, with the
// session's environ; its output is the container log; its exit status
// decides the result; destroy kills it.
func TestRunModeEndToEnd(t *testing.T) {
	requireRunner(t)
	fx := newFixture(t, Options{Mode: ModeRun, KillGrace: 500 * time.Millisecond})
	uid, gid := 64030, 64030
	if _, err := fx.d.AddUser(User{Username: "slurm", Email: "slurm@example.com", Projects: []string{"default"},
		ContainerUID: &uid, ContainerMainGID: &gid}); err != nil {
		t.Fatal(err)
	}
	kp, _ := fx.d.AddKeyPair(KeyPair{UserEmail: "slurm@example.com"})
	body := batchBody("job-1")
	body["startupCommand"] = `echo "uid=$(id -u) gid=$(id -g) pwd=$PWD"; echo "env=$JOBVAR name=$BACKENDAI_SESSION_NAME role=$BACKENDAI_CLUSTER_ROLE batch=$_BACKEND_BATCH_MODE"; echo oops >&2; exit 3`
	body["config"].(map[string]any)["environ"] = map[string]any{"JOBVAR": "hello"}
	body["owner_access_key"] = kp.AccessKey
	r := fx.admin.post("/session", body)
	if r.status != 201 {
		t.Fatalf("%d %s", r.status, r.body)
	}
	id := r.json(t)["sessionId"].(string)
	si, err := fx.d.WaitStatus(id, "TERMINATED", 30*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if si.Result != "FAILURE" || *si.StatusInfo != "task-failed" {
		t.Fatalf("%+v", si)
	}
	l := fx.admin.get("/session/" + id + "/logs?owner_access_key=" + kp.AccessKey)
	logs := l.json(t)["result"].(map[string]any)["logs"].(string)
	for _, want := range []string{"uid=64030 gid=64030 pwd=", "env=hello name=job-1 role=main batch=1", "oops"} {
		if !strings.Contains(logs, want) {
			t.Fatalf("logs %q lack %q", logs, want)
		}
	}
	// a successful one as root's container identity (no container uid:
	// the agent's kernel-uid, this process's)
	ok := batchBody("job-2")
	ok["startupCommand"] = "id -u"
	id2 := fx.admin.post("/session", ok).json(t)["sessionId"].(string)
	si, err = fx.d.WaitStatus(id2, "TERMINATED", 30*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if si.Result != "SUCCESS" || *si.StatusInfo != "task-finished" {
		t.Fatalf("%+v", si)
	}
	logs = fx.admin.get("/session/" + id2 + "/logs").json(t)["result"].(map[string]any)["logs"].(string)
	if strings.TrimSpace(logs) != fmt.Sprint(os.Getuid()) {
		t.Fatalf("logs %q", logs)
	}
	// destroy kills the processes
	long := batchBody("job-3")
	long["startupCommand"] = "echo started; sleep 313"
	long["owner_access_key"] = kp.AccessKey
	id3 := fx.admin.post("/session", long).json(t)["sessionId"].(string)
	if _, err := fx.d.WaitStatus(id3, "RUNNING", 30*time.Second); err != nil {
		t.Fatal(err)
	}
	end := time.Now().Add(10 * time.Second)
	for {
		l := fx.admin.get("/session/" + id3 + "/logs?owner_access_key=" + kp.AccessKey)
		if strings.Contains(string(l.body), "started") {
			break
		}
		if time.Now().After(end) {
			t.Fatalf("not started: %s", l.body)
		}
		time.Sleep(20 * time.Millisecond)
	}
	d := fx.admin.delete("/session/" + id3 + "?owner_access_key=" + kp.AccessKey)
	if string(d.body) != `{"stats": {"status": "terminated"}}` {
		t.Fatalf("%s", d.body)
	}
	si, err = fx.d.WaitStatus(id3, "TERMINATED", 15*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if si.Result != "UNDEFINED" || *si.StatusInfo != "user-requested" {
		t.Fatalf("%+v", si)
	}
	// A length no other test uses: packages' tests run at once, and
	// the end-to-end ones run "sleep 300" jobs as the same user.
	out, _ := exec.Command("pgrep", "-u", "64030", "-f", "sleep 313").Output()
	if strings.TrimSpace(string(out)) != "" {
		t.Fatalf("still running: %s", out)
	}
	logs = fx.admin.get("/session/" + id3 + "/logs?owner_access_key=" + kp.AccessKey).json(t)["result"].(map[string]any)["logs"].(string)
	if strings.Contains(logs, "slurmstepd") {
		t.Fatalf("engine message in the container log: %q", logs)
	}
}

func TestRunModeTimeoutAndCluster(t *testing.T) {
	requireRunner(t)
	fx := newFixture(t, Options{Mode: ModeRun, KillGrace: 200 * time.Millisecond})
	fx.d.AddAgent(Agent{ID: "i-ag2", Slots: map[string]string{"cpu": "4", "mem": "16g"}})
	b := batchBody("slow")
	b["startupCommand"] = "echo $BACKENDAI_CLUSTER_HOSTS $BACKENDAI_CLUSTER_SIZE; sleep 60"
	b["batchTimeout"] = "1s"
	b["clusterMode"] = "multi-node"
	b["clusterSize"] = 2
	b["config"] = map[string]any{"resources": map[string]any{"cpu": 3, "mem": "2g"}} // one kernel per agent
	r := fx.alice.post("/session", b)
	if r.status != 201 {
		t.Fatalf("%d %s", r.status, r.body)
	}
	id := r.json(t)["sessionId"].(string)
	si, err := fx.d.WaitStatus(id, "TERMINATED", 30*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if si.Result != "FAILURE" || *si.StatusInfo != "task-timeout" || len(si.Agents) != 2 {
		t.Fatalf("%+v", si)
	}
	logs := fx.alice.get("/session/" + id + "/logs").json(t)["result"].(map[string]any)["logs"].(string)
	if !strings.Contains(logs, "main1,sub1 2") {
		t.Fatalf("logs %q", logs)
	}
}
