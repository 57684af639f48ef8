package codec

import (
	"bytes"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/lablup/slurm-frontend/codec/capture"
	"github.com/lablup/slurm-frontend/codec/fuzzcheck"
)

// ioFrame is one I/O frame: its header and payload (a view).
type ioFrame struct {
	IOHeader
	Data []byte
}

// ioParseFrames splits a stream of I/O frames; it fails on a bad header
// or a cut frame.
func ioParseFrames(t testing.TB, what string, b []byte) []ioFrame {
	t.Helper()
	var out []ioFrame
	for len(b) > 0 {
		h, err := DecodeIOHeader(b)
		if err != nil {
			t.Fatalf("%s: frame %d: %v", what, len(out), err)
		}
		end := IOHeaderLen + int(h.Length)
		if end > len(b) {
			t.Fatalf("%s: frame %d cut: %d of %d bytes", what, len(out), len(b), end)
		}
		out = append(out, ioFrame{h, b[IOHeaderLen:end]})
		b = b[end:]
	}
	return out
}

// ioStream is one slurmstepd → srun I/O connection of a capture.
type ioStream struct {
	conn    capture.Conn
	init    IOInitMsg
	initLen int
	out     []ioFrame // stepd → srun (stdout, stderr, EOFs)
	in      []ioFrame // srun → stepd (stdin)
}

// ioStreams finds the I/O connections of a capture: those whose client
// (slurmstepd) starts with an I/O init message.
func ioStreams(t testing.TB, rel string) []ioStream {
	t.Helper()
	var out []ioStream
	for _, c := range allocConns(t, rel) {
		m, n, err := DecodeIOInitMsg(c.ClientData)
		if err != nil {
			continue
		}
		out = append(out, ioStream{
			conn: c, init: m, initLen: n,
			out: ioParseFrames(t, rel+" stepd", c.ClientData[n:]),
			in:  ioParseFrames(t, rel+" srun", c.ServerData),
		})
	}
	return out
}

// ioText joins the payloads of frames of type typ from task gtask (-1:
// any task).
func ioText(frames []ioFrame, typ uint16, gtask int) string {
	var b strings.Builder
	for _, f := range frames {
		if f.Type == typ && (gtask < 0 || int(f.GTaskID) == gtask) {
			b.Write(f.Data)
		}
	}
	return b.String()
}

// ioEOFs counts the 0-length frames of type typ.
func ioEOFs(frames []ioFrame, typ uint16) int {
	n := 0
	for _, f := range frames {
		if f.Type == typ && f.Length == 0 {
			n++
		}
	}
	return n
}

// ioExpect is what each kind of run printed (allocRuns has the rest).
var ioExpect = map[string]struct {
	stdout []string // per global task
	stderr string   // substring of task 0's stderr
	stdin  string   // what srun forwarded
}{
	"srun-n2-hostname":       {stdout: []string{"vm\n", "vm\n"}},
	"srun-exit5":             {stdout: []string{""}},
	"salloc-srun":            {stdout: []string{"inner\n", "inner\n"}},
	"srun-l-n2-echo":         {stdout: []string{"x\n", "x\n"}}, // srun adds the "0: " labels itself
	"srun-stdin-cat":         {stdout: []string{"hello-stdin\n"}, stdin: "hello-stdin\n"},
	"sbatch-with-srun-steps": {stdout: []string{"task-0 step-0\n", "task-1 step-0\n"}},
	"step-show-cancel":       {stdout: []string{""}, stderr: "*** STEP 16.0 ON n1 CANCELLED AT "},
}

// ioKind is the run kind of a capture ("srun-exit5" for
// "slurm-24.11-steps/srun-exit5-24.11.pcap").
func ioKind(rel string) string {
	base := strings.TrimSuffix(filepath.Base(rel), ".pcap")
	return base[:strings.LastIndex(base, "-")]
}

