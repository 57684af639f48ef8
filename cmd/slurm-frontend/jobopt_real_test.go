package main

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lablup/slurm-frontend/codec"
	"github.com/lablup/slurm-frontend/codec/munge"
	"github.com/lablup/slurm-frontend/edge"
	"github.com/lablup/slurm-frontend/translate/jobopt"
)

// The job option parser (translate/jobopt) against the real clients: a
// capture listener stands in for slurmctld, records the job descriptors
// sbatch/salloc/srun of each release send, and refuses them so the
// client exits. Every case runs the real client and compares what it
// sent (or the error it printed and its exit status) with what
// jobopt computes from the same arguments, script and environment.

// captureCtld records the job descriptors clients send and answers each
// request with an error code.
type captureCtld struct {
	ln   net.Listener
	port int
	auth *edge.MungeAuth
	rc   uint32

	mu  sync.Mutex
	got []capturedMsg
}

type capturedMsg struct {
	version, msgType uint16
	descs            []codec.JobDesc
	err              error
}

func startCapture(t *testing.T) *captureCtld {
	t.Helper()
	key, err := munge.LoadKey("/etc/munge/munge.key")
	if err != nil {
		t.Fatal(err)
	}
	port := freePort(t)
	ln, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", port))
	if err != nil {
		t.Fatal(err)
	}
	c := &captureCtld{ln: ln, port: port, auth: edge.NewMungeAuth(key, 0, []uint32{0}),
		rc: codec.ESLURM_INVALID_PARTITION_NAME}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			go c.serve(conn)
		}
	}()
	return c
}

func (c *captureCtld) serve(conn net.Conn) {
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(30 * time.Second))
	for {
		var pre [4]byte
		if _, err := io.ReadFull(conn, pre[:]); err != nil {
			return
		}
		n := binary.BigEndian.Uint32(pre[:])
		if n > codec.MaxFrame {
			return
		}
		buf := make([]byte, 4+n)
		copy(buf, pre[:])
		if _, err := io.ReadFull(conn, buf[4:]); err != nil {
			return
		}
		var f codec.Frame
		if err := codec.DecodeFrame(buf, &f); err != nil {
			return
		}
		if f.MsgType == 2049 { // REQUEST_FED_INFO, before a will-run: no federation
			var cred []byte
			if f.Version < codec.V23_02 {
				cred, _ = c.auth.Sign(nil, 0, 2050, []byte{0})
			}
			if _, err := conn.Write(codec.AppendFrame(nil, f.Version, 2050, cred, []byte{0})); err != nil {
				return
			}
			continue
		}
		m := capturedMsg{version: f.Version, msgType: f.MsgType}
		r := codec.NewReader(f.Body)
		switch f.MsgType {
		case codec.REQUEST_SUBMIT_BATCH_JOB, codec.REQUEST_JOB_WILL_RUN, codec.REQUEST_RESOURCE_ALLOCATION:
			var d codec.JobDesc
			m.err = d.Decode(&r, f.Version)
			m.descs = append(m.descs, d)
		case 4028, codec.REQUEST_HET_JOB_ALLOCATION: // REQUEST_SUBMIT_BATCH_HET_JOB, a u16 count of descriptors
			cnt := r.U16()
			for i := 0; i < int(cnt) && r.Err == nil; i++ {
				var d codec.JobDesc
				err := d.Decode(&r, f.Version)
				if err != nil && err != codec.ErrTrailing {
					m.err = err
					break
				}
				m.descs = append(m.descs, d)
			}
		}
		c.mu.Lock()
		c.got = append(c.got, m)
		c.mu.Unlock()
		var body [4]byte
		binary.BigEndian.PutUint32(body[:], c.rc)
		var cred []byte
		if f.Version < codec.V23_02 {
			cred, _ = c.auth.Sign(nil, 0, codec.RESPONSE_SLURM_RC, body[:])
		}
		if _, err := conn.Write(codec.AppendFrame(nil, f.Version, codec.RESPONSE_SLURM_RC, cred, body[:])); err != nil {
			return
		}
	}
}

func (c *captureCtld) take() []capturedMsg {
	c.mu.Lock()
	defer c.mu.Unlock()
	g := c.got
	c.got = nil
	return g
}

// The clients' slurm.conf: the capture listener as controller, GPUs as
// the only GRES.
const joboptConf = `ClusterName=refcluster
SlurmctldHost=slurm-frontend(127.0.0.1)
SlurmctldPort=%d
SlurmdPort=%d
SlurmUser=root
AuthType=auth/munge
CredType=cred/munge
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
SchedulerType=sched/backfill
MpiDefault=none
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobCompType=jobcomp/none
JobAcctGatherType=jobacct_gather/none
GresTypes=gpu
MessageTimeout=10
NodeName=n[1-4] NodeAddr=127.0.0.1 CPUs=32 Boards=1 SocketsPerBoard=2 CoresPerSocket=16 ThreadsPerCore=1 RealMemory=128000 Gres=gpu:4 State=UNKNOWN
PartitionName=cpu Nodes=n[1-4] Default=YES MaxTime=INFINITE State=UP
PartitionName=gpu Nodes=n[1-4] MaxTime=INFINITE State=UP
`

var releaseVersions = map[string]uint16{"22.05": codec.V22_05, "24.11": codec.V24_11, "26.05": codec.V26_05}

