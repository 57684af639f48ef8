package codec

import "encoding/binary"

// The task I/O protocol between slurmstepd and srun, and the --pty
// window-size channel: raw TCP streams, not Slurm messages (no header,
// no auth). Sources: src/common/io_hdr.[ch], src/api/step_io.c,
// src/slurmd/slurmstepd/io.c, src/srun/srun_pty.c.
//
// I/O connection (slurmstepd connects to srun's io_port[nodeid %
// num_io_port], one connection per node):
//
//	stepd → srun, once:  IOInitMsg (u32 length of the rest, u16 version,
//	                     u32 nodeid, u32 stdout_objs, u32 stderr_objs,
//	                     u32 key length + key bytes with a NUL)
//	both ways, then:     IOHeader (10 bytes) + Length payload bytes
//
// stdout/stderr frames from the stepd carry at most IOMaxPayload bytes
// (srun reads into a fixed 1024+10+1-byte buffer without checking); a
// Length of 0 is an EOF marker, one per advertised stdout/stderr object.
// srun sends ALLSTDIN frames with both task ids 0xffff (STDIN with the
// target's GTaskID and LTaskID 0xffff for --input=N), a 0-length one at
// the end of its stdin, and, after SRUN_STEP_MISSING, CONNECTION_TEST
// frames (0 length, task ids 0) that the stepd answers in kind.
//
// --pty: the stepd of task 0 connects to srun's SLURM_PTY_PORT; srun
// writes a Winsize record (u16 cols, u16 rows) on every SIGWINCH (the
// initial size travels in the launch environment as SLURM_PTY_WIN_COL
// and SLURM_PTY_WIN_ROW).

// Types of IOHeader.Type (io_hdr_type_t).
const (
	IOStdin          uint16 = 0 // srun → stepd: to one task (GTaskID)
	IOStdout         uint16 = 1 // stepd → srun
	IOStderr         uint16 = 2 // stepd → srun
	IOAllStdin       uint16 = 3 // srun → stepd: to every task
	IOConnectionTest uint16 = 4 // srun → stepd, echoed back
)

// IOAnyTask is the task id srun puts in its ALLSTDIN frames (0xffff).
const IOAnyTask uint16 = 0xffff

// IOHeaderLen is the size of an IOHeader (IO_HDR_PACKET_BYTES; it is
// unversioned).
const IOHeaderLen = 10

// IOMaxPayload is SLURM_IO_MAX_MSG_LEN: never put more in one frame.
const IOMaxPayload = 1024

// IOHeader is io_hdr_t: u16 type, u16 gtaskid (global task id), u16
// ltaskid (task index on the node), u32 length of the payload that
// follows (0 = EOF of that stream).
type IOHeader struct {
	Type    uint16
	GTaskID uint16
	LTaskID uint16
	Length  uint32
}

// AppendIOHeader appends the 10-byte header h.
func AppendIOHeader(dst []byte, h IOHeader) []byte {
	dst = binary.BigEndian.AppendUint16(dst, h.Type)
	dst = binary.BigEndian.AppendUint16(dst, h.GTaskID)
	dst = binary.BigEndian.AppendUint16(dst, h.LTaskID)
	return binary.BigEndian.AppendUint32(dst, h.Length)
}

// DecodeIOHeader decodes the header at the start of b (IOHeaderLen bytes
// used). It fails with ErrShort when b holds less, and refuses a type
// outside IOStdin..IOConnectionTest (as 23.11+ do) or a Length over
// IOMaxPayload (which neither side sends; slurmstepd refuses it).
func DecodeIOHeader(b []byte) (IOHeader, error) {
	if len(b) < IOHeaderLen {
		return IOHeader{}, ErrShort
	}
	h := IOHeader{
		Type:    binary.BigEndian.Uint16(b),
		GTaskID: binary.BigEndian.Uint16(b[2:]),
		LTaskID: binary.BigEndian.Uint16(b[4:]),
		Length:  binary.BigEndian.Uint32(b[6:]),
	}
	if h.Type > IOConnectionTest {
		return IOHeader{}, Errorf(ESLURM_PROTOCOL_INCOMPLETE_PACKET, "I/O header type %d", h.Type)
	}
	if h.Length > IOMaxPayload {
		return IOHeader{}, Errorf(ESLURM_PROTOCOL_INCOMPLETE_PACKET, "I/O frame of %d bytes (max %d)", h.Length, IOMaxPayload)
	}
	return h, nil
}

// AppendIOData appends data as frames of type typ for the given task,
// IOMaxPayload bytes at most each. Empty data appends nothing (an EOF is
// a header with Length 0: AppendIOHeader).
func AppendIOData(dst []byte, typ, gtaskid, ltaskid uint16, data []byte) []byte {
	for len(data) > 0 {
		n := min(len(data), IOMaxPayload)
		dst = AppendIOHeader(dst, IOHeader{Type: typ, GTaskID: gtaskid, LTaskID: ltaskid, Length: uint32(n)})
		dst = append(dst, data[:n]...)
		data = data[n:]
	}
	return dst
}

