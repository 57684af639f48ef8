package codec

import "encoding/binary"

// Composite wire pieces shared by the job and job-step info messages:
// bitmaps, step ids, multi-core data, job_resources and a zero-copy u32
// array view.

// HexBits is a bitmap as pack_bit_str_hex sends it: the bit count and
// the "0x…" text (upper-case hex, most significant nibble first, the last
// digit holding bits 0-3). A nil *HexBits is the NULL bitmap (u32 NO_VAL
// alone). Bit positions of node bitmaps index the node table of
// RESPONSE_NODE_INFO.
type HexBits struct {
	NBits uint32
	Hex   string
}

// NewHexBits returns an nbits-wide bitmap with the listed bits set.
func NewHexBits(nbits int, set ...int) *HexBits {
	m := make(map[int]bool, len(set))
	for _, i := range set {
		m[i] = true
	}
	return &HexBits{NBits: uint32(nbits), Hex: string(BitHex(nil, nbits, func(i int) bool { return m[i] }))}
}

// IsSet reports whether bit i is set (false for a malformed text).
func (b *HexBits) IsSet(i int) bool {
	if b == nil || i < 0 || uint32(i) >= b.NBits || len(b.Hex) < 3 {
		return false
	}
	digits := b.Hex[2:]
	p := len(digits) - 1 - i/4
	if p < 0 {
		return false
	}
	c := digits[p]
	var v byte
	switch {
	case c >= '0' && c <= '9':
		v = c - '0'
	case c >= 'A' && c <= 'F':
		v = c - 'A' + 10
	case c >= 'a' && c <= 'f':
		v = c - 'a' + 10
	default:
		return false
	}
	return v&(1<<(i%4)) != 0
}

func readHexBits(r *Reader) *HexBits {
	n, hex, null := r.Bitstr()
	if null || r.Err != nil {
		return nil
	}
	return &HexBits{NBits: n, Hex: string(hex)}
}

func writeHexBits(w *Writer, b *HexBits) {
	if b == nil {
		w.BitstrNull()
		return
	}
	w.U32(b.NBits)
	w.Str(b.Hex)
}

// Special step ids (slurm/slurm.h).
const (
	SLURM_MAX_NORMAL_STEP_ID uint32 = 0xfffffff0
	SLURM_INTERACTIVE_STEP   uint32 = 0xfffffffa
	SLURM_BATCH_SCRIPT       uint32 = 0xfffffffb
	SLURM_EXTERN_CONT        uint32 = 0xfffffffc
	SLURM_PENDING_STEP       uint32 = 0xfffffffd
)

// JobStepID is slurm_step_id_t (pack_step_id). SLUID is on the wire from
// 24.11 on (0 when the peer has none); before that only the three u32.
type JobStepID struct {
	SLUID       uint64
	JobID       uint32
	StepID      uint32 // NO_VAL = all steps / none, see SLURM_BATCH_SCRIPT etc.
	StepHetComp uint32 // NO_VAL unless a het step component
}

// Decode reads a step_id in the given version.
func (s *JobStepID) Decode(r *Reader, version uint16) {
	if version >= V24_11 {
		s.SLUID = r.U64()
	} else {
		s.SLUID = 0
	}
	s.JobID = r.U32()
	s.StepID = r.U32()
	s.StepHetComp = r.U32()
}

// Encode writes a step_id in the given version.
func (s *JobStepID) Encode(w *Writer, version uint16) {
	if version >= V24_11 {
		w.U64(s.SLUID)
	}
	w.U32(s.JobID)
	w.U32(s.StepID)
	w.U32(s.StepHetComp)
}

// JobMultiCore is multi_core_data (pack_multi_core_data, unchanged
// 22.05-26.05): a u8 flag (0 = NULL, 0xff = present) then nine u16. A nil
// *JobMultiCore is the NULL form. NO_VAL16 means "not requested".
type JobMultiCore struct {
	BoardsPerNode   uint16
	SocketsPerBoard uint16
	SocketsPerNode  uint16
	CoresPerSocket  uint16
	ThreadsPerCore  uint16
	NTasksPerBoard  uint16
	NTasksPerSocket uint16
	NTasksPerCore   uint16
	PlaneSize       uint16
}