func TestIOStreamGolden(t *testing.T) {
	seen := map[uint16]int{}
	for _, c := range allocRuns {
		streams := ioStreams(t, c.rel)
		if len(streams) != 1 {
			t.Fatalf("%s: %d I/O connections", c.rel, len(streams))
		}
		s := streams[0]
		m := s.init
		launch := allocFrames(t, c.rel, REQUEST_LAUNCH_TASKS)
		created := allocFrames(t, c.rel, RESPONSE_JOB_STEP_CREATE)
		if len(launch) != 1 || len(created) != 1 {
			t.Fatalf("%s: %d launches, %d step creations", c.rel, len(launch), len(created))
		}
		v := launch[0].Version
		seen[v]++

		// The init message: srun's version, node 0 of the step, one
		// stdout and stderr object per task (with --pty one stdout
		// only), and the job credential's signature as the key.
		pty := ioKind(c.rel) == "srun-pty-resize"
		wantOut, wantErr := uint32(c.ntasks), uint32(c.ntasks)
		if pty {
			wantOut, wantErr = 1, 0
		}
		if m.Version != v || m.NodeID != 0 || m.StdoutObjs != wantOut || m.StderrObjs != wantErr {
			t.Errorf("%s: init %+v", c.rel, IOInitMsg{Version: m.Version, NodeID: m.NodeID, StdoutObjs: m.StdoutObjs, StderrObjs: m.StderrObjs})
		}
		if !bytes.HasPrefix(m.IOKey, []byte("MUNGE:")) || !bytes.HasSuffix(m.IOKey, []byte(":")) {
			t.Errorf("%s: io key %.20q", c.rel, m.IOKey)
		}
		if !bytes.Contains(created[0].Body, m.IOKey) || !bytes.Contains(launch[0].Body, m.IOKey) {
			t.Errorf("%s: io key is not the credential's signature", c.rel)
		}

		// Re-encoding gives the captured bytes, both directions.
		b := AppendIOInitMsg(nil, &m)
		for _, f := range s.out {
			b = AppendIOHeader(b, f.IOHeader)
			b = append(b, f.Data...)
		}
		jcRequireSameBytes(t, c.rel+" stepd stream", b, s.conn.ClientData)
		b = nil
		for _, f := range s.in {
			b = AppendIOHeader(b, f.IOHeader)
			b = append(b, f.Data...)
		}
		jcRequireSameBytes(t, c.rel+" srun stream", b, s.conn.ServerData)

		// Every cut of the init message is "need more bytes".
		for n := 0; n < s.initLen; n++ {
			if _, used, err := DecodeIOInitMsg(s.conn.ClientData[:n]); err != ErrShort || used != 0 {
				t.Fatalf("%s: init cut at %d: %v, %d", c.rel, n, err, used)
			}
		}

		for _, f := range s.out {
			if f.Type != IOStdout && f.Type != IOStderr || f.Length > IOMaxPayload || int(f.GTaskID) >= c.ntasks || f.LTaskID != f.GTaskID {
				t.Errorf("%s: stepd frame %+v", c.rel, f.IOHeader)
			}
		}
		for _, f := range s.in {
			if f.Type != IOAllStdin || f.GTaskID != IOAnyTask || f.LTaskID != IOAnyTask {
				t.Errorf("%s: srun frame %+v", c.rel, f.IOHeader)
			}
		}
		// A finished step sent every EOF it announced.
		if c.status != NoVal {
			if ioEOFs(s.out, IOStdout) != int(m.StdoutObjs) || ioEOFs(s.out, IOStderr) != int(m.StderrObjs) {
				t.Errorf("%s: %d/%d EOFs for %d/%d objects", c.rel, ioEOFs(s.out, IOStdout), ioEOFs(s.out, IOStderr), m.StdoutObjs, m.StderrObjs)
			}
		}

		if pty {
			ioCheckPty(t, c.rel, c.status, s, launch[0])
			continue
		}
		want, ok := ioExpect[ioKind(c.rel)]
		if !ok {
			t.Fatalf("%s: no expectation", c.rel)
		}
		for task, text := range want.stdout {
			if got := ioText(s.out, IOStdout, task); got != text {
				t.Errorf("%s: task %d stdout %q, want %q", c.rel, task, got, text)
			}
		}
		if got := ioText(s.out, IOStderr, 0); !strings.Contains(got, want.stderr) || (want.stderr == "" && got != "") {
			t.Errorf("%s: stderr %q", c.rel, got)
		}
		if got := ioText(s.in, IOAllStdin, -1); got != want.stdin {
			t.Errorf("%s: stdin %q, want %q", c.rel, got, want.stdin)
		}
		// srun closes the tasks' stdin with an ALLSTDIN EOF (not seen
		// in the exit5 runs, which end first).
		if n := ioEOFs(s.in, IOAllStdin); n > 1 || (n == 0 && ioKind(c.rel) != "srun-exit5") {
			t.Errorf("%s: %d stdin EOFs", c.rel, n)
		}
	}
	allocSeenVersions(t, "task I/O", seen)
}