// IOInitMsg is io_init_msg_t, the first thing slurmstepd writes on an I/O
// connection. srun checks that Version is one it speaks, that NodeID is a
// node of the step, and that IOKey is exactly the job credential's
// signature, and then expects StdoutObjs and StderrObjs EOF frames
// (normally one each per task on the node; with --pty 1 and 0 on task 0's
// node, 0 and 0 elsewhere).
//
// Framing (every version 22.05-26.05; 22.05's stepd sends its own
// version, 23.02+ srun's): u32 length of what follows, u16 version, u32
// nodeid, u32 stdout_objs, u32 stderr_objs, u32 key length, the key and
// a NUL (22.05/23.02 packmem the signature with its NUL, 23.11+ packstr
// it: the same bytes). The legacy header version 0xb001 (no length
// prefix) is refused, as 22.05+ srun refuse it.
type IOInitMsg struct {
	Version    uint16
	NodeID     uint32
	StdoutObjs uint32
	StderrObjs uint32
	IOKey      []byte // the signature without its NUL; decoded as a view into the input
}

const (
	ioInitFixed  = 2 + 4 + 4 + 4 + 4 // version, nodeid, two counts, key length
	ioInitMaxLen = 64 << 10          // signatures are a few hundred bytes
	ioLegacyVer  = 0xb001            // IO_PROTOCOL_VERSION, pre-21.08
)

var errIOInitCut = &Error{Code: ESLURM_PROTOCOL_INCOMPLETE_PACKET, Msg: "I/O init message shorter than its fields"}

// AppendIOInitMsg appends m with its length prefix.
func AppendIOInitMsg(dst []byte, m *IOInitMsg) []byte {
	n := ioInitFixed
	if len(m.IOKey) > 0 {
		n += len(m.IOKey) + 1
	}
	dst = binary.BigEndian.AppendUint32(dst, uint32(n))
	dst = binary.BigEndian.AppendUint16(dst, m.Version)
	dst = binary.BigEndian.AppendUint32(dst, m.NodeID)
	dst = binary.BigEndian.AppendUint32(dst, m.StdoutObjs)
	dst = binary.BigEndian.AppendUint32(dst, m.StderrObjs)
	if len(m.IOKey) == 0 {
		return binary.BigEndian.AppendUint32(dst, 0)
	}
	dst = binary.BigEndian.AppendUint32(dst, uint32(len(m.IOKey)+1))
	dst = append(dst, m.IOKey...)
	return append(dst, 0)
}

// DecodeIOInitMsg decodes the init message at the start of b and returns
// it with the number of bytes it took (length prefix included); the I/O
// frames follow. ErrShort means b does not yet hold the whole message
// (read more); other errors are final.
// It allocates nothing (IOKey aliases b).
func DecodeIOInitMsg(b []byte) (IOInitMsg, int, error) {
	if len(b) < 4 {
		return IOInitMsg{}, 0, ErrShort
	}
	if binary.BigEndian.Uint16(b) == ioLegacyVer {
		return IOInitMsg{}, 0, Errorf(SLURM_PROTOCOL_VERSION_ERROR, "legacy I/O init header (version %#x)", ioLegacyVer)
	}
	n := binary.BigEndian.Uint32(b)
	if n > ioInitMaxLen {
		return IOInitMsg{}, 0, ErrTooLarge
	}
	if uint64(len(b)-4) < uint64(n) {
		return IOInitMsg{}, 0, ErrShort
	}
	r := NewReader(b[4 : 4+n])
	var m IOInitMsg
	m.Version = r.U16()
	if r.Err == nil && (m.Version == ioLegacyVer || !SupportedVersion(m.Version)) {
		return IOInitMsg{}, 0, ErrVersion
	}
	m.NodeID = r.U32()
	m.StdoutObjs = r.U32()
	m.StderrObjs = r.U32()
	key := r.Mem()
	if r.Err == nil && len(key) > 0 {
		if key[len(key)-1] != 0 {
			r.fail(ErrNoNUL)
		} else {
			m.IOKey = key[:len(key)-1]
		}
	}
	if r.Err == ErrShort {
		// Cut inside its own length: malformed, not "read more".
		return IOInitMsg{}, 0, errIOInitCut
	}
	if err := allocEnd(&r); err != nil {
		return IOInitMsg{}, 0, err
	}
	return m, 4 + int(n), nil
}

// WinsizeLen is the size of a --pty window-size record.
const WinsizeLen = 4

// AppendWinsize appends a --pty window-size record: u16 columns, u16
// rows, network byte order.
func AppendWinsize(dst []byte, cols, rows uint16) []byte {
	dst = binary.BigEndian.AppendUint16(dst, cols)
	return binary.BigEndian.AppendUint16(dst, rows)
}

// DecodeWinsize decodes the window-size record at the start of b
// (WinsizeLen bytes used).
func DecodeWinsize(b []byte) (cols, rows uint16, err error) {
	if len(b) < WinsizeLen {
		return 0, 0, ErrShort
	}
	return binary.BigEndian.Uint16(b), binary.BigEndian.Uint16(b[2:]), nil
}