func readJobMultiCore(r *Reader) *JobMultiCore {
	switch flag := r.U8(); {
	case r.Err != nil || flag == 0:
		return nil
	case flag != 0xff:
		r.fail(Errorf(ESLURM_PROTOCOL_INCOMPLETE_PACKET, "multi_core_data flag %#x", flag))
		return nil
	}
	mc := &JobMultiCore{}
	mc.BoardsPerNode = r.U16()
	mc.SocketsPerBoard = r.U16()
	mc.SocketsPerNode = r.U16()
	mc.CoresPerSocket = r.U16()
	mc.ThreadsPerCore = r.U16()
	mc.NTasksPerBoard = r.U16()
	mc.NTasksPerSocket = r.U16()
	mc.NTasksPerCore = r.U16()
	mc.PlaneSize = r.U16()
	if r.Err != nil {
		return nil
	}
	return mc
}

func writeJobMultiCore(w *Writer, mc *JobMultiCore) {
	if mc == nil {
		w.U8(0)
		return
	}
	w.U8(0xff)
	w.U16(mc.BoardsPerNode)
	w.U16(mc.SocketsPerBoard)
	w.U16(mc.SocketsPerNode)
	w.U16(mc.CoresPerSocket)
	w.U16(mc.ThreadsPerCore)
	w.U16(mc.NTasksPerBoard)
	w.U16(mc.NTasksPerSocket)
	w.U16(mc.NTasksPerCore)
	w.U16(mc.PlaneSize)
}

// JobResources is job_resources_t as pack_job_resources sends it (only
// with SHOW_DETAIL; a nil *JobResources is the NULL form, u32 NO_VAL).
// Arrays are run-length style: CPUArrayValue[i] repeated CPUArrayReps[i]
// times gives per-host CPU counts; SocketsPerNode/CoresPerSocket repeat
// SockCoreRepCount[i] hosts each. CoreBitmap has one bit per allocated
// core across the job's nodes.
type JobResources struct {
	NHosts           uint32 // number of allocated nodes; never NO_VAL
	NCPUs            uint32
	NextStepNodeInx  uint32 // 24.11+
	NodeReq          uint32 // node sharing requested (NODE_CR_*)
	Nodes            string // hostlist of allocated nodes
	WholeNode        uint8
	ThreadsPerCore   uint16
	CRType           uint16
	CPUArrayReps     []uint32
	CPUArrayValue    []uint16 // same count as CPUArrayReps (checked)
	CPUs             []uint16 // NHosts entries (checked)
	CPUsUsed         []uint16
	MemoryAllocated  []uint64 // MB per host
	MemoryUsed       []uint64
	SocketsPerNode   []uint16
	CoresPerSocket   []uint16
	SockCoreRepCount []uint32
	CoreBitmap       *HexBits
	CoreBitmapUsed   *HexBits
	NodeBitmap       *HexBits // 24.05-25.11 only (26.05 rebuilds it locally)
	NodeRanks        []uint32 // 26.05+: 0 or NHosts entries (checked)
}