// joboptCase is one client invocation.
type joboptCase struct {
	name   string
	args   []string // after the program name; "job.sh" names the script
	script string   // written as job.sh when set
	stdin  string
	env    []string // SBATCH_*/SALLOC_*/SLURM_* input variables
	rels   []string // default: every release
	// verbose: the client logs at a debug level jobopt does not
	// reproduce; its stderr is not compared.
	verbose bool
}

const stdScript = "#!/bin/sh\n#SBATCH --job-name=fromscript\n#SBATCH -t 10\nhostname\n"

// joboptSbatchCases: every option family, spellings, and quirks.
var joboptSbatchCases = []joboptCase{
	{name: "plain", args: []string{"job.sh"}, script: "#!/bin/sh\nhostname\n"},
	{name: "script args", args: []string{"job.sh", "a b", "-N", "--x"}, script: "#!/bin/sh\nhostname\n"},
	{name: "partition long", args: []string{"--partition=gpu", "job.sh"}, script: stdScript},
	{name: "partition space", args: []string{"--partition", "gpu", "job.sh"}, script: stdScript},
	{name: "partition short attached", args: []string{"-pgpu", "job.sh"}, script: stdScript},
	{name: "partition abbreviated", args: []string{"--part=gpu", "job.sh"}, script: stdScript},
	{name: "partition empty", args: []string{"--partition=", "job.sh"}, script: stdScript},
	{name: "ambiguous abbreviation", args: []string{"--cpu=2", "job.sh"}, script: stdScript},
	{name: "ambiguous cluster", args: []string{"--cluste=x", "job.sh"}, script: stdScript},
	{name: "unknown option", args: []string{"--bogus", "job.sh"}, script: stdScript},
	{name: "unknown option value", args: []string{"--bogus=1", "job.sh"}, script: stdScript},
	{name: "unknown short", args: []string{"-y", "job.sh"}, script: stdScript},
	{name: "missing argument", args: []string{"job.sh", "--time"}, script: stdScript},
	{name: "missing argument at end", args: []string{"--time"}, stdin: stdScript},
	{name: "flag with argument", args: []string{"--contiguous=yes", "job.sh"}, script: stdScript},
	{name: "bundled shorts", args: []string{"-Hk", "-n4", "-c", "2", "job.sh"}, script: stdScript},
	{name: "bundled short with arg", args: []string{"-HN2", "job.sh"}, script: stdScript},
	{name: "nodes range", args: []string{"-N", "2-4", "job.sh"}, script: stdScript},
	{name: "nodes list", args: []string{"--nodes=1,2,4", "job.sh"}, script: stdScript, rels: []string{"24.11", "26.05"}},
	{name: "nodes bad", args: []string{"-N", "x", "job.sh"}, script: stdScript},
	{name: "nodes ntasks", args: []string{"-N2", "-n8", "--ntasks-per-node=4", "job.sh"}, script: stdScript},
	{name: "ntasks per node only", args: []string{"-N2", "--ntasks-per-node=3", "job.sh"}, script: stdScript},
	{name: "ntasks fewer than nodes", args: []string{"-N4", "-n2", "job.sh"}, script: stdScript},
	{name: "cpus mincpus", args: []string{"-n2", "-c4", "--mincpus=8", "job.sh"}, script: stdScript},
	{name: "ntasks zero", args: []string{"-n0", "job.sh"}, script: stdScript},
	{name: "ntasks bad", args: []string{"-n", "two", "job.sh"}, script: stdScript},
	{name: "mem units", args: []string{"--mem=4G", "job.sh"}, script: stdScript},
	{name: "mem kb", args: []string{"--mem=1500K", "job.sh"}, script: stdScript},
	{name: "mem per cpu", args: []string{"--mem-per-cpu=2000", "job.sh"}, script: stdScript},
	{name: "mem bad", args: []string{"--mem=4X", "job.sh"}, script: stdScript},
	{name: "mem and mem-per-cpu", args: []string{"--mem=1G", "--mem-per-cpu=1G", "job.sh"}, script: stdScript},
	{name: "mem script vs cmdline per-cpu", args: []string{"--mem-per-cpu=1G", "job.sh"}, script: "#!/bin/sh\n#SBATCH --mem=2G\ntrue\n"},
	{name: "tmp", args: []string{"--tmp=10G", "job.sh"}, script: stdScript},
	{name: "time forms", args: []string{"-t", "1-02:03:04", "--time-min=90", "job.sh"}, script: stdScript},
	{name: "time mm:ss", args: []string{"--time=5:30", "job.sh"}, script: stdScript},
	{name: "time unlimited", args: []string{"--time=UNLIMITED", "job.sh"}, script: stdScript},
	{name: "time zero", args: []string{"--time=0", "job.sh"}, script: stdScript},
	{name: "time bad", args: []string{"--time=abc", "job.sh"}, script: stdScript},
	{name: "gres", args: []string{"--gres=gpu:2", "job.sh"}, script: stdScript},
	{name: "gres typed", args: []string{"--gres=gpu:a100:1", "job.sh"}, script: stdScript},
	{name: "gres unknown", args: []string{"--gres=fpga:1", "job.sh"}, script: stdScript},
	{name: "gres none", args: []string{"--gres=none", "job.sh"}, script: stdScript},
	{name: "gpus", args: []string{"--gpus=4", "job.sh"}, script: stdScript},
	{name: "gpus per node", args: []string{"-N2", "--gpus-per-node=2", "job.sh"}, script: stdScript},
	{name: "gpus per task", args: []string{"-n2", "--gpus-per-task=1", "job.sh"}, script: stdScript},
	{name: "gpus per task no tasks", args: []string{"--gpus-per-task=1", "job.sh"}, script: stdScript},
	{name: "cpus per gpu", args: []string{"--gpus=2", "--cpus-per-gpu=4", "job.sh"}, script: stdScript},
	{name: "mem per gpu", args: []string{"--gpus=2", "--mem-per-gpu=8G", "job.sh"}, script: stdScript},
	{name: "ntasks per gpu", args: []string{"--gpus=2", "--ntasks-per-gpu=2", "job.sh"}, script: stdScript},
	{name: "gpu bind freq", args: []string{"--gpus=1", "--gpu-bind=closest", "--gpu-freq=high", "job.sh"}, script: stdScript},
	{name: "tres per task", args: []string{"-n2", "--tres-per-task=gres/gpu:1", "job.sh"}, script: stdScript, rels: []string{"24.11", "26.05"}},
	{name: "array", args: []string{"--array=1-10%2", "job.sh"}, script: stdScript},
	{name: "dependency", args: []string{"-d", "afterok:123:456", "--kill-on-invalid-dep=yes", "job.sh"}, script: stdScript},
	{name: "begin absolute", args: []string{"--begin=2031-05-06T07:08:09", "job.sh"}, script: stdScript},
	{name: "begin date only", args: []string{"--begin=2031-05-06", "--deadline=2031-06-01T00:00", "job.sh"}, script: stdScript},
	{name: "begin uts", args: []string{"--begin=uts1900000000", "job.sh"}, script: stdScript},
	{name: "begin relative", args: []string{"--begin=now+1hour", "job.sh"}, script: stdScript},
	{name: "begin bad", args: []string{"--begin=tomorrowish", "job.sh"}, script: stdScript},
	{name: "deadline before begin", args: []string{"--begin=2031-05-06", "--deadline=2031-05-01", "job.sh"}, script: stdScript},
	{name: "hold priority nice", args: []string{"-H", "--nice=10", "job.sh"}, script: stdScript},
	{name: "priority", args: []string{"--priority=100", "job.sh"}, script: stdScript},
	{name: "nice default", args: []string{"--nice", "job.sh"}, script: stdScript},
	{name: "requeue", args: []string{"--requeue", "job.sh"}, script: stdScript},
	{name: "no requeue", args: []string{"--no-requeue", "job.sh"}, script: stdScript},
	{name: "exclusive", args: []string{"--exclusive", "job.sh"}, script: stdScript},
	{name: "exclusive user", args: []string{"--exclusive=user", "job.sh"}, script: stdScript},
	{name: "exclusive space value is the script", args: []string{"--exclusive", "user", "job.sh"}, script: stdScript},
	{name: "oversubscribe", args: []string{"-s", "job.sh"}, script: stdScript},
	{name: "exclusive and oversubscribe", args: []string{"--exclusive", "-s", "job.sh"}, script: stdScript},
	{name: "contiguous features", args: []string{"--contiguous", "-C", "a&b", "--prefer=fast", "--cluster-constraint=c1", "job.sh"}, script: stdScript},
	{name: "reservation licenses", args: []string{"--reservation=r1", "-L", "matlab:2,foo", "job.sh"}, script: stdScript},
	{name: "burst buffer", args: []string{"--bb=capacity=1G", "job.sh"}, script: stdScript},
	{name: "reboot core spec", args: []string{"--reboot", "-S", "2", "job.sh"}, script: stdScript},
	{name: "thread spec", args: []string{"--thread-spec=2", "job.sh"}, script: stdScript},
	{name: "switches", args: []string{"--switches=2@10:00", "job.sh"}, script: stdScript},
	{name: "container", args: []string{"--container=/srv/bundle", "job.sh"}, script: stdScript},
	{name: "mail", args: []string{"--mail-type=BEGIN,END", "--mail-user=a@b", "job.sh"}, script: stdScript},
	{name: "mail bad", args: []string{"--mail-type=SOMETIMES", "job.sh"}, script: stdScript},
	{name: "signal", args: []string{"--signal=B:USR1@120", "job.sh"}, script: stdScript},
	{name: "signal bad", args: []string{"--signal=FOO", "job.sh"}, script: stdScript},
	{name: "io names", args: []string{"-o", "out-%j.txt", "-e", "/tmp/err", "-i", "in.txt", "--open-mode=append", "job.sh"}, script: stdScript},
	{name: "io none", args: []string{"-o", "none", "job.sh"}, script: stdScript},
	{name: "chdir", args: []string{"-D", "/tmp", "-o", "rel.out", "job.sh"}, script: stdScript},
	{name: "chdir relative", args: []string{"--chdir=sub", "job.sh"}, script: stdScript},
	{name: "export none", args: []string{"--export=NONE", "job.sh"}, script: stdScript},
	{name: "export list", args: []string{"--export=HOME,FOO=bar", "job.sh"}, script: stdScript},
	{name: "accounting strings", args: []string{"-A", "acct", "-q", "high", "--comment=hi there", "--wckey=wk", "job.sh"}, script: stdScript},
	{name: "profile network cpufreq", args: []string{"--profile=task", "--network=sn", "--cpu-freq=2000000", "--acctg-freq=task=30", "job.sh"}, script: stdScript},
	{name: "cpu freq range", args: []string{"--cpu-freq=low-high:performance", "job.sh"}, script: stdScript},
	{name: "overcommit", args: []string{"-O", "-N2", "job.sh"}, script: stdScript},
	{name: "nodelist", args: []string{"-w", "n3,n1,n2", "-x", "n4", "job.sh"}, script: stdScript},
	{name: "distribution", args: []string{"-m", "cyclic:block", "job.sh"}, script: stdScript},
	{name: "distribution plane", args: []string{"-n8", "-m", "plane=4", "job.sh"}, script: stdScript},
	{name: "extra node info", args: []string{"-B", "2:4:1", "job.sh"}, script: stdScript},
	{name: "hint", args: []string{"--hint=nomultithread", "job.sh"}, script: stdScript},
	{name: "delay boot wait all", args: []string{"--delay-boot=5", "--wait-all-nodes=1", "job.sh"}, script: stdScript},
	{name: "client side", args: []string{"--parsable", "-Q", "--wait", "job.sh"}, script: stdScript},
	{name: "test only", args: []string{"--test-only", "job.sh"}, script: stdScript},
	{name: "wrap", args: []string{"--wrap", "echo hi; sleep 1"}},
	{name: "wrap with args", args: []string{"--wrap=true", "extra"}},
	{name: "stdin script", stdin: "#!/bin/bash\n#SBATCH -N2\nsrun hostname\n"},
	{name: "not a script", args: []string{"job.sh"}, script: "hostname\n"},
	{name: "dos line breaks", args: []string{"job.sh"}, script: "#!/bin/sh\r\nhostname\r\n"},
	{name: "directives quoting", args: []string{"job.sh"}, script: "#!/bin/sh\n#SBATCH --comment=\"a b\" -J 'x y' # trailing\n#SBATCH --mail-user=\"q\\\"x\"\ntrue\n"},
	{name: "directive escaped space", args: []string{"job.sh"}, script: "#!/bin/sh\n#SBATCH --comment=a\\ b\ntrue\n"},
	{name: "directive stops at command", args: []string{"job.sh"}, script: "#!/bin/sh\n\n# note\n#SBATCH -N2\necho\n#SBATCH -N3\n"},
	{name: "directive indented ignored", args: []string{"job.sh"}, script: "#!/bin/sh\n  #SBATCH -N3\n#SBATCH -n5\ntrue\n"},
	{name: "directive no space", args: []string{"job.sh"}, script: "#!/bin/sh\n#SBATCH-N2\ntrue\n"},
	{name: "directive #SLURM", args: []string{"job.sh"}, script: "#!/bin/sh\n#SLURM -N2\ntrue\n"},
	{name: "directive unmatched quote", args: []string{"job.sh"}, script: "#!/bin/sh\n#SBATCH --comment=\"abc\ntrue\n"},
	{name: "directive unknown", args: []string{"job.sh"}, script: "#!/bin/sh\n#SBATCH --nonsense\ntrue\n"},
	{name: "directive not an option", args: []string{"job.sh"}, script: "#!/bin/sh\n#SBATCH hello\ntrue\n"},
	{name: "directive bad value", args: []string{"job.sh"}, script: "#!/bin/sh\n#SBATCH --time=xyz\ntrue\n"},
	{name: "cmdline beats script", args: []string{"-t", "30", "-p", "gpu", "job.sh"}, script: "#!/bin/sh\n#SBATCH -t 10\n#SBATCH -p cpu\ntrue\n"},
	{name: "env beats script", args: []string{"job.sh"}, script: "#!/bin/sh\n#SBATCH -p cpu\n#SBATCH -t 5\ntrue\n", env: []string{"SBATCH_PARTITION=gpu", "SBATCH_TIMELIMIT=20"}},
	{name: "cmdline beats env", args: []string{"-p", "cpu", "job.sh"}, script: stdScript, env: []string{"SBATCH_PARTITION=gpu", "SBATCH_ACCOUNT=envacct"}},
	{name: "env flag values", args: []string{"job.sh"}, script: "#!/bin/sh\n#SBATCH --requeue\ntrue\n", env: []string{"SBATCH_REQUEUE=no", "SBATCH_OVERCOMMIT=yes", "SBATCH_EXCLUSIVE=user"}},
	{name: "env mem conflict", args: []string{"job.sh"}, script: stdScript, env: []string{"SBATCH_MEM_PER_NODE=1G", "SBATCH_MEM_PER_CPU=1G"}},
	{name: "env bad value", args: []string{"job.sh"}, script: stdScript, env: []string{"SBATCH_TIMELIMIT=bogus"}},
	{name: "het job cmdline", args: []string{"-N1", "-p", "cpu", ":", "-N2", "-p", "gpu", "job.sh"}, script: "#!/bin/sh\ntrue\n"},
	{name: "het job script", args: []string{"job.sh"}, script: "#!/bin/sh\n#SBATCH -N1 --mem=1G\n#SBATCH hetjob\n#SBATCH -N2 -p gpu\ntrue\n"},
	{name: "het job packjob", args: []string{"job.sh"}, script: "#!/bin/sh\n#SBATCH -n1\n#SBATCH packjob -n3\ntrue\n"},
	{name: "double dash", args: []string{"-N2", "--", "job.sh", "-N3"}, script: stdScript},
	{name: "quiet verbose", args: []string{"-Q", "-v", "job.sh"}, script: stdScript},
	{name: "uid as root", args: []string{"--uid=root", "--gid=0", "job.sh"}, script: stdScript},
	{name: "uid unknown", args: []string{"--uid=nosuchuser", "job.sh"}, script: stdScript},
	{name: "use min nodes spread", args: []string{"--use-min-nodes", "--spread-job", "-N1-3", "job.sh"}, script: stdScript},
	{name: "ntasks per socket core", args: []string{"--ntasks-per-socket=2", "--ntasks-per-core=1", "--sockets-per-node=2", "--cores-per-socket=4", "--threads-per-core=1", "job.sh"}, script: stdScript},
	{name: "mem bind", args: []string{"--mem-bind=map_mem:0,1*2", "job.sh"}, script: stdScript},
	{name: "batch features", args: []string{"--batch=fast", "job.sh"}, script: stdScript},
	{name: "oom kill step", args: []string{"--oom-kill-step", "job.sh"}, script: stdScript, rels: []string{"24.11", "26.05"}},
	{name: "segment stepmgr", args: []string{"--segment=2", "--stepmgr", "-N4", "job.sh"}, script: stdScript, rels: []string{"24.11", "26.05"}},
	{name: "extra container id", args: []string{"--extra=foo=bar", "--container-id=c1", "job.sh"}, script: stdScript, rels: []string{"24.11", "26.05"}},
	{name: "mem update", args: []string{"--mem-update=10@5", "job.sh"}, script: stdScript, rels: []string{"26.05"}},
	{name: "requeue expedite", args: []string{"--requeue=expedite", "job.sh"}, script: stdScript, rels: []string{"26.05"}},
	{name: "mail type replaces", args: []string{"--mail-type=BEGIN", "--mail-type=END", "job.sh"}, script: stdScript},
	{name: "power", args: []string{"--power=level", "job.sh"}, script: stdScript, rels: []string{"22.05"}},
	{name: "env export gres array", args: []string{"job.sh"}, script: stdScript, env: []string{"SBATCH_EXPORT=NONE", "SBATCH_GRES=gpu:1", "SBATCH_ARRAY_INX=0-3"}},
	{name: "exit error env", args: []string{"--time=bad", "job.sh"}, script: stdScript, env: []string{"SLURM_EXIT_ERROR=7"}},
	{name: "exit error env script", args: []string{"job.sh"}, script: "echo\n", env: []string{"SLURM_EXIT_ERROR=7"}},
	{name: "gres zero", args: []string{"--gres=gpu:0", "job.sh"}, script: stdScript},
	{name: "gres list", args: []string{"--gres=gpu:1,gpu:a100:1", "job.sh"}, script: stdScript},
	{name: "hint with -B", args: []string{"--hint=compute_bound", "-B", "2", "job.sh"}, script: stdScript},
	{name: "ntasks per core over threads", args: []string{"--ntasks-per-core=2", "--threads-per-core=1", "job.sh"}, script: stdScript},
	{name: "gpus per socket no sockets", args: []string{"--gpus-per-socket=1", "job.sh"}, script: stdScript},
	{name: "nodes zero", args: []string{"-N", "0", "job.sh"}, script: stdScript},
	{name: "nodes and nodelist", args: []string{"-N3", "-w", "n1,n2", "job.sh"}, script: stdScript},
	{name: "nodelist ranged", args: []string{"--nodelist=n[1-2],n4,n1", "job.sh"}, script: stdScript},
	{name: "nice negative", args: []string{"--nice=-5", "job.sh"}, script: stdScript},
	{name: "nice out of range", args: []string{"--nice=99999999999", "job.sh"}, script: stdScript},
	{name: "priority top", args: []string{"--priority=TOP", "job.sh"}, script: stdScript},
	{name: "signal reservation", args: []string{"--signal=R:TERM", "job.sh"}, script: stdScript},
	{name: "begin time of day", args: []string{"--begin=16:00", "job.sh"}, script: stdScript},
	{name: "begin now seconds", args: []string{"--begin=now+30", "job.sh"}, script: stdScript},
	{name: "begin midnight", args: []string{"--begin=midnight", "job.sh"}, script: stdScript},
	{name: "begin month day", args: []string{"--begin=12/25", "job.sh"}, script: stdScript},
	{name: "delay boot bad", args: []string{"--delay-boot=bad", "job.sh"}, script: stdScript},
	{name: "srun-only option", args: []string{"--cpu-bind=cores", "job.sh"}, script: stdScript},
	{name: "salloc-only option", args: []string{"--no-shell", "job.sh"}, script: stdScript},
	{name: "wrap in script ignored", args: []string{"job.sh"}, script: "#!/bin/sh\n#SBATCH --wrap=ignored\n#SBATCH -N2\ntrue\n"},
	{name: "verbose bundle", args: []string{"-vvv", "job.sh"}, script: stdScript, verbose: true},
	{name: "usage", args: []string{"--usage"}},
	{name: "version", args: []string{"-V"}},
	{name: "het job with script args", args: []string{"-n1", ":", "-n2", "job.sh", "arg"}, script: "#!/bin/sh\ntrue\n"},
	{name: "het separator first", args: []string{":", "-n2", "job.sh"}, script: "#!/bin/sh\ntrue\n"},
	{name: "het script and cmdline", args: []string{"-p", "gpu", ":", "-t", "5", "job.sh"}, script: "#!/bin/sh\n#SBATCH -N1\n#SBATCH hetjob\n#SBATCH -N2\ntrue\n"},
	{name: "directive empty quotes", args: []string{"job.sh"}, script: "#!/bin/sh\n#SBATCH --comment \"\" -N2\ntrue\n"},
	{name: "directive colon", args: []string{"job.sh"}, script: "#!/bin/sh\n#SBATCH :\ntrue\n"},
	{name: "directive tab and trailing comment", args: []string{"job.sh"}, script: "#!/bin/sh\n#SBATCH\t-N2\t#-N3\n#SBATCH -J a#b\ntrue\n"},
	{name: "script only whitespace", args: []string{"job.sh"}, script: "  \n\t\n"},
	{name: "mem per cpu env vs cmdline mem", args: []string{"--mem=2G", "job.sh"}, script: stdScript, env: []string{"SBATCH_MEM_PER_CPU=1G"}},
	{name: "cpus per task and per gpu", args: []string{"-c2", "--gpus=1", "--cpus-per-gpu=2", "job.sh"}, script: stdScript},
	{name: "open mode bad", args: []string{"--open-mode=x", "job.sh"}, script: stdScript},
	{name: "profile bad", args: []string{"--profile=bogus", "job.sh"}, script: stdScript},
	{name: "acctg freq bad", args: []string{"--acctg-freq=bogus", "job.sh"}, script: stdScript},
	{name: "distribution bad", args: []string{"-m", "sideways", "job.sh"}, script: stdScript},
	{name: "kill on invalid dep bad", args: []string{"--kill-on-invalid-dep=maybe", "job.sh"}, script: stdScript},
	{name: "exclusive bad", args: []string{"--exclusive=all", "job.sh"}, script: stdScript},
	{name: "no kill off", args: []string{"--no-kill=off", "job.sh"}, script: stdScript},
	{name: "wait all nodes bad", args: []string{"--wait-all-nodes=2", "job.sh"}, script: stdScript},
	{name: "mincpus zero", args: []string{"--mincpus=0", "job.sh"}, script: stdScript},
}