// ioEnvInt finds NAME=<decimal> in a launch body (the task environment).
func ioEnvInt(t *testing.T, rel string, body []byte, name string) int {
	t.Helper()
	i := bytes.Index(body, []byte(name+"="))
	if i < 0 {
		t.Fatalf("%s: no %s in the launch environment", rel, name)
	}
	rest := body[i+len(name)+1:]
	j := bytes.IndexByte(rest, 0)
	n, err := strconv.Atoi(string(rest[:j]))
	if err != nil {
		t.Fatalf("%s: %s=%q", rel, name, rest[:j])
	}
	return n
}

// ioCheckPty checks a `srun --pty bash` run under a 120x40 tmux that was
// resized to 100x30: the initial size in the launch environment, the one
// window-size record on the pty channel, the shell seeing both sizes,
// the keystrokes as ALLSTDIN (Ctrl-C as a 0x03 byte) and exit 3.
func ioCheckPty(t *testing.T, rel string, status uint32, s ioStream, launch Frame) {
	t.Helper()
	if cols, rows := ioEnvInt(t, rel, launch.Body, "SLURM_PTY_WIN_COL"), ioEnvInt(t, rel, launch.Body, "SLURM_PTY_WIN_ROW"); cols != 120 || rows != 40 {
		t.Errorf("%s: initial window %dx%d", rel, cols, rows)
	}
	port := ioEnvInt(t, rel, launch.Body, "SLURM_PTY_PORT")
	var winch []byte
	found := false
	for _, c := range allocConns(t, rel) {
		if int(c.ServerPort) == port {
			winch, found = c.ServerData, true
			if len(c.ClientData) != 0 {
				t.Errorf("%s: stepd wrote %d bytes on the pty channel", rel, len(c.ClientData))
			}
		}
	}
	if !found {
		t.Fatalf("%s: no connection to the pty port %d", rel, port)
	}
	if len(winch) != WinsizeLen {
		t.Fatalf("%s: pty channel %x", rel, winch)
	}
	cols, rows, err := DecodeWinsize(winch)
	if err != nil || cols != 100 || rows != 30 {
		t.Errorf("%s: window size %dx%d (%v)", rel, cols, rows, err)
	}
	jcRequireSameBytes(t, rel+" winsize", AppendWinsize(nil, cols, rows), winch)

	out := ioText(s.out, IOStdout, 0)
	i, j := strings.Index(out, "40 120\r\n"), strings.Index(out, "30 100\r\n")
	if i < 0 || j < i {
		t.Errorf("%s: stty size output %q", rel, out)
	}
	if ioText(s.out, IOStderr, -1) != "" {
		t.Errorf("%s: stderr on a pty", rel)
	}
	in := ioText(s.in, IOAllStdin, -1)
	if !strings.HasPrefix(in, "stty size\rstty size\rsleep 100\r\x03") || !strings.HasSuffix(in, "exit 3\r") {
		t.Errorf("%s: keystrokes %q", rel, in)
	}
	if status != NoVal && !strings.HasSuffix(out, "exit\r\n") {
		t.Errorf("%s: output ends %q", rel, out[max(0, len(out)-20):])
	}
	if strings.Contains(rel, "22.05") && !strings.Contains(out, "ALIVE\r\n") {
		t.Errorf("%s: no ALIVE after Ctrl-C", rel)
	}
}

