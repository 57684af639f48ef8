package main

import (
	"bufio"
	"crypto/rand"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lablup/slurm-frontend/codec"
	"github.com/lablup/slurm-frontend/codec/capture"
	"github.com/lablup/slurm-frontend/codec/munge"
	"github.com/lablup/slurm-frontend/edge"
)

// rawClient sends Slurm messages with a MUNGE credential of any uid (the
// test has the site key): what a hostile user's own program can send.
type rawClient struct {
	t   *testing.T
	key *munge.Key
}

func (c rawClient) call(addr string, v, msgType uint16, body []byte, uid, gid uint32) (uint16, []byte) {
	c.t.Helper()
	cr := munge.Cred{EncodeTime: uint32(time.Now().Unix()), TTL: 300, UID: uid, GID: gid,
		AuthUID: munge.UIDAny, AuthGID: munge.GIDAny, Addr: [4]byte{127, 0, 0, 1},
		Payload: munge.BodyHash(nil, munge.HashK12, msgType, body)}
	cred, err := c.key.Encode(nil, &cr, rand.Reader)
	if err != nil {
		c.t.Fatal(err)
	}
	conn, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		c.t.Fatal(err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(30 * time.Second))
	if _, err := conn.Write(codec.AppendFrame(nil, v, msgType, cred, body)); err != nil {
		c.t.Fatal(err)
	}
	raw, err := edge.ReadFrame(bufio.NewReader(conn))
	if err != nil {
		c.t.Fatalf("%s to %s: no answer: %v", codec.MsgTypeName(msgType), addr, err)
	}
	var f codec.Frame
	if err := codec.DecodeFrame(raw, &f); err != nil {
		c.t.Fatal(err)
	}
	return f.MsgType, append([]byte(nil), f.Body...)
}

// goldenLaunch is a real 24.11 srun's REQUEST_LAUNCH_TASKS, decoded: the
// template of the launches below.
func goldenLaunch(t *testing.T) codec.LaunchTasksRequest {
	b, err := os.ReadFile(filepath.Join(repoRoot(t), "codec/testdata/slurm-24.11-steps/srun-n2-hostname-24.11.pcap"))
	if err != nil {
		t.Fatal(err)
	}
	conns, err := capture.Parse(b)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range conns {
		for _, raw := range c.Requests {
			var f codec.Frame
			if codec.DecodeFrame(raw, &f) == nil && f.MsgType == codec.REQUEST_LAUNCH_TASKS {
				var m codec.LaunchTasksRequest
				r := codec.NewReader(f.Body)
				if err := m.Decode(&r, f.Version); err != nil {
					t.Fatal(err)
				}
				return m
			}
		}
	}
	t.Fatal("no launch in the capture")
	return codec.LaunchTasksRequest{}
}

