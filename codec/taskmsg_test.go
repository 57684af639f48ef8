package codec

import (
	"bytes"
	"slices"
	"testing"
)

// taskIDs returns 0..n-1.
func taskIDs(n int) []uint32 {
	out := make([]uint32, n)
	for i := range out {
		out[i] = uint32(i)
	}
	return out
}

// taskSLUID returns the sluid slurmctld gave the capture's job (25.11+
// allocations carry it), or 0.
func taskSLUID(t *testing.T, rel string) uint64 {
	for _, f := range allocFrames(t, rel, RESPONSE_RESOURCE_ALLOCATION) {
		var m ResourceAllocation
		r := NewReader(f.Body)
		if m.Decode(&r, f.Version) == nil {
			return m.SLUID
		}
	}
	return 0
}

// taskCheckStep checks the step id of a capture's step 0.
func taskCheckStep(t *testing.T, name string, v uint16, job uint32, sluid uint64, s JobStepID) {
	t.Helper()
	if s.JobID != job || s.StepID != 0 || s.StepHetComp != NoVal {
		t.Errorf("%s: step %d.%d het %#x", name, s.JobID, s.StepID, s.StepHetComp)
	}
	if v >= V24_11 && v < V25_11 && s.SLUID != 0 {
		t.Errorf("%s: 24.11 sluid %#x", name, s.SLUID)
	}
	if sluid != 0 && s.SLUID != sluid {
		t.Errorf("%s: sluid %#x, the allocation's is %#x", name, s.SLUID, sluid)
	}
}

func TestLaunchTasksResponseGolden(t *testing.T) {
	seen := map[uint16]int{}
	for _, c := range allocRuns {
		sluid := taskSLUID(t, c.rel)
		msgs, frames := allocGolden[LaunchTasksResponse](t, c.rel, RESPONSE_LAUNCH_TASKS)
		if len(msgs) != 1 {
			t.Fatalf("%s: %d launch responses", c.rel, len(msgs))
		}
		v := frames[0].Version
		seen[v]++
		m := msgs[0]
		taskCheckStep(t, c.rel, v, c.job, sluid, m.StepID)
		// One node runs every task: global ids 0..n-1, one pid each.
		if m.ReturnCode != 0 || m.NodeName != "n1" || !slices.Equal(m.TaskIDs, taskIDs(c.ntasks)) || len(m.LocalPIDs) != c.ntasks {
			t.Errorf("%s: rc %d node %q tasks %v pids %v", c.rel, m.ReturnCode, m.NodeName, m.TaskIDs, m.LocalPIDs)
		}
		for _, pid := range m.LocalPIDs {
			if pid < 2 {
				t.Errorf("%s: pid %d", c.rel, pid)
			}
		}
	}
	allocSeenVersions(t, "RESPONSE_LAUNCH_TASKS", seen)
}

func TestTaskExitGolden(t *testing.T) {
	seen := map[uint16]int{}
	for _, c := range allocRuns {
		sluid := taskSLUID(t, c.rel)
		msgs, frames := allocGolden[TaskExitMsg](t, c.rel, MESSAGE_TASK_EXIT)
		if c.status == NoVal {
			if len(msgs) != 0 {
				t.Errorf("%s: %d task exits", c.rel, len(msgs))
			}
			continue
		}
		if len(msgs) != 1 {
			t.Fatalf("%s: %d task exits", c.rel, len(msgs))
		}
		v := frames[0].Version
		seen[v]++
		m := msgs[0]
		taskCheckStep(t, c.rel, v, c.job, sluid, m.StepID)
		// All tasks of the node exit with the same status in one
		// message.
		if m.ReturnCode != c.status || !slices.Equal(m.TaskIDs, taskIDs(c.ntasks)) {
			t.Errorf("%s: status %#x tasks %v, want %#x %v", c.rel, m.ReturnCode, m.TaskIDs, c.status, taskIDs(c.ntasks))
		}
		code, exited := m.ExitCode()
		switch {
		case c.status == 5<<8: // srun sh -c 'exit 5'
			if !exited || code != 5 {
				t.Errorf("%s: exit code %d (exited %v)", c.rel, code, exited)
			}
		case c.status == 9: // scancel: SIGKILL
			if exited {
				t.Errorf("%s: killed task reads as exit %d", c.rel, code)
			}
		case !exited || uint32(code)<<8 != c.status:
			t.Errorf("%s: exit code %d (exited %v)", c.rel, code, exited)
		}
	}
	allocSeenVersions(t, "MESSAGE_TASK_EXIT", seen)
}

func TestSignalTasksGolden(t *testing.T) {
	const rel = "slurm-24.11-steps/step-show-cancel-24.11.pcap"
	msgs, _ := allocGolden[SignalTasksRequest](t, rel, REQUEST_SIGNAL_TASKS)
	if len(msgs) != 2 {
		t.Fatalf("%d signal requests", len(msgs))
	}
	for _, m := range msgs {
		// scancel 16.0: slurmctld tells slurmd to SIGKILL step 16.0.
		if m.StepID != (JobStepID{JobID: 16, StepID: 0, StepHetComp: NoVal}) || m.Signal != 9 || m.Flags != 0 {
			t.Errorf("signal tasks %+v", m)
		}
	}
}