// Fields the comparison leaves out, and why.
var joboptExcluded = map[string]string{
	"AllocRespPort": "the port salloc/srun listen on for the allocation reply",
	"OtherPort":     "the port of salloc/srun's message thread",
	"AllocSID":      "the submitting process's session id (getsid)",
	"Environment":   "compared separately, without the variables only the running client knows",
	"EmptyStrs":     "compared through the string fields' NULL/empty state below",
}

func TestJobOptSbatchReal(t *testing.T) {
	needClients(t)
	capt := startCapture(t)
	dir := workDir(t, "jobopt-")
	conf := filepath.Join(dir, "slurm.conf")
	if err := os.WriteFile(conf, []byte(fmt.Sprintf(joboptConf, capt.port, capt.port+1)), 0o644); err != nil {
		t.Fatal(err)
	}
	runJobOptCases(t, capt, dir, conf, "sbatch", joboptSbatchCases, jobopt.Sbatch)
}

// joboptSallocCases: the allocation request salloc sends.
var joboptSallocCases = []joboptCase{
	{name: "plain", args: []string{"true"}},
	{name: "default shell", args: nil},
	{name: "no shell", args: []string{"--no-shell", "-N2"}},
	{name: "resources", args: []string{"-N2", "-n8", "-c2", "--mem=4G", "-t", "1:00:00", "-p", "gpu", "hostname", "-f"}},
	{name: "gpus", args: []string{"--gpus-per-node=2", "-N2", "--cpus-per-gpu=4", "true"}},
	{name: "gres and features", args: []string{"--gres=gpu:1", "-C", "fast", "--exclusive", "true"}},
	{name: "job name", args: []string{"-J", "myjob", "--comment=x", "true"}},
	{name: "immediate and bell", args: []string{"-I5", "--bell", "-K", "true"}},
	{name: "hold begin", args: []string{"-H", "--begin=2031-01-01", "true"}},
	{name: "x11 option", args: []string{"--x11", "true"}},
	{name: "env input", args: []string{"true"}, env: []string{"SALLOC_PARTITION=gpu", "SALLOC_TIMELIMIT=15", "SALLOC_NO_BELL=1"}},
	{name: "cmdline beats env", args: []string{"-p", "cpu", "true"}, env: []string{"SALLOC_PARTITION=gpu"}},
	{name: "sbatch-only option", args: []string{"--array=1-2", "true"}},
	{name: "bad time", args: []string{"--time=xx", "true"}},
	{name: "container", args: []string{"--container=/b", "true"}},
	{name: "wait all nodes", args: []string{"--wait-all-nodes=1", "--no-shell"}},
	{name: "het job", args: []string{"-N1", ":", "-N2", "-p", "gpu", "true"}},
	{name: "nodelist", args: []string{"-w", "n2,n1", "true"}},
	{name: "abbreviation", args: []string{"--partit=gpu", "--gp=2", "true"}},
	{name: "ntasks fewer than nodes", args: []string{"-N3", "-n2", "true"}},
}

