package codec

import (
	"encoding/binary"
	"fmt"
	"reflect"
	"testing"
)

// The node administration captures of testdata/node-admin (see its
// README): each release's scontrol against a real slurmctld of the same
// release.
var nodeAdminReleases = []struct {
	rel     string
	version uint16
}{{"22.05", V22_05}, {"24.11", V24_11}, {"26.05", V26_05}}

func TestUpdateNodeGolden(t *testing.T) {
	for _, rel := range nodeAdminReleases {
		for _, c := range []struct {
			name  string
			names string
			state uint32
			rsn   string
		}{
			{"drain", "n1", NODE_STATE_DRAIN, "disk replacement"},
			{"resume", "n1", NODE_RESUME, ""},
			{"down", "n[2-3]", NODE_STATE_DOWN, "maint"},
			{"undrain", "n[2-3]", NODE_STATE_UNDRAIN, ""},
		} {
			file := fmt.Sprintf("node-admin/scontrol-update-node-%s-%s.pcap", c.name, rel.rel)
			frames := goldenFrames(t, file, REQUEST_UPDATE_NODE)
			if len(frames) != 1 || frames[0].Version != rel.version {
				t.Fatalf("%s: %d update requests", file, len(frames))
			}
			f := frames[0]
			var m UpdateNodeRequest
			r := NewReader(f.Body)
			if err := m.Decode(&r, f.Version); err != nil {
				t.Fatalf("%s: %v", file, err)
			}
			// What slurm_init_update_node_msg leaves in every field
			// scontrol did not set (22.05's reason_uid: 0, memset).
			want := UpdateNodeRequest{NodeNames: c.names, NodeState: c.state, Reason: c.rsn, Weight: NoVal}
			if rel.version >= V23_02 {
				want.ResumeAfter = NoVal
			}
			if !reflect.DeepEqual(m, want) {
				t.Errorf("%s:\n got  %+v\n want %+v", file, m, want)
			}
			if len(m.Changes()) != 0 || m.ReasonGiven() != (c.rsn != "") {
				t.Errorf("%s: changes %v, reason given %v", file, m.Changes(), m.ReasonGiven())
			}
			var w Writer
			m.Encode(&w, f.Version)
			jcRequireSameBytes(t, file, w.B, f.Body)
			// The real controllers had no slurmd: their nodes were
			// UNKNOWN, which 22.05 and 24.11 refuse to resume
			// (_valid_node_state_change), 26.05 does not.
			rc := uint32(0)
			if c.name == "resume" && rel.version < V26_05 {
				rc = ESLURM_INVALID_NODE_STATE
			}
			requireRCReplies(t, file, rc)
		}
	}
}

// requireRCReplies checks that every RESPONSE_SLURM_RC of a capture
// says rc.
func requireRCReplies(t *testing.T, file string, rc uint32) {
	t.Helper()
	for _, f := range goldenFrames(t, file, RESPONSE_SLURM_RC) {
		if len(f.Body) != 4 || binary.BigEndian.Uint32(f.Body) != rc {
			t.Errorf("%s: reply % x, want rc %d", file, f.Body, rc)
		}
	}
}

func TestShutdownReconfigureGolden(t *testing.T) {
	for _, rel := range nodeAdminReleases {
		for _, c := range []struct {
			file string
			opt  uint16
		}{{"scontrol-shutdown", SLURMCTLD_SHUTDOWN_ALL}, {"scontrol-shutdown-slurmctld", SLURMCTLD_SHUTDOWN_CTLD}} {
			file := fmt.Sprintf("node-admin/%s-%s.pcap", c.file, rel.rel)
			frames := goldenFrames(t, file, REQUEST_SHUTDOWN)
			if len(frames) != 1 {
				t.Fatalf("%s: %d shutdown requests", file, len(frames))
			}
			var m ShutdownRequest
			r := NewReader(frames[0].Body)
			if err := m.Decode(&r, frames[0].Version); err != nil || m.Options != c.opt {
				t.Fatalf("%s: %+v %v, want options %d", file, m, err, c.opt)
			}
			var w Writer
			m.Encode(&w, frames[0].Version)
			jcRequireSameBytes(t, file, w.B, frames[0].Body)
			requireRCReplies(t, file, 0)
		}
		file := fmt.Sprintf("node-admin/scontrol-reconfigure-%s.pcap", rel.rel)
		frames := goldenFrames(t, file, REQUEST_RECONFIGURE)
		if len(frames) != 1 || len(frames[0].Body) != 0 {
			t.Fatalf("%s: %d reconfigure requests, want one with an empty body", file, len(frames))
		}
		requireRCReplies(t, file, 0)
	}
}

func TestUpdateNodeRoundTrip(t *testing.T) {
	full := UpdateNodeRequest{
		CertToken: "tok", Comment: "c", CPUBind: 4, Extra: "{}", Features: "f", FeaturesAct: "fa", Gres: "gpu:1",
		InstanceID: "i-1", InstanceType: "t", NodeAddr: "a", NodeHostname: "h", NodeNames: "n[1-2]",
		NodeState: NODE_STATE_DRAIN, PowerActionName: "p", Reason: "r", ReasonUID: 7, ResumeAfter: 60,
		TopologyStr: "topo", Weight: 3,
	}
	for _, v := range Versions {
		in := full
		if v < V24_11 {
			in.CertToken = ""
		}
		if v < V23_11 {
			in.InstanceID, in.InstanceType = "", ""
		}
		if v < V26_05 {
			in.PowerActionName = ""
		}
		if v < V25_05 {
			in.TopologyStr = ""
		}
		if v >= V23_02 {
			in.ReasonUID = 0
		} else {
			in.ResumeAfter = 0
		}
		jcRoundTrip(t, "update node", v, in)
		// An empty string is not a NULL one: Comment= clears the comment.
		cleared := UpdateNodeRequest{NodeNames: "n1", NodeState: NoVal, Weight: NoVal, EmptyStrs: 1 << unComment}
		b := jcRoundTrip(t, "update node empty", v, cleared)
		if cleared.Changes()[0] != "Comment" || len(b) == 0 {
			t.Fatalf("%s: %v", VersionName(v), cleared.Changes())
		}
		jcRoundTrip(t, "shutdown", v, ShutdownRequest{Options: SLURMCTLD_SHUTDOWN_CTLD})
	}
}

func FuzzDecodeUpdateNodeRequest(f *testing.F) {
	jcSeed(f, UpdateNodeRequest{NodeNames: "n[1-3]", NodeState: NODE_STATE_DRAIN, Reason: "x", Weight: NoVal, ResumeAfter: NoVal})
	f.Fuzz(func(t *testing.T, vb byte, body []byte) {
		jcFuzzStable[UpdateNodeRequest](t, jcFuzzVersion(vb), body, nil)
	})
}

func FuzzDecodeShutdownRequest(f *testing.F) {
	jcSeed(f, ShutdownRequest{Options: SLURMCTLD_SHUTDOWN_CTLD})
	f.Fuzz(func(t *testing.T, vb byte, body []byte) {
		jcFuzzStable[ShutdownRequest](t, jcFuzzVersion(vb), body, nil)
	})
}