func TestStepCompleteGolden(t *testing.T) {
	seen := map[uint16]int{}
	for _, c := range allocRuns {
		sluid := taskSLUID(t, c.rel)
		msgs, frames := allocGolden[StepCompleteRequest](t, c.rel, REQUEST_STEP_COMPLETE)
		if c.status == NoVal {
			continue
		}
		if len(msgs) != 1 {
			t.Fatalf("%s: %d step completions", c.rel, len(msgs))
		}
		v := frames[0].Version
		seen[v]++
		m := msgs[0]
		taskCheckStep(t, c.rel, v, c.job, sluid, m.StepID)
		if m.RangeFirst != 0 || m.RangeLast != 0 || m.StepRC != c.status || m.SendToStepmgr {
			t.Errorf("%s: range %d-%d rc %#x stepmgr %v", c.rel, m.RangeFirst, m.RangeLast, m.StepRC, m.SendToStepmgr)
		}
		// 22.05's stepd sends no jobacct (25 bytes); 24.11 and 26.05
		// send the 8 TRES ids of the cluster, a NULL tres_list and
		// usage unset (INFINITE64).
		switch a := m.JobAcct; {
		case v == V22_05:
			if a != nil || len(frames[0].Body) != 25 {
				t.Errorf("%s: jobacct %+v, %d bytes", c.rel, a, len(frames[0].Body))
			}
		case a == nil:
			t.Errorf("%s: no jobacct", c.rel)
		default:
			if !slices.Equal(a.TRESIDs, []uint32{1, 2, 3, 4, 5, 6, 7, 8}) || a.TRESList != nil {
				t.Errorf("%s: tres ids %v list %v", c.rel, a.TRESIDs, a.TRESList)
			}
			for i, p := range a.usage() {
				if len(*p) != 8 || (*p)[0] != Infinite64 {
					t.Errorf("%s: usage array %d: %v", c.rel, i, *p)
				}
			}
		}
	}
	allocSeenVersions(t, "REQUEST_STEP_COMPLETE", seen)
}

// taskJobAcct is a jobacct record with every field set.
func taskJobAcct() *JobAcct {
	a := &JobAcct{
		UserCPUSec: 12, UserCPUUsec: 345, SysCPUSec: 6, SysCPUUsec: 789, ActCPUFreq: 2400000, ConsumedEnergy: NoVal64,
		TRESIDs: []uint32{1, 2, 1001},
		TRESList: []JobAcctTRES{
			{AllocSecs: 10, Count: 2, ID: 1, Type: "cpu"},
			{ID: 1001, Name: "gpu", Type: "gres", Count: 1},
		},
	}
	for i, p := range a.usage() {
		*p = []uint64{uint64(i), Infinite64, 7}
	}
	a.TRESUsageOutTot = nil // an empty array
	return a
}

func TestTaskMsgRoundTripAllVersions(t *testing.T) {
	str := func(s string) int { return 4 + len(s) + 1 }
	for _, v := range Versions {
		sl := 12
		if v >= V24_11 {
			sl = 20
		}
		s := jcStepFor(JobStepID{SLUID: 0x38a688cc12c1a4, JobID: 9, StepID: 0, StepHetComp: NoVal}, v)

		lr := LaunchTasksResponse{StepID: s, NodeName: "n1", LocalPIDs: []uint32{21076, 21077}, TaskIDs: []uint32{0, 1}}
		if b := jcRoundTrip(t, "launch response", v, lr); len(b) != sl+4+str("n1")+4+(4+8)+(4+8) {
			t.Errorf("launch response %s: %d bytes", VersionName(v), len(b))
		}
		jcRoundTrip(t, "launch response failed", v, LaunchTasksResponse{StepID: s, ReturnCode: 4020 /* ESLURMD_EXECVE_FAILED */, EmptyStrs: 1})

		te := TaskExitMsg{ReturnCode: 5 << 8, TaskIDs: []uint32{0, 3}, StepID: s}
		if b := jcRoundTrip(t, "task exit", v, te); len(b) != 4+4+(4+8)+sl {
			t.Errorf("task exit %s: %d bytes", VersionName(v), len(b))
		}

		if b := jcRoundTrip(t, "signal tasks", v, SignalTasksRequest{StepID: s, Flags: KillFullJob, Signal: 2}); len(b) != sl+4 {
			t.Errorf("signal tasks %s: %d bytes", VersionName(v), len(b))
		}

		sc := StepCompleteRequest{StepID: s, RangeFirst: 0, RangeLast: 3, StepRC: 9, SendToStepmgr: true}
		want := sl + 12 + 1 + 1
		if v < V24_05 {
			sc.SendToStepmgr = false
			want--
		}
		if b := jcRoundTrip(t, "step complete", v, sc); len(b) != want {
			t.Errorf("step complete %s: %d bytes, want %d", VersionName(v), len(b), want)
		}
		sc.JobAcct = taskJobAcct()
		jcRoundTrip(t, "step complete jobacct", v, sc)
		sc.JobAcct = &JobAcct{} // NULL tres list, empty arrays
		jcRoundTrip(t, "step complete empty jobacct", v, sc)
	}
}