// TestLaunchForgedOrReplayed: the node stand-ins run a step's tasks only
// for a launch that carries a job credential this server signed, for
// that step, used once, by the job's user. A forged credential (its uid
// changed to root), a replayed one, and one sent by another user are
// refused with slurmd's errors and logged; the legitimate launch runs.
func TestLaunchForgedOrReplayed(t *testing.T) {
	f := newFrontend(t, batchCluster)
	key, err := munge.LoadKey("/etc/munge/munge.key")
	if err != nil {
		t.Fatal(err)
	}
	c := rawClient{t: t, key: key}
	dir, ru := slurmDir(t, f, "forge-")
	sub := ru.mustRun("24.11", "sbatch", "-w", "n1", "-o", "/dev/null", "--wrap", "sleep 120")
	job := atoi(submittedRe.FindStringSubmatch(sub)[1])
	waitRows(t, f, dir, 30*time.Second, func(rows map[int]jobRow) bool { return rows[job].state == "RUNNING" })
	ctl := fmt.Sprintf("127.0.0.1:%d", f.port)
	node := fmt.Sprintf("127.0.0.1:%d", f.port+1) // n1's stand-in (NodeAddr 127.0.0.1, SlurmdPort)
	v := codec.V24_11

	// srun's listeners: the node connects back to them.
	accepted := make(chan string, 16)
	listen := func(slurmMsgs bool) uint16 {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { l.Close() })
		go func() {
			for {
				conn, err := l.Accept()
				if err != nil {
					return
				}
				go func() {
					defer conn.Close()
					r := bufio.NewReader(conn)
					if !slurmMsgs {
						accepted <- "io" // the I/O stream, read to its end
						io.Copy(io.Discard, r)
						return
					}
					raw, err := edge.ReadFrame(r)
					var fr codec.Frame
					if err != nil || codec.DecodeFrame(raw, &fr) != nil {
						accepted <- "garbage"
						return
					}
					accepted <- codec.MsgTypeName(fr.MsgType)
					conn.Write(codec.AppendRC(nil, v, nil, 0))
				}()
			}
		}()
		return uint16(l.Addr().(*net.TCPAddr).Port)
	}
	respPort, ioPort := listen(true), listen(false)

	newStep := func() ([]byte, codec.JobCred, []byte) {
		t.Helper()
		req := codec.JobStepCreateRequest{StepID: codec.JobStepID{JobID: uint32(job), StepID: codec.NoVal, StepHetComp: codec.NoVal},
			ArrayTaskID: codec.NoVal, UserID: codec.SlurmAuthNobody, MinNodes: 1, MaxNodes: 1, CPUCount: 1, NumTasks: 1,
			CPUFreqMin: codec.NoVal, CPUFreqMax: codec.NoVal, CPUFreqGov: codec.NoVal, TimeLimit: codec.NoVal,
			NtasksPerCore: codec.Infinite16, TaskDist: 1, PlaneSize: codec.NoVal16, ResvPortCnt: codec.NoVal16,
			Host: "test", Name: "forge", StepHetCompCnt: codec.NoVal}
		var w codec.Writer
		req.Encode(&w, v)
		mt, body := c.call(ctl, v, codec.REQUEST_JOB_STEP_CREATE, w.B, 64030, 64030)
		if mt != codec.RESPONSE_JOB_STEP_CREATE {
			t.Fatalf("step create answered %s %x\n%s", codec.MsgTypeName(mt), body, lastLines(f.Logs(), 20))
		}
		var resp codec.JobStepCreateResponse
		r := codec.NewReader(body)
		if err := resp.Decode(&r, v); err != nil {
			t.Fatal(err)
		}
		cr := codec.NewReader(resp.Cred)
		cred, credBody, err := codec.DecodeJobCred(&cr, v)
		if err != nil {
			t.Fatal(err)
		}
		return resp.Cred, cred, append([]byte(nil), credBody...)
	}
	launch := func(raw []byte, cred codec.JobCred, body []byte, uid uint32) uint32 {
		t.Helper()
		m := goldenLaunch(t)
		m.StepID = cred.StepID
		m.NTasks, m.NNodes = 1, 1
		m.TasksToLaunch, m.GlobalTaskIDs = []uint16{1}, [][]uint32{{0}}
		m.RespPorts, m.IOPorts = []uint16{respPort}, []uint16{ioPort}
		m.Argv = []string{"sh", "-c", "echo launched"}
		m.Env = []string{"PATH=/usr/bin:/bin"}
		m.Cwd = "/tmp"
		m.CompleteNodelist = "n1"
		m.Flags = 0
		m.Cred, m.CredRaw, m.CredBody, m.CredVersion = cred, raw, body, v
		var w codec.Writer
		m.Encode(&w, v)
		mt, rb := c.call(node, v, codec.REQUEST_LAUNCH_TASKS, w.B, uid, uid)
		if mt != codec.RESPONSE_SLURM_RC || len(rb) < 4 {
			t.Fatalf("launch answered %s", codec.MsgTypeName(mt))
		}
		return binary.BigEndian.Uint32(rb)
	}

	// The legitimate launch runs: the node answers, connects its I/O and
	// reports the launch and the task's exit.
	raw, cred, body := newStep()
	if rc := launch(raw, cred, body, 64030); rc != 0 {
		t.Fatalf("the job owner's launch with the server's credential: rc %d\n%s", rc, lastLines(f.Logs(), 20))
	}
	got := map[string]int{}
	for deadline := time.After(20 * time.Second); got["MESSAGE_TASK_EXIT"] == 0; {
		select {
		case s := <-accepted:
			got[s]++
		case <-deadline:
			t.Fatalf("the node's callbacks: %v", got)
		}
	}
	if got["io"] != 1 || got["RESPONSE_LAUNCH_TASKS"] != 1 {
		t.Errorf("the node's callbacks: %v, want one I/O stream, one launch response, one task exit", got)
	}

	// Replayed: the same credential again.
	if rc := launch(raw, cred, body, 64030); rc != 4004 {
		t.Errorf("replayed launch: rc %d, want ESLURMD_INVALID_JOB_CREDENTIAL (4004)", rc)
	}
	// Forged: the credential's uid made root (its signature kept).
	raw2, cred2, _ := newStep()
	forged := cred2
	forged.UID, forged.GID = 0, 0
	var fw codec.Writer
	forged.EncodeBody(&fw, v)
	if rc := launch(nil, forged, fw.B, 64030); rc != 4004 {
		t.Errorf("forged credential: rc %d, want 4004", rc)
	}
	// Another user with the job owner's (valid) credential.
	if rc := launch(raw2, cred2, nil, 65534); rc != codec.ESLURM_USER_ID_MISSING {
		t.Errorf("launch by nobody with slurm's credential: rc %d, want %d", rc, codec.ESLURM_USER_ID_MISSING)
	}
	for _, want := range []string{"replayed job credential", "the job credential's signature is not this server's", "Security violation: uid 65534 launching for uid 64030"} {
		// The server's log reaches us through a pipe, after the reply.
		deadline := time.Now().Add(5 * time.Second)
		for !strings.Contains(f.Logs(), want) && time.Now().Before(deadline) {
			time.Sleep(50 * time.Millisecond)
		}
		if !strings.Contains(f.Logs(), want) {
			t.Errorf("server log has no %q", want)
		}
	}
	logs := f.Logs()
	if t.Failed() {
		t.Logf("%s", lastLines(logs, 15))
	}
}
