package codec

import "encoding/binary"

// Header flags (src/common/slurm_protocol_common.h).
const (
	FlagGlobalAuthKey uint16 = 0x0001
	FlagKeepBuffer    uint16 = 0x0004
	FlagNoAuthCred    uint16 = 0x0040 // 23.02+: no auth section follows the header
	FlagPackAddrs     uint16 = 0x0080
)

// Auth plugin ids (enum auth_plugin_type).
const (
	AuthPluginNone  uint32 = 100
	AuthPluginMunge uint32 = 101
	AuthPluginJWT   uint32 = 102
	AuthPluginSlurm uint32 = 103
)

// MaxFrame bounds a request we accept. Slurm allows 1 GiB; a controller
// front end has no request anywhere near that (the biggest is a batch
// script), so we cut far lower to bound memory per connection.
const MaxFrame = 64 << 20

// MaxReplyFrame bounds a reply a client reads: Slurm's MAX_MSG_SIZE (a
// listing of 200,000 jobs is well over MaxFrame).
const MaxReplyFrame = 1 << 30

// Header is the fixed message header. Forwarding (srun asking the first
// node of a span to pass the message on to the rest, TreeWidth) and ret
// lists (that node's reply carrying the others' answers) are slurmd's;
// clients never send them to the controller.
type Header struct {
	Version uint16
	Flags   uint16
	MsgType uint16
	BodyLen uint32
	Forward uint16 // forward.cnt: how many nodes ForwardNodes names
	// ForwardNodes is the host list to pass the message on to; the
	// timeout, tree width and (24.11+) depth come with it.
	ForwardNodes     string
	ForwardTimeout   uint32
	ForwardTreeWidth uint16
	ForwardTreeDepth uint16
	RetCnt           uint16
	Rets             []RetEntry // RetCnt of them
	AddrFam          uint16
	AddrIPv4         uint32 // as packed (byte-swapped on x86 peers, see reference 1.4)
	AddrPort         uint16
}

// RetEntry is one node's answer in a reply's ret list (ret_data_info_t):
// the node that was asked to forward returns one for each node it
// passed the message on to.
type RetEntry struct {
	Err      uint32 // 0; else why the node was not reached (MsgType RESPONSE_FORWARD_FAILED)
	MsgType  uint16
	NodeName string
	Body     []byte // the answer's body as packed
}

// retBodyLen is the packed size of a ret entry's body of type t: only the
// answers nodes give to what srun forwards are known (their bodies are
// not self-delimiting), -1 for others.
func retBodyLen(t uint16) int {
	switch t {
	case RESPONSE_SLURM_RC:
		return 4
	case RESPONSE_FORWARD_FAILED:
		return 0
	}
	return -1
}

// Frame is one decoded message: header, auth section and body, all views
// into the frame buffer.
type Frame struct {
	Header
	AuthPlugin uint32 // 0 when FlagNoAuthCred
	Cred       []byte // MUNGE credential text without NUL ("MUNGE:...:")
	Body       []byte
}

// FrameLen returns the total length of the frame at the start of b
// (4-byte prefix included), or 0 if fewer than 4 bytes are available.
func FrameLen(b []byte) (int, error) { return frameLen(b, MaxFrame) }

// ReplyFrameLen is FrameLen for a reply, bounded by MaxReplyFrame.
func ReplyFrameLen(b []byte) (int, error) { return frameLen(b, MaxReplyFrame) }

func frameLen(b []byte, limit uint32) (int, error) {
	if len(b) < 4 {
		return 0, nil
	}
	n := binary.BigEndian.Uint32(b)
	if n > limit {
		return 0, ErrTooLarge
	}
	return int(n) + 4, nil
}

// DecodeFrame parses a whole frame (length prefix included) into f. It
// validates the version and that body_length matches exactly, as 24.11+
// receivers do.
func DecodeFrame(b []byte, f *Frame) error { return decodeFrame(b, f, false) }

func decodeFrame(b []byte, f *Frame, head bool) error {
	*f = Frame{}
	if len(b) < 4 {
		return ErrShort
	}
	n := binary.BigEndian.Uint32(b)
	if uint64(n) != uint64(len(b)-4) && !(head && uint64(n) > uint64(len(b)-4)) {
		return ErrShort
	}
	r := NewReader(b[4:])
	if err := decodeHeader(&r, &f.Header); err != nil {
		return err
	}
	if f.Flags&FlagNoAuthCred == 0 {
		f.AuthPlugin = r.U32()
		switch f.AuthPlugin {
		case AuthPluginMunge:
			f.Cred = r.Str()
		case AuthPluginSlurm:
			f.Cred = r.Str()
		case AuthPluginJWT:
			f.Cred = r.Str()
			r.Str() // username
		default:
			if r.Err == nil {
				return Errorf(ESLURM_AUTH_UNPACK, "unknown auth plugin %d", f.AuthPlugin)
			}
		}
	}
	if r.Err != nil {
		return r.Err
	}
	if uint64(f.BodyLen) != uint64(r.Remaining()) && !(head && uint64(f.BodyLen) > uint64(r.Remaining())) {
		return Errorf(ESLURM_PROTOCOL_INCOMPLETE_PACKET, "body_length %d, %d bytes left", f.BodyLen, r.Remaining())
	}
	f.Body = r.B[r.Off:]
	return nil
}

// DecodeFrameHead decodes the head of a frame: b starts a whole frame
// (its length prefix counts the whole) but may end anywhere after the
// credential; f.Body is the part of the body b holds. It is for readers
// that look only at the start of a large reply (the bench generator).
func DecodeFrameHead(b []byte, f *Frame) error { return decodeFrame(b, f, true) }

