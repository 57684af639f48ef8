package codec

import (
	"bytes"
	"reflect"
	"strings"
	"testing"
)

// credMsg wraps a whole credential (body + signature) as a message, for
// the generic round-trip, fuzz and allocation helpers.
type credMsg struct{ C JobCred }

func (m *credMsg) Decode(r *Reader, version uint16) error {
	c, _, err := DecodeJobCred(r, version)
	m.C = c
	if err != nil {
		return err
	}
	return jcDone(r)
}

func (m *credMsg) Encode(w *Writer, version uint16) {
	w.B = AppendJobCred(w.B, &m.C, version)
}

// credGresJob packs one job gres record for version as
// _foreach_job_state_pack does: two nodes, per-node counts, bitmaps and
// (23.11+) per-bit counts on node 0.
func credGresJob(v uint16) []byte {
	var w Writer
	w.U16(1)
	w.U32(GresMagic)
	w.U32(7696487) // gres_build_id("gpu")
	w.U16(NoVal16) // cpus_per_gres
	w.U16(0)       // flags
	for _, x := range []uint64{NoVal64, 1, NoVal64, NoVal64, NoVal64} {
		w.U64(x)
	}
	w.U16(NoVal16) // ntasks_per_gres
	w.U64(2)       // total_gres
	w.Str("a100")
	w.U32(2) // node_cnt
	w.U8(1)
	w.U64Array([]uint64{1, 1})
	w.U8(1)
	w.Bitstr(2, []byte("0x1"))
	w.Bitstr(2, []byte("0x2"))
	if v >= V23_11 {
		w.U8(1)
		w.U64Array([]uint64{1, 0})
		w.U8(0)
	}
	w.U8(1) // gres_bit_step_alloc
	w.Bitstr(2, []byte("0x1"))
	w.BitstrNull()
	w.U8(1) // gres_cnt_step_alloc
	w.U64(1)
	w.U64(0)
	if v >= V23_11 {
		w.U8(0)
		w.U8(0)
	}
	return w.B
}

// credGresStep packs one step gres record (_foreach_step_state_pack).
func credGresStep(v uint16) []byte {
	var w Writer
	w.U16(1)
	w.U32(GresMagic)
	w.U32(7696487)
	w.U16(NoVal16)
	w.U16(0)
	for _, x := range []uint64{NoVal64, 1, NoVal64, NoVal64, NoVal64, 2} {
		w.U64(x)
	}
	if v >= V24_05 {
		w.Str("a100")
	}
	w.U32(2)
	w.Bitstr(2, []byte("0x3")) // node_in_use
	w.U8(1)
	w.U64Array([]uint64{1, 1})
	w.U8(1)
	w.Bitstr(2, []byte("0x1"))
	w.Bitstr(2, []byte("0x2"))
	if v >= V23_11 {
		w.U8(1)
		w.U64Array([]uint64{1, 0})
		w.U8(1)
		w.U64Array([]uint64{0, 1})
	}
	return w.B
}

// credFilled is a credential with every field the version carries set.
func credFilled(v uint16) JobCred {
	c := JobCred{
		StepID: jcStepFor(JobStepID{SLUID: 0x77, JobID: 42, StepID: 3, StepHetComp: NoVal}, v),
		UID:    1000, GID: 1000, UserName: "alice", Gecos: "", Dir: "/home/alice", Shell: "/bin/sh",
		GIDs: []uint32{1000, 27}, GroupNames: []string{"alice", "sudo"},
		JobGres: credGresJob(v), StepGres: credGresStep(v),
		JobCoreSpec: NoVal16, JobAccount: "acct", JobAliasList: "n1:10.0.0.1:n1", JobComment: "c",
		JobConstraints: "feat", JobEndTime: 1796155804, JobExtra: "x", JobExclusive: 1, JobOversubscribe: NoVal16,
		JobPartition: "debug", JobQOS: "normal", JobReservation: "resv", JobRestartCnt: 2, JobStartTime: 1796152204,
		JobStdErr: "e", JobStdIn: "/dev/null", JobStdOut: "o", StepHostlist: "n[1-2]", JobX11: 1, CTime: 1796152333,
		TotCoreCnt: 32, JobCoreBitmap: NewHexBits(32, 0, 1, 16), StepCoreBitmap: NewHexBits(32, 0),
		CoresPerSocket: []uint16{16, 8}, SocketsPerNode: []uint16{2, 1}, SockCoreRepCount: []uint32{1, 1},
		CPUArray: []uint16{2}, CPUArrayReps: []uint32{2}, JobNHosts: 2, JobNTasks: 4, JobHostlist: "n[1-2]",
		JobLicenses: "lic:1", JobMemAlloc: []uint64{128000, 64000}, JobMemAllocReps: []uint32{1, 1},
		StepMemAlloc: []uint64{1000}, StepMemAllocReps: []uint32{2}, SelinuxContext: "ctx",
		Signature: "MUNGE:AwQF:", EmptyStrs: 1 << 1, // Gecos: a non-NULL ""
	}
	if v < V23_02 {
		c.JobEndTime, c.JobExtra, c.JobOversubscribe, c.JobStartTime, c.JobLicenses = 0, "", 0, 0, ""
	}
	if v >= V23_11 {
		c.JobNodeAddrs = []WireAddr{
			{Family: AFInet, IPv4: 0x0100007f, Port: 0x5a42},
			{Family: AFInet6, IPv6: [16]byte{15: 1}, Port: 0x5a42},
			{Family: AFUnspec},
		}
	}
	if v < V26_05 {
		c.JobExclusive, c.JobQOS = 0, ""
	}
	if v >= V24_11 {
		c.SwitchStep = []byte{0, 0, 0, 105, 0, 0, 0, 0}
	}
	return c
}