// The pid and task arrays of RESPONSE_LAUNCH_TASKS each carry their own
// count after count_of_pids; MESSAGE_TASK_EXIT's step id comes last.
func TestTaskMsgLayouts(t *testing.T) {
	var w Writer
	(&LaunchTasksResponse{StepID: JobStepID{JobID: 1, StepID: 2, StepHetComp: 3}, ReturnCode: 4, NodeName: "n",
		LocalPIDs: []uint32{5}, TaskIDs: []uint32{6}}).Encode(&w, V22_05)
	want := []byte{0, 0, 0, 1, 0, 0, 0, 2, 0, 0, 0, 3, 0, 0, 0, 4, 0, 0, 0, 2, 'n', 0,
		0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 5, 0, 0, 0, 1, 0, 0, 0, 6}
	jcRequireSameBytes(t, "launch response", w.B, want)

	w = Writer{}
	(&TaskExitMsg{ReturnCode: 0x500, TaskIDs: []uint32{7}, StepID: JobStepID{SLUID: 8, JobID: 1, StepID: 2, StepHetComp: 3}}).Encode(&w, V24_11)
	want = []byte{0, 0, 5, 0, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 7,
		0, 0, 0, 0, 0, 0, 0, 8, 0, 0, 0, 1, 0, 0, 0, 2, 0, 0, 0, 3}
	jcRequireSameBytes(t, "task exit", w.B, want)
}

func TestTaskMsgRefusesCounts(t *testing.T) {
	s := JobStepID{JobID: 1, StepID: 0, StepHetComp: NoVal}
	// count_of_pids must match both arrays.
	for _, m := range []LaunchTasksResponse{
		{StepID: s, LocalPIDs: []uint32{1, 2}, TaskIDs: []uint32{0}},
		{StepID: s, LocalPIDs: []uint32{1}, TaskIDs: []uint32{0, 1}},
	} {
		var w Writer
		m.Encode(&w, V24_11)
		var got LaunchTasksResponse
		r := NewReader(w.B)
		if err := got.Decode(&r, V24_11); CodeOf(err) != ESLURM_PROTOCOL_INCOMPLETE_PACKET {
			t.Errorf("launch response %d pids %d tasks: %v", len(m.LocalPIDs), len(m.TaskIDs), err)
		}
	}
	// num_tasks must match task_id_list.
	b := []byte{0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, 1, 0, 0, 0, 0}
	b = append(b, make([]byte, 12)...)
	var te TaskExitMsg
	r := NewReader(b)
	if err := te.Decode(&r, V22_05); CodeOf(err) != ESLURM_PROTOCOL_INCOMPLETE_PACKET {
		t.Errorf("task exit count mismatch: %v", err)
	}
	// NO_VAL and oversized array counts fail before allocating.
	for _, cnt := range []uint32{NoVal, 0x7fffffff} {
		b := []byte{0, 0, 0, 0, 0, 0, 0, 1}
		b = append(b, byte(cnt>>24), byte(cnt>>16), byte(cnt>>8), byte(cnt))
		b = append(b, bytes.Repeat([]byte{0}, 16)...)
		r := NewReader(b)
		if err := te.Decode(&r, V22_05); CodeOf(err) != ESLURM_PROTOCOL_INCOMPLETE_PACKET {
			t.Errorf("task exit count %#x: %v", cnt, err)
		}
	}
}

func FuzzDecodeLaunchTasksResponse(f *testing.F) {
	allocSeedGolden(f, RESPONSE_LAUNCH_TASKS)
	f.Fuzz(func(t *testing.T, vb byte, body []byte) {
		jcFuzzStable[LaunchTasksResponse](t, jcFuzzVersion(vb), body, nil)
	})
}

func FuzzDecodeTaskExitMsg(f *testing.F) {
	allocSeedGolden(f, MESSAGE_TASK_EXIT)
	f.Fuzz(func(t *testing.T, vb byte, body []byte) {
		jcFuzzStable[TaskExitMsg](t, jcFuzzVersion(vb), body, nil)
	})
}

func FuzzDecodeSignalTasksRequest(f *testing.F) {
	allocSeedGolden(f, REQUEST_SIGNAL_TASKS)
	jcSeed(f, SignalTasksRequest{StepID: NoStepID, Signal: 9})
	f.Fuzz(func(t *testing.T, vb byte, body []byte) {
		jcFuzzStable[SignalTasksRequest](t, jcFuzzVersion(vb), body, nil)
	})
}

func FuzzDecodeStepCompleteRequest(f *testing.F) {
	allocSeedGolden(f, REQUEST_STEP_COMPLETE)
	jcSeed(f, StepCompleteRequest{StepID: NoStepID, JobAcct: taskJobAcct()})
	f.Fuzz(func(t *testing.T, vb byte, body []byte) {
		jcFuzzStable[StepCompleteRequest](t, jcFuzzVersion(vb), body, nil)
	})
}