// joboptSrunCases: the allocation srun requests when run outside one.
var joboptSrunCases = []joboptCase{
	{name: "plain", args: []string{"hostname"}},
	{name: "resources", args: []string{"-N2", "-n4", "-c2", "--mem-per-cpu=1G", "-t", "30", "-p", "gpu", "/bin/echo", "hi"}},
	{name: "job name and label", args: []string{"-J", "x", "-l", "-u", "true"}},
	{name: "cpu bind cores", args: []string{"--cpu-bind=cores", "true"}},
	{name: "cpu bind map", args: []string{"--cpu-bind=verbose,map_cpu:0,1*2", "true"}},
	{name: "cpu bind bad", args: []string{"--cpu-bind=sideways", "true"}},
	{name: "ntasks per core", args: []string{"--ntasks-per-core=1", "-n2", "true"}},
	{name: "gpus per task", args: []string{"-n2", "--gpus-per-task=1", "true"}},
	{name: "exclusive overlap", args: []string{"--exclusive", "--overlap", "true"}},
	{name: "no command", args: []string{"-N1"}},
	{name: "env input", args: []string{"true"}, env: []string{"SLURM_PARTITION=gpu", "SLURM_TIMELIMIT=9", "SLURM_NTASKS=3"}},
	{name: "srun-only options", args: []string{"--mpi=none", "--kill-on-bad-exit=1", "--pty", "--unbuffered", "true"}},
	{name: "pty with output", args: []string{"--pty", "-o", "x", "true"}},
	{name: "wait and threads", args: []string{"-W", "5", "-T", "2", "true"}},
	{name: "ntasks fewer than nodes", args: []string{"-N3", "-n2", "true"}},
	{name: "nodelist", args: []string{"-w", "n[1-2]", "true"}},
	{name: "sbatch-only option", args: []string{"--array=1-2", "true"}},
	{name: "bad value", args: []string{"-N", "x", "true"}},
	{name: "x11", args: []string{"--x11", "true"}},
	{name: "immediate", args: []string{"--immediate=10", "true"}},
}