func decodeHeader(r *Reader, h *Header) error {
	h.Version = r.U16()
	if r.Err == nil && !SupportedVersion(h.Version) {
		return ErrVersion
	}
	h.Flags = r.U16()
	h.MsgType = r.U16()
	h.BodyLen = r.U32()
	h.Forward = r.U16()
	if h.Forward > 0 {
		h.ForwardNodes = string(r.Str())
		h.ForwardTimeout = r.U32()
		h.ForwardTreeWidth = r.U16()
		if h.Flags&FlagPackAddrs != 0 && h.Version >= V23_11 {
			r.Str() // net_cred
		}
		if h.Version >= V24_11 {
			h.ForwardTreeDepth = r.U16()
		}
	}
	h.RetCnt = r.U16()
	for i := 0; i < int(h.RetCnt) && r.Err == nil; i++ {
		e := RetEntry{Err: r.U32(), MsgType: r.U16(), NodeName: string(r.Str())}
		n := retBodyLen(e.MsgType)
		if n < 0 {
			// A body we cannot delimit: the rest of the frame is lost.
			return Errorf(ESLURM_PROTOCOL_INCOMPLETE_PACKET, "ret list entry of type %d", e.MsgType)
		}
		e.Body = r.take(n)
		h.Rets = append(h.Rets, e)
	}
	h.AddrFam = r.U16()
	switch h.AddrFam {
	case 2: // AF_INET
		h.AddrIPv4 = r.U32()
		h.AddrPort = r.U16()
	case 10: // AF_INET6
		r.Mem()
		h.AddrPort = r.U16()
	}
	return r.Err
}

// AppendHeader appends a header with no forwarding and an empty address.
func AppendHeader(dst []byte, version, flags, msgType uint16, bodyLen uint32) []byte {
	return appendHeader(dst, version, flags, msgType, bodyLen, nil)
}

func appendHeader(dst []byte, version, flags, msgType uint16, bodyLen uint32, rets []RetEntry) []byte {
	h := Header{Version: version, Flags: flags, MsgType: msgType, BodyLen: bodyLen, RetCnt: uint16(len(rets)), Rets: rets}
	return h.Append(dst)
}

// Append packs h as decodeHeader reads it (the address is written as
// AF_UNSPEC: replies and our own messages carry none).
func (h *Header) Append(dst []byte) []byte {
	w := Writer{B: dst}
	w.U16(h.Version)
	w.U16(h.Flags)
	w.U16(h.MsgType)
	w.U32(h.BodyLen)
	w.U16(h.Forward)
	if h.Forward > 0 {
		w.Str(h.ForwardNodes)
		w.U32(h.ForwardTimeout)
		w.U16(h.ForwardTreeWidth)
		if h.Flags&FlagPackAddrs != 0 && h.Version >= V23_11 {
			w.Str("") // net_cred
		}
		if h.Version >= V24_11 {
			w.U16(h.ForwardTreeDepth)
		}
	}
	w.U16(uint16(len(h.Rets)))
	for _, e := range h.Rets {
		w.U32(e.Err)
		w.U16(e.MsgType)
		w.Str(e.NodeName)
		w.B = append(w.B, e.Body...)
	}
	w.U16(0) // orig_addr AF_UNSPEC
	return w.B
}

// retsLen is the packed size of a ret list's entries.
func retsLen(rets []RetEntry) int {
	n := 0
	for _, e := range rets {
		n += 4 + 2 + 4 + len(e.Body)
		if e.NodeName != "" {
			n += len(e.NodeName) + 1
		}
	}
	return n
}

// HeaderLen is the size of the header AppendHeader writes.
const HeaderLen = 16

// AppendFrame appends a complete frame: length prefix, header, optional
// auth section (cred non-nil means a MUNGE section), and body. Replies to
// 23.02+ clients carry no credential and FlagNoAuthCred (plus
// FlagKeepBuffer, as slurmctld sends 0x0044).
func AppendFrame(dst []byte, version, msgType uint16, cred []byte, body []byte) []byte {
	return append(AppendFrameHead(dst, version, msgType, cred, len(body)), body...)
}

// AppendFrameRets appends a reply frame whose header carries rets: the
// answer of a node that forwarded a message, with the answers of the
// nodes it forwarded to.
func AppendFrameRets(dst []byte, version, msgType uint16, cred []byte, body []byte, rets []RetEntry) []byte {
	return append(appendFrameHead(dst, version, msgType, cred, len(body), rets), body...)
}

// AppendFrameHead appends everything of a frame before its body of
// bodyLen bytes, for a body written separately (in pieces, with writev).
func AppendFrameHead(dst []byte, version, msgType uint16, cred []byte, bodyLen int) []byte {
	return appendFrameHead(dst, version, msgType, cred, bodyLen, nil)
}

func appendFrameHead(dst []byte, version, msgType uint16, cred []byte, bodyLen int, rets []RetEntry) []byte {
	flags := uint16(0)
	authLen := 0
	if cred == nil {
		flags = FlagNoAuthCred | FlagKeepBuffer
	} else {
		authLen = 4 + 4 + len(cred) + 1
	}
	total := HeaderLen + retsLen(rets) + authLen + bodyLen
	dst = binary.BigEndian.AppendUint32(dst, uint32(total))
	dst = appendHeader(dst, version, flags, msgType, uint32(bodyLen), rets)
	if cred != nil {
		w := Writer{B: dst}
		w.U32(AuthPluginMunge)
		w.StrBytes(cred)
		dst = w.B
	}
	return dst
}

// AppendRC appends a RESPONSE_SLURM_RC frame with return code rc.
func AppendRC(dst []byte, version uint16, cred []byte, rc uint32) []byte {
	var body [4]byte
	binary.BigEndian.PutUint32(body[:], rc)
	return AppendFrame(dst, version, RESPONSE_SLURM_RC, cred, body[:])
}