func TestIOInitMsgRoundTrip(t *testing.T) {
	key := []byte("MUNGE:AwQFAAB=:")
	for _, v := range Versions {
		for _, m := range []IOInitMsg{
			{Version: v, NodeID: 3, StdoutObjs: 2, StderrObjs: 2, IOKey: key},
			{Version: v, NodeID: 0, StdoutObjs: 1, StderrObjs: 0, IOKey: nil}, // NULL key
		} {
			b := AppendIOInitMsg([]byte("x"), &m)[1:]
			want := 4 + ioInitFixed
			if len(m.IOKey) > 0 {
				want += len(m.IOKey) + 1
			}
			if len(b) != want {
				t.Errorf("%s: %d bytes, want %d", VersionName(v), len(b), want)
			}
			// The frames that follow are not part of it.
			got, n, err := DecodeIOInitMsg(append(b, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0))
			if err != nil || n != len(b) || got.Version != m.Version || got.NodeID != m.NodeID || got.StdoutObjs != m.StdoutObjs ||
				got.StderrObjs != m.StderrObjs || !bytes.Equal(got.IOKey, m.IOKey) {
				t.Errorf("%s: %+v, %d, %v", VersionName(v), got, n, err)
			}
			for k := 0; k < len(b); k++ {
				if _, _, err := DecodeIOInitMsg(b[:k]); err != ErrShort {
					t.Fatalf("%s: %d of %d bytes: %v", VersionName(v), k, len(b), err)
				}
			}
		}
	}
	// Pin the layout.
	b := AppendIOInitMsg(nil, &IOInitMsg{Version: V24_11, NodeID: 1, StdoutObjs: 2, StderrObjs: 3, IOKey: []byte("k")})
	jcRequireSameBytes(t, "init", b, []byte{0, 0, 0, 20, 0x2a, 0, 0, 0, 0, 1, 0, 0, 0, 2, 0, 0, 0, 3, 0, 0, 0, 2, 'k', 0})
	if n := testing.AllocsPerRun(100, func() { DecodeIOInitMsg(b) }); n != 0 {
		t.Errorf("DecodeIOInitMsg allocates %v times", n)
	}
}

func TestIOInitMsgRefuses(t *testing.T) {
	good := AppendIOInitMsg(nil, &IOInitMsg{Version: V22_05, IOKey: []byte("sig")})
	set := func(off int, v ...byte) []byte {
		b := append([]byte(nil), good...)
		copy(b[off:], v)
		return b
	}
	for _, c := range []struct {
		name string
		b    []byte
		code uint32
	}{
		{"legacy 0xb001 header", append([]byte{0xb0, 0x01}, good[2:]...), SLURM_PROTOCOL_VERSION_ERROR},
		{"legacy version inside", set(4, 0xb0, 0x01), SLURM_PROTOCOL_VERSION_ERROR},
		{"21.08", set(4, 0x25, 0), SLURM_PROTOCOL_VERSION_ERROR},
		{"key without NUL", set(len(good)-1, 'x'), ESLURM_PROTOCOL_INCOMPLETE_PACKET},
		{"trailing byte", append(set(3, good[3]+1), 0), ESLURM_PROTOCOL_INCOMPLETE_PACKET},
		{"key past the length", set(3, good[3]-1), ESLURM_PROTOCOL_INCOMPLETE_PACKET},
		{"huge length", set(0, 0x7f, 0xff, 0xff, 0xff), SLURM_PROTOCOL_INSANE_MSG_LENGTH},
	} {
		if _, n, err := DecodeIOInitMsg(c.b); CodeOf(err) != c.code || n != 0 {
			t.Errorf("%s: %v (%d bytes)", c.name, err, n)
		}
	}
}

func TestIOHeader(t *testing.T) {
	h := IOHeader{Type: IOStderr, GTaskID: 7, LTaskID: 1, Length: 1024}
	b := AppendIOHeader(nil, h)
	jcRequireSameBytes(t, "header", b, []byte{0, 2, 0, 7, 0, 1, 0, 0, 4, 0})
	if len(b) != IOHeaderLen {
		t.Fatalf("%d bytes", len(b))
	}
	if got, err := DecodeIOHeader(append(b, 'x')); err != nil || got != h {
		t.Errorf("%+v %v", got, err)
	}
	for n := 0; n < IOHeaderLen; n++ {
		if _, err := DecodeIOHeader(b[:n]); err != ErrShort {
			t.Errorf("%d bytes: %v", n, err)
		}
	}
	if _, err := DecodeIOHeader([]byte{0, 5, 0, 0, 0, 0, 0, 0, 0, 0}); err == nil {
		t.Error("type 5 accepted")
	}
	if _, err := DecodeIOHeader([]byte{0, 1, 0, 0, 0, 0, 0, 0, 4, 1}); err == nil {
		t.Error("1025-byte frame accepted")
	}

	// Output is split at IOMaxPayload.
	data := bytes.Repeat([]byte("0123456789"), 250)
	frames := ioParseFrames(t, "split", AppendIOData(nil, IOStdout, 1, 0, data))
	if len(frames) != 3 || frames[0].Length != 1024 || frames[1].Length != 1024 || frames[2].Length != 452 || ioText(frames, IOStdout, 1) != string(data) {
		t.Errorf("split into %d frames", len(frames))
	}
	if b := AppendIOData(nil, IOStdout, 0, 0, nil); len(b) != 0 {
		t.Errorf("empty data gave %x", b)
	}
}