func TestJobCredRoundTripAllVersions(t *testing.T) {
	for _, v := range Versions {
		c := credFilled(v)
		b := jcRoundTrip(t, "cred", v, credMsg{c})
		// The body is everything but the signature, and EncodeBody
		// writes exactly it.
		r := NewReader(b)
		_, body, err := DecodeJobCred(&r, v)
		if err != nil {
			t.Fatal(err)
		}
		var w Writer
		c.EncodeBody(&w, v)
		if !bytes.Equal(w.B, body) || len(body) != len(b)-4-len(c.Signature)-1 {
			t.Errorf("%s: body %d bytes of %d", VersionName(v), len(body), len(b))
		}

		// Minimal credential: empty lists, NULL bitmaps, no arrays.
		jcRoundTrip(t, "cred minimal", v, credMsg{JobCred{StepID: jcStepFor(NoStepID, v), Signature: "fake signature"}})

		// A signature sent as a non-NULL "" and (22.05/23.02) one
		// packed without its NUL.
		jcRoundTrip(t, "cred empty signature", v, credMsg{JobCred{StepID: jcStepFor(NoStepID, v), EmptyStrs: 1 << 63}})
		if v < V23_11 {
			b := jcRoundTrip(t, "cred sig without NUL", v, credMsg{JobCred{StepID: jcStepFor(NoStepID, v), Signature: "-", SigNoNUL: true}})
			if !bytes.HasSuffix(b, []byte{0, 0, 0, 1, '-'}) {
				t.Errorf("%s: packmem signature %x", VersionName(v), b[len(b)-8:])
			}
		}
	}
}

// 23.02-24.05 hide the switch step info behind job_partition's NUL (a
// 23.02 controller in 22.05 credentials too).
func TestJobCredPartitionSwitch(t *testing.T) {
	for _, v := range []uint16{V22_05, V23_02, V23_11, V24_05} {
		c := credFilled(v)
		c.PartitionSwitch = []byte{0, 0, 0, 104, 9}
		b := jcRoundTrip(t, "cred hidden switch", v, credMsg{c})
		if want := []byte("\x00\x00\x00\x0cdebug\x00\x00\x00\x00\x68\x09\x00"); !bytes.Contains(b, want) {
			t.Errorf("%s: hidden switch not behind the partition", VersionName(v))
		}
		// A NULL partition with switch info travels as "".
		c.JobPartition = ""
		jcRoundTrip(t, "cred hidden switch, no partition", v, credMsg{c})
	}
}

func TestJobCredRefusals(t *testing.T) {
	for _, v := range Versions {
		for _, bad := range []func(*JobCred){
			func(c *JobCred) { c.UID = SlurmAuthNobody },
			func(c *JobCred) { c.GID = SlurmAuthNobody },
		} {
			c := credFilled(v)
			bad(&c)
			b := AppendJobCred(nil, &c, v)
			r := NewReader(b)
			if _, _, err := DecodeJobCred(&r, v); err == nil || !strings.Contains(err.Error(), "nobody") {
				t.Errorf("%s: nobody cred: %v", VersionName(v), err)
			}
		}
		for name, bad := range map[string]func(*JobCred){
			"group names": func(c *JobCred) { c.GroupNames = c.GroupNames[:1] },
			"core arrays": func(c *JobCred) { c.SocketsPerNode = c.SocketsPerNode[:1] },
			"cpu arrays":  func(c *JobCred) { c.CPUArrayReps = nil },
			"mem arrays":  func(c *JobCred) { c.StepMemAllocReps = []uint32{1, 1} },
			"gres magic":  func(c *JobCred) { c.JobGres = append([]byte{0, 1, 0, 0, 0, 0}, c.JobGres[6:]...) },
			"gres nodes": func(c *JobCred) {
				// node_cnt follows the count, magic, plugin id, two
				// u16, six u64 and (24.05+) the type name.
				g := bytes.Clone(c.StepGres)
				i := 2 + 4 + 4 + 2 + 2 + 6*8
				if v >= V24_05 {
					i += 4 + len("a100") + 1
				}
				copy(g[i:], []byte{0xff, 0xff, 0xff, 0xff})
				c.StepGres = g
			},
		} {
			c := credFilled(v)
			bad(&c)
			b := AppendJobCred(nil, &c, v)
			r := NewReader(b)
			if _, _, err := DecodeJobCred(&r, v); CodeOf(err) != ESLURM_PROTOCOL_INCOMPLETE_PACKET {
				t.Errorf("%s: %s: %v", VersionName(v), name, err)
			}
		}
	}
}