func TestJobOptSrunReal(t *testing.T) {
	needClients(t)
	capt := startCapture(t)
	dir := workDir(t, "jobopt-srun-")
	conf := filepath.Join(dir, "slurm.conf")
	if err := os.WriteFile(conf, []byte(fmt.Sprintf(joboptConf, capt.port, capt.port+1)), 0o644); err != nil {
		t.Fatal(err)
	}
	runJobOptCases(t, capt, dir, conf, "srun", joboptSrunCases, jobopt.Srun)
}

func TestJobOptSallocReal(t *testing.T) {
	needClients(t)
	capt := startCapture(t)
	dir := workDir(t, "jobopt-salloc-")
	conf := filepath.Join(dir, "slurm.conf")
	if err := os.WriteFile(conf, []byte(fmt.Sprintf(joboptConf, capt.port, capt.port+1)), 0o644); err != nil {
		t.Fatal(err)
	}
	runJobOptCases(t, capt, dir, conf, "salloc", joboptSallocCases, jobopt.Salloc)
}

func runJobOptCases(t *testing.T, capt *captureCtld, dir, conf, prog string, cases []joboptCase, parse func(jobopt.Input) (*jobopt.Result, error)) {
	for _, tc := range cases {
		rels := tc.rels
		if rels == nil {
			rels = releases
		}
		for _, rel := range rels {
			t.Run(tc.name+"/"+rel, func(t *testing.T) {
				cdir := filepath.Join(dir, strings.NewReplacer(" ", "_", "/", "_").Replace(tc.name)+"-"+rel)
				if err := os.MkdirAll(cdir, 0o777); err != nil {
					t.Fatal(err)
				}
				os.MkdirAll(filepath.Join(cdir, "sub"), 0o777)
				if tc.script != "" {
					if err := os.WriteFile(filepath.Join(cdir, "job.sh"), []byte(tc.script), 0o755); err != nil {
						t.Fatal(err)
					}
				}
				capt.take()
				now := time.Now()
				stdout, stderr, code := runClientStdin(t, rel, conf, cdir, tc.env, tc.stdin, append([]string{prog}, tc.args...)...)
				got := capt.take()
				in := jobopt.Input{
					Args: tc.args, Env: clientEnv(conf, tc.env), Cwd: cdir, Version: releaseVersions[rel],
					Now: now, GresTypes: []string{"gpu"},
					Exists: func(path string) bool {
						fi, err := os.Stat(path)
						return err == nil && !fi.IsDir()
					},
					// root is the only account every client root knows.
					LookupUser:  func(n string) (uint32, bool) { return 0, n == "root" || n == "0" },
					LookupGroup: func(n string) (uint32, bool) { return 0, n == "root" || n == "0" },
					Cluster:     "refcluster", Shell: "/bin/bash",
				}
				if tc.script != "" {
					in.Script = []byte(tc.script)
				}
				if tc.stdin != "" {
					in.Stdin = []byte(tc.stdin)
				}
				res, err := parse(in)
				if tc.verbose {
					stderr = ""
					if res != nil {
						res.Stderr = nil
					}
				}
				compareJobOpt(t, prog, rel, got, stdout, stderr, code, res, err)
			})
		}
	}
}

