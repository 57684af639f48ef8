package codec

import (
	"bytes"
	"encoding/binary"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/lablup/slurm-frontend/codec/capture"
)

// Every controller-side frame in the captures decodes, and re-encoding
// the reply frames (header + optional credential + body) gives the same
// bytes.
func TestFrameRoundTripCaptures(t *testing.T) {
	frames := goldenFrames(t, "slurm-24.11/scontrol-ping-24.11.pcap", RESPONSE_SLURM_RC)
	for _, f := range frames {
		got := AppendFrame(nil, f.Version, f.MsgType, nil, f.Body)
		want := AppendRC(nil, V24_11, nil, 0)
		if !bytes.Equal(got, want) {
			t.Fatalf("rc frame mismatch\n got %x\nwant %x", got, want)
		}
	}
	for _, rel := range []string{"slurm-22.05/scontrol-ping-22.05.pcap", "slurm-26.05/scontrol-ping-26.05.pcap"} {
		for _, f := range goldenFrames(t, rel, RESPONSE_SLURM_RC) {
			var cred []byte
			if f.Flags&FlagNoAuthCred == 0 {
				cred = f.Cred
			}
			got := AppendRC(nil, f.Version, cred, 0)
			var g Frame
			if err := DecodeFrame(got, &g); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(g.Header, f.Header) || !bytes.Equal(g.Cred, f.Cred) || !bytes.Equal(g.Body, f.Body) {
				t.Fatalf("%s: re-encoded frame differs: %+v vs %+v", rel, g.Header, f.Header)
			}
		}
	}
}

// slurmd's forwarding: a request whose header names nodes to pass it on
// to (each release's layout), and the reply that carries their answers
// in its ret list, encode and decode symmetrically; a ret entry of a type
// whose body cannot be delimited is refused.
func TestFrameForwardAndRets(t *testing.T) {
	for _, v := range []uint16{V22_05, V24_11, V26_05} {
		h := Header{Version: v, Flags: FlagNoAuthCred, MsgType: REQUEST_LAUNCH_TASKS, BodyLen: 3, Forward: 3, ForwardNodes: "n[2-4]",
			ForwardTimeout: 10000, ForwardTreeWidth: 1}
		if v >= V24_11 {
			h.ForwardTreeDepth = 2
		}
		raw := h.Append(nil)
		raw = append(binary.BigEndian.AppendUint32(nil, uint32(len(raw)+3)), raw...)
		raw = append(raw, 1, 2, 3)
		var f Frame
		if err := DecodeFrame(raw, &f); err != nil {
			t.Fatalf("%d: forward header: %v", v, err)
		}
		if !reflect.DeepEqual(f.Header, h) || !bytes.Equal(f.Body, []byte{1, 2, 3}) {
			t.Errorf("%d: forward header %+v, want %+v", v, f.Header, h)
		}

		rc := func(c uint32) []byte { return binary.BigEndian.AppendUint32(nil, c) }
		rets := []RetEntry{{MsgType: RESPONSE_SLURM_RC, NodeName: "n2", Body: rc(0)},
			{MsgType: RESPONSE_SLURM_RC, NodeName: "n3", Body: rc(ESLURM_INVALID_JOB_ID)},
			{Err: SLURM_COMMUNICATIONS_CONNECTION_ERROR, MsgType: RESPONSE_FORWARD_FAILED, NodeName: "n4", Body: []byte{}}}
		for _, cred := range [][]byte{nil, []byte("MUNGE:abc:")} {
			out := AppendFrameRets(nil, v, RESPONSE_SLURM_RC, cred, rc(0), rets)
			if err := DecodeFrame(out, &f); err != nil {
				t.Fatalf("%d: reply with rets: %v", v, err)
			}
			if f.RetCnt != 3 || !reflect.DeepEqual(f.Rets, rets) || !bytes.Equal(f.Body, rc(0)) || !bytes.Equal(f.Cred, cred) {
				t.Errorf("%d: rets %+v body %x cred %q", v, f.Rets, f.Body, f.Cred)
			}
		}
		bad := AppendFrameRets(nil, v, RESPONSE_SLURM_RC, nil, rc(0), []RetEntry{{MsgType: RESPONSE_JOB_STEP_CREATE, NodeName: "n2", Body: []byte{0, 0, 0, 0}}})
		if err := DecodeFrame(bad, &f); err == nil {
			t.Errorf("%d: a ret entry of an undelimited type decoded", v)
		}
	}
}

func TestDecodeFrameRejects(t *testing.T) {
	good := goldenFrames(t, "slurm-24.11/scontrol-ping-24.11.pcap", REQUEST_PING)[0]
	raw := AppendFrame(nil, good.Version, good.MsgType, good.Cred, good.Body)
	var f Frame
	if err := DecodeFrame(raw, &f); err != nil {
		t.Fatalf("good frame: %v", err)
	}
	bad := append([]byte(nil), raw...)
	bad[4], bad[5] = 0x25, 0x00 // 21.08
	if err := DecodeFrame(bad, &f); CodeOf(err) != SLURM_PROTOCOL_VERSION_ERROR {
		t.Fatalf("old version: got %v", err)
	}
	for n := 0; n < len(raw); n++ {
		trunc := append([]byte(nil), raw[:n]...)
		if len(trunc) >= 4 {
			trunc[0], trunc[1], trunc[2], trunc[3] = 0, 0, byte((n-4)>>8), byte(n-4)
		}
		if err := DecodeFrame(trunc, &f); err == nil {
			t.Fatalf("truncated to %d bytes decoded", n)
		}
	}
}

func FuzzDecodeFrame(f *testing.F) {
	for _, rel := range []string{"slurm-22.05/sinfo-22.05.pcap", "slurm-24.11/sbatch-24.11.pcap", "slurm-26.05/squeue-26.05.pcap"} {
		b, err := os.ReadFile(filepath.Join("testdata", rel))
		if err != nil {
			f.Fatal(err)
		}
		conns, _ := capture.Parse(b)
		for _, c := range conns {
			for _, r := range c.Requests {
				f.Add(r)
			}
		}
	}
	f.Add(AppendRC(nil, V24_11, nil, 0))
	f.Add(AppendRC(nil, V22_05, []byte("MUNGE:abc:"), 0))
	f.Fuzz(func(t *testing.T, b []byte) {
		var fr Frame
		if err := DecodeFrame(b, &fr); err != nil {
			return
		}
		// A frame that decodes re-encodes to one that decodes the same.
		var cred []byte
		if fr.Flags&FlagNoAuthCred == 0 && fr.AuthPlugin == AuthPluginMunge {
			cred = fr.Cred
		}
		if fr.AuthPlugin != AuthPluginMunge && fr.Flags&FlagNoAuthCred == 0 {
			return
		}
		out := AppendFrame(nil, fr.Version, fr.MsgType, cred, fr.Body)
		var g Frame
		if err := DecodeFrame(out, &g); err != nil {
			t.Fatalf("re-encoded frame fails: %v", err)
		}
		if g.MsgType != fr.MsgType || !bytes.Equal(g.Body, fr.Body) {
			t.Fatal("round trip changed the frame")
		}
	})
}