func TestWinsize(t *testing.T) {
	b := AppendWinsize(nil, 120, 40)
	jcRequireSameBytes(t, "winsize", b, []byte{0, 120, 0, 40})
	if c, r, err := DecodeWinsize(b); c != 120 || r != 40 || err != nil {
		t.Errorf("%d %d %v", c, r, err)
	}
	for n := 0; n < WinsizeLen; n++ {
		if _, _, err := DecodeWinsize(b[:n]); err != ErrShort {
			t.Errorf("%d bytes: %v", n, err)
		}
	}
}

// ioSeedStreams adds the captured stepd streams as fuzz seeds.
func ioSeedStreams(f *testing.F, add func(b []byte)) {
	for _, c := range allocRuns {
		for _, s := range ioStreams(f, c.rel) {
			add(s.conn.ClientData)
			add(s.conn.ServerData)
		}
	}
}

func FuzzDecodeIOInitMsg(f *testing.F) {
	ioSeedStreams(f, func(b []byte) { f.Add(b) })
	f.Fuzz(func(t *testing.T, b []byte) {
		var m IOInitMsg
		var n int
		var err error
		fuzzcheck.AllocBound(t, "DecodeIOInitMsg", len(b), func() { m, n, err = DecodeIOInitMsg(b) })
		if err != nil {
			if _, ok := err.(*Error); !ok || n != 0 {
				t.Fatalf("error %T %v, %d bytes", err, err, n)
			}
			return
		}
		if n < 4+ioInitFixed || n > len(b) {
			t.Fatalf("used %d of %d bytes", n, len(b))
		}
		enc := AppendIOInitMsg(nil, &m)
		m2, n2, err := DecodeIOInitMsg(enc)
		if err != nil || n2 != len(enc) || m2.Version != m.Version || m2.NodeID != m.NodeID ||
			m2.StdoutObjs != m.StdoutObjs || m2.StderrObjs != m.StderrObjs || !bytes.Equal(m2.IOKey, m.IOKey) {
			t.Fatalf("re-decode: %+v %d %v", m2, n2, err)
		}
		if !bytes.Equal(AppendIOInitMsg(nil, &m2), enc) {
			t.Fatal("encoding not stable")
		}
	})
}

func FuzzDecodeIOHeader(f *testing.F) {
	ioSeedStreams(f, func(b []byte) {
		if _, n, err := DecodeIOInitMsg(b); err == nil {
			b = b[n:]
		}
		f.Add(b)
	})
	f.Fuzz(func(t *testing.T, b []byte) {
		// Walk the stream as srun/slurmstepd would.
		for len(b) > 0 {
			h, err := DecodeIOHeader(b)
			if err != nil {
				if _, ok := err.(*Error); !ok {
					t.Fatalf("error %T", err)
				}
				return
			}
			if h.Type > IOConnectionTest || h.Length > IOMaxPayload {
				t.Fatalf("accepted %+v", h)
			}
			if enc := AppendIOHeader(nil, h); !bytes.Equal(enc, b[:IOHeaderLen]) {
				t.Fatalf("re-encoded %x, had %x", enc, b[:IOHeaderLen])
			}
			end := IOHeaderLen + int(h.Length)
			if end > len(b) {
				return
			}
			b = b[end:]
		}
	})
}

func FuzzDecodeWinsize(f *testing.F) {
	f.Add([]byte{0, 100, 0, 30})
	f.Fuzz(func(t *testing.T, b []byte) {
		c, r, err := DecodeWinsize(b)
		if err != nil {
			if len(b) >= WinsizeLen {
				t.Fatalf("%x: %v", b, err)
			}
			return
		}
		if !bytes.Equal(AppendWinsize(nil, c, r), b[:WinsizeLen]) {
			t.Fatalf("%x: %d x %d", b, c, r)
		}
	})
}