// clientEnv is the environment tools/run-client.sh gives the client.
func clientEnv(conf string, extra []string) []string {
	env := []string{"HOME=/root", "PATH=/usr/sbin:/usr/bin:/sbin:/bin",
		"LANG=C.UTF-8", "USER=root", "LOGNAME=root", "TERM=" + termOr("dumb")}
	env = append(env, extra...)
	return append(env, "SLURM_CONF="+conf)
}

func termOr(d string) string {
	if v := os.Getenv("TERM"); v != "" {
		return v
	}
	return d
}

func compareJobOpt(t *testing.T, prog, rel string, got []capturedMsg, stdout, stderr string, code int, res *jobopt.Result, err error) {
	t.Helper()
	lines := splitLines(stderr)
	if len(got) == 0 {
		// The client refused by itself.
		ce, ok := err.(*jobopt.ClientError)
		if !ok {
			t.Fatalf("%s %s exited %d without sending anything, stderr:\n%s\njobopt: %v, %+v", prog, rel, code, stderr, err, res)
		}
		if ce.Exit != code || !reflect.DeepEqual(ce.Lines, lines) {
			t.Errorf("client error differs\nreal (exit %d):\n%s\njobopt (exit %d):\n%s", code, strings.Join(lines, "\n"), ce.Exit, strings.Join(ce.Lines, "\n"))
		}
		return
	}
	if err != nil {
		t.Fatalf("%s %s sent %d messages (stderr %q) but jobopt refused: %v", prog, rel, len(got), stderr, err)
	}
	m := got[0]
	if m.err != nil {
		t.Fatalf("decoding the real client's request: %v", m.err)
	}
	wantType := map[string]uint16{"sbatch": codec.REQUEST_SUBMIT_BATCH_JOB, "salloc": codec.REQUEST_RESOURCE_ALLOCATION, "srun": codec.REQUEST_RESOURCE_ALLOCATION}[prog]
	if len(m.descs) > 1 {
		wantType = map[string]uint16{"sbatch": 4028, "salloc": codec.REQUEST_HET_JOB_ALLOCATION, "srun": codec.REQUEST_HET_JOB_ALLOCATION}[prog]
	}
	if res.TestOnly {
		wantType = codec.REQUEST_JOB_WILL_RUN
	}
	if m.msgType != wantType {
		t.Errorf("real client sent message type %d, jobopt expects %d", m.msgType, wantType)
	}
	if len(m.descs) != len(res.Jobs) {
		t.Fatalf("real client sent %d job descriptors, jobopt %d", len(m.descs), len(res.Jobs))
	}
	for i := range m.descs {
		compareDesc(t, i, &m.descs[i], &res.Jobs[i])
	}
	// What the client printed before sending (warnings): everything but
	// its report of our refusal.
	var before []string
	for _, l := range lines {
		if strings.Contains(l, "submission failed") || strings.Contains(l, "allocation failure") || strings.Contains(l, "Job submit/allocate failed") ||
			strings.Contains(l, "Unable to allocate resources") {
			continue
		}
		before = append(before, l)
	}
	if !reflect.DeepEqual(before, res.Stderr) && !(len(before) == 0 && len(res.Stderr) == 0) {
		t.Errorf("stderr before the request differs\nreal:\n%s\njobopt:\n%s", strings.Join(before, "\n"), strings.Join(res.Stderr, "\n"))
	}
	_ = stdout
}