// The credentials real controllers signed: field values, exact
// re-encoding, the signed body, and that srun forwards each unchanged
// in REQUEST_LAUNCH_TASKS.
func TestJobCredGolden(t *testing.T) {
	for _, c := range stepCaptures {
		f := stepOneFrame(t, c.rel, RESPONSE_JOB_STEP_CREATE, c.version)
		var resp JobStepCreateResponse
		r := NewReader(f.Body)
		if err := resp.Decode(&r, f.Version); err != nil {
			t.Fatalf("%s: %v", c.rel, err)
		}
		cr := NewReader(resp.Cred)
		cred, body, err := DecodeJobCred(&cr, f.Version)
		if err != nil {
			t.Fatalf("%s: %v", c.rel, err)
		}
		if cred.UID != 0 || cred.GID != 0 || cred.UserName != "root" || cred.Dir != "/root" || !reflect.DeepEqual(cred.GIDs, []uint32{0}) {
			t.Errorf("%s: identity %d/%d %q %q %v", c.rel, cred.UID, cred.GID, cred.UserName, cred.Dir, cred.GIDs)
		}
		if cred.StepID.JobID != c.jobID || cred.StepID.StepID != 0 || cred.StepID.SLUID != resp.SLUID {
			t.Errorf("%s: step %+v", c.rel, cred.StepID)
		}
		if cred.StepHostlist != "n1" || cred.JobHostlist != "n1" || cred.JobNHosts != 1 || cred.JobPartition != "debug" {
			t.Errorf("%s: hosts %q %q %d partition %q", c.rel, cred.StepHostlist, cred.JobHostlist, cred.JobNHosts, cred.JobPartition)
		}
		if cred.JobStdIn != c.stdIn || cred.JobStdOut != c.stdOut {
			t.Errorf("%s: std in/out %q %q", c.rel, cred.JobStdIn, cred.JobStdOut)
		}
		if cred.JobGres != nil || cred.StepGres != nil || cred.JobCoreBitmap == nil || !cred.JobCoreBitmap.IsSet(0) ||
			len(cred.JobMemAlloc) != 1 || len(cred.CPUArray) != 1 {
			t.Errorf("%s: resources %+v", c.rel, cred)
		}
		if !strings.HasPrefix(cred.Signature, "MUNGE:") || !strings.HasSuffix(cred.Signature, ":") || cred.SigNoNUL {
			t.Errorf("%s: signature %q", c.rel, cred.Signature)
		}
		if c.version >= V23_02 && (cred.JobStartTime == 0 || cred.JobEndTime <= cred.JobStartTime || cred.CTime < cred.JobStartTime) {
			t.Errorf("%s: times start %d end %d ctime %d", c.rel, cred.JobStartTime, cred.JobEndTime, cred.CTime)
		}
		// Exact re-encoding: the body (what the MUNGE signature signs)
		// and the whole credential.
		var w Writer
		cred.EncodeBody(&w, f.Version)
		jcRequireSameBytes(t, c.rel+" cred body", w.B, body)
		jcRequireSameBytes(t, c.rel+" cred", AppendJobCred(nil, &cred, f.Version), resp.Cred)
		stepRequireTruncationsFail(t, c.rel+" cred", resp.Cred, func(r *Reader) error {
			_, _, err := DecodeJobCred(r, f.Version)
			return err
		})

		// srun forwards the same bytes to slurmd.
		lf := stepOneFrame(t, c.rel, REQUEST_LAUNCH_TASKS, c.version)
		var lm LaunchTasksRequest
		lr := NewReader(lf.Body)
		if err := lm.Decode(&lr, lf.Version); err != nil {
			t.Fatalf("%s: launch: %v", c.rel, err)
		}
		if lm.CredVersion != f.Version || !bytes.Equal(lm.CredRaw, resp.Cred) || !bytes.Equal(lm.CredBody, body) || !reflect.DeepEqual(lm.Cred, cred) {
			t.Errorf("%s: launch cred (version %#x) differs from the step-create cred", c.rel, lm.CredVersion)
		}
	}
}

func FuzzDecodeJobCred(f *testing.F) {
	for _, c := range stepCaptures {
		for _, fr := range goldenFrames(f, c.rel, RESPONSE_JOB_STEP_CREATE) {
			var m JobStepCreateResponse
			r := NewReader(fr.Body)
			if m.Decode(&r, fr.Version) == nil {
				f.Add(jcVersionIndex(fr.Version), m.Cred)
			}
		}
	}
	for _, v := range Versions {
		c := credFilled(v)
		f.Add(jcVersionIndex(v), AppendJobCred(nil, &c, v))
	}
	f.Fuzz(func(t *testing.T, vb byte, body []byte) {
		stepFuzzCheck[credMsg](t, "JobCred", vb, body)
	})
}