func readJobResources(r *Reader, version uint16) *JobResources {
	nhosts := r.U32()
	if r.Err != nil || nhosts == NoVal {
		return nil
	}
	jr := &JobResources{NHosts: nhosts}
	jr.NCPUs = r.U32()
	if version >= V24_11 {
		jr.NextStepNodeInx = r.U32()
	}
	jr.NodeReq = r.U32()
	jr.Nodes = r.String()
	jr.WholeNode = r.U8()
	jr.ThreadsPerCore = r.U16()
	jr.CRType = r.U16()
	jr.CPUArrayReps = r.U32Array()
	jr.CPUArrayValue = r.U16Array()
	if r.Err == nil && len(jr.CPUArrayValue) != len(jr.CPUArrayReps) {
		r.fail(Errorf(ESLURM_PROTOCOL_INCOMPLETE_PACKET, "job_resources cpu_array counts %d/%d", len(jr.CPUArrayReps), len(jr.CPUArrayValue)))
	}
	jr.CPUs = r.U16Array()
	if r.Err == nil && uint32(len(jr.CPUs)) != nhosts {
		r.fail(Errorf(ESLURM_PROTOCOL_INCOMPLETE_PACKET, "job_resources %d cpus for %d hosts", len(jr.CPUs), nhosts))
	}
	jr.CPUsUsed = r.U16Array()
	jr.MemoryAllocated = r.U64Array()
	jr.MemoryUsed = r.U64Array()
	jr.SocketsPerNode = r.U16Array()
	jr.CoresPerSocket = r.U16Array()
	jr.SockCoreRepCount = r.U32Array()
	jr.CoreBitmap = readHexBits(r)
	jr.CoreBitmapUsed = readHexBits(r)
	if version >= V24_05 && version < V26_05 {
		jr.NodeBitmap = readHexBits(r)
	}
	if version >= V26_05 {
		jr.NodeRanks = r.U32Array()
		if r.Err == nil && len(jr.NodeRanks) != 0 && uint32(len(jr.NodeRanks)) != nhosts {
			r.fail(Errorf(ESLURM_PROTOCOL_INCOMPLETE_PACKET, "job_resources %d node_ranks for %d hosts", len(jr.NodeRanks), nhosts))
		}
	}
	if r.Err != nil {
		return nil
	}
	return jr
}

func writeJobResources(w *Writer, jr *JobResources, version uint16) {
	if jr == nil {
		w.U32(NoVal)
		return
	}
	w.U32(jr.NHosts)
	w.U32(jr.NCPUs)
	if version >= V24_11 {
		w.U32(jr.NextStepNodeInx)
	}
	w.U32(jr.NodeReq)
	w.Str(jr.Nodes)
	w.U8(jr.WholeNode)
	w.U16(jr.ThreadsPerCore)
	w.U16(jr.CRType)
	w.U32Array(jr.CPUArrayReps)
	w.U16Array(jr.CPUArrayValue)
	w.U16Array(jr.CPUs)
	w.U16Array(jr.CPUsUsed)
	w.U64Array(jr.MemoryAllocated)
	w.U64Array(jr.MemoryUsed)
	w.U16Array(jr.SocketsPerNode)
	w.U16Array(jr.CoresPerSocket)
	w.U32Array(jr.SockCoreRepCount)
	writeHexBits(w, jr.CoreBitmap)
	writeHexBits(w, jr.CoreBitmapUsed)
	if version >= V24_05 && version < V26_05 {
		writeHexBits(w, jr.NodeBitmap)
	}
	if version >= V26_05 {
		w.U32Array(jr.NodeRanks)
	}
}

// U32View is a counted array of big-endian u32 left in the request
// buffer (no copy, no allocation). It is valid while that buffer is.
type U32View struct {
	b []byte
}

// Len is the number of elements.
func (v U32View) Len() int { return len(v.b) / 4 }

// At returns element i (panics when out of range, like a slice).
func (v U32View) At(i int) uint32 { return binary.BigEndian.Uint32(v.b[i*4 : i*4+4]) }

// CopyTo copies up to len(dst) elements into dst and returns how many.
func (v U32View) CopyTo(dst []uint32) int {
	n := min(len(dst), v.Len())
	for i := 0; i < n; i++ {
		dst[i] = v.At(i)
	}
	return n
}

// U32ViewOf packs ids into a new view (for encoders and tests).
func U32ViewOf(ids ...uint32) U32View {
	b := make([]byte, 0, 4*len(ids))
	for _, id := range ids {
		b = binary.BigEndian.AppendUint32(b, id)
	}
	return U32View{b: b}
}

// readU32View reads a u32 count (NO_VAL = NULL list) and the elements as
// a view. It allocates nothing.
func readU32View(r *Reader) (v U32View, null bool) {
	n, null := r.Count(4)
	if null || r.Err != nil {
		return U32View{}, true
	}
	return U32View{b: r.take(int(n) * 4)}, false
}