func splitLines(s string) []string {
	s = strings.TrimRight(s, "\n")
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}

// runtimeEnv are variables only the running client knows.
func runtimeEnv(name string) bool {
	switch name {
	case "SLURM_SUBMIT_HOST", "SLURM_UMASK", "SLURM_PRIO_PROCESS", "PWD", "OLDPWD", "SHLVL", "_":
		return true
	}
	return strings.HasPrefix(name, "SLURM_RLIMIT_")
}

func compareDesc(t *testing.T, comp int, real, ours *codec.JobDesc) {
	t.Helper()
	rv, ov := reflect.ValueOf(real).Elem(), reflect.ValueOf(ours).Elem()
	typ := rv.Type()
	var diffs []string
	for i := 0; i < typ.NumField(); i++ {
		f := typ.Field(i)
		if _, skip := joboptExcluded[f.Name]; skip {
			continue
		}
		a, b := rv.Field(i).Interface(), ov.Field(i).Interface()
		if f.Name == "BeginTime" || f.Name == "Deadline" {
			// Relative times are taken from the client's clock.
			x, y := a.(int64), b.(int64)
			if x-y > 2 || y-x > 2 {
				diffs = append(diffs, fmt.Sprintf("%s: real %v, jobopt %v", f.Name, a, b))
			}
			continue
		}
		if !reflect.DeepEqual(a, b) {
			diffs = append(diffs, fmt.Sprintf("%s: real %#v, jobopt %#v", f.Name, a, b))
		}
	}
	if real.EmptyStrs != ours.EmptyStrs {
		diffs = append(diffs, fmt.Sprintf("empty (non-NULL) strings: real %#x, jobopt %#x", real.EmptyStrs, ours.EmptyStrs))
	}
	filt := func(env []string) []string {
		var out []string
		for _, kv := range env {
			name, _, _ := strings.Cut(kv, "=")
			if !runtimeEnv(name) {
				out = append(out, kv)
			}
		}
		sort.Strings(out)
		return out
	}
	if a, b := filt(real.Environment), filt(ours.Environment); !reflect.DeepEqual(a, b) {
		diffs = append(diffs, fmt.Sprintf("Environment:\n  real   %q\n  jobopt %q", a, b))
	}
	if len(diffs) > 0 {
		t.Errorf("component %d differs:\n  %s", comp, strings.Join(diffs, "\n  "))
	}
}

// runClientStdin is runClient with the client's standard input.
func runClientStdin(t *testing.T, rel, conf, dir string, env []string, stdin string, args ...string) (string, string, int) {
	t.Helper()
	cmd := exec.Command("bash", append([]string{filepath.Join(repoRoot(t), "tools/run-client.sh"), rel, conf}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(hermeticEnv(), env...)
	cmd.Stdin = strings.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	done := make(chan error, 1)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(60 * time.Second):
		cmd.Process.Kill()
		<-done
		t.Fatalf("%s %v: timed out\nstderr:\n%s", rel, args, errb.String())
	}
	return out.String(), errb.String(), cmd.ProcessState.ExitCode()
}
