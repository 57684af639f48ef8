package codec

import "bytes"

// The job credential (slurm_cred_t): what slurmctld puts in
// RESPONSE_JOB_STEP_CREATE (and REQUEST_BATCH_JOB_LAUNCH) and srun
// forwards verbatim in REQUEST_LAUNCH_TASKS. On the wire it is a body
// immediately followed by a signature; the signature (with cred/munge a
// MUNGE credential whose payload is the body bytes) signs exactly the
// body bytes, so DecodeJobCred returns them.
//
// Body layout per protocol version (22.05: src/common/slurm_cred.c
// _pack_cred / slurm_cred_unpack; 23.02: src/interfaces/cred.c;
// 23.11+: src/plugins/cred/common/cred_common.c cred_create /
// cred_unpack, the identity from src/common/identity.c, the gres lists
// from src/interfaces/gres.c _pack_state):
//   - 22.05: step id, uid, gid, pw_name, pw_gecos, pw_dir, pw_shell,
//     gids[], gr_names[], job gres, step gres, job_core_spec,
//     job_account, job_alias_list, job_comment, job_constraints,
//     job_partition, job_reservation, job_restart_cnt, job_std_err/in/out,
//     step_hostlist, x11, ctime, tot_core_cnt, job/step core bitmaps,
//     core_array_size (+3 arrays), cpu_array_count (+2 arrays),
//     job_nhosts, job_ntasks, job_hostlist, job mem alloc (+2 arrays),
//     step mem alloc (+2 arrays), selinux_context. Signature: packmem.
//   - 23.02: + job_end_time, job_extra, job_oversubscribe after
//     job_constraints, + job_start_time after job_restart_cnt, +
//     job_licenses after job_hostlist; the switch step info may hide
//     behind job_partition's NUL (see PartitionSwitch), also in the
//     22.05-format credentials a 23.02 controller packs.
//   - 23.11, 24.05: + job_node_addrs after job_account; the signature is
//     a packstr.
//   - 24.11-25.11: the switch step info moves to the end of the body as a
//     length-prefixed blob (see SwitchStep); job_partition is plain.
//   - 26.05: + job_exclusive before job_oversubscribe, + job_qos after
//     job_partition.
//
// The step id carries the sluid from 24.11 on (JobStepID).

// SlurmAuthNobody (99) is refused as a credential's uid or gid: 23.02+
// unpack_identity / slurm_cred_unpack refuse it and slurmd rejects it;
// we refuse it in every version.

// GresMagic starts every gres state record (GRES_MAGIC).
const GresMagic uint32 = 0x438a34d4

// Address families of WireAddr.Family.
const (
	AFUnspec uint16 = 0
	AFInet   uint16 = 2
	AFInet6  uint16 = 10
)

// WireAddr is a slurm_addr_t as slurm_pack_addr sends it: u16 family,
// then for AF_INET u32 address + u16 port, for AF_INET6 a 16-byte blob +
// u16 port, for anything else nothing. IPv4 and Port are kept as packed:
// Slurm packs the already network-ordered sockaddr fields with the
// big-endian packers, so between little-endian hosts the octets and the
// port bytes appear reversed (as Header.AddrIPv4/AddrPort).
type WireAddr struct {
	Family uint16
	IPv4   uint32
	IPv6   [16]byte
	Port   uint16
}

func readWireAddr(r *Reader) WireAddr {
	var a WireAddr
	a.Family = r.U16()
	switch a.Family {
	case AFInet:
		a.IPv4 = r.U32()
		a.Port = r.U16()
	case AFInet6:
		b := r.Mem()
		if r.Err == nil && len(b) != 16 {
			r.fail(Errorf(ESLURM_PROTOCOL_INCOMPLETE_PACKET, "IPv6 address of %d bytes", len(b)))
		}
		copy(a.IPv6[:], b)
		a.Port = r.U16()
	}
	if r.Err != nil {
		return WireAddr{}
	}
	return a
}

func writeWireAddr(w *Writer, a WireAddr) {
	w.U16(a.Family)
	switch a.Family {
	case AFInet:
		w.U32(a.IPv4)
		w.U16(a.Port)
	case AFInet6:
		w.Mem(a.IPv6[:])
		w.U16(a.Port)
	}
}

// JobCred is the decoded body of a job credential plus its signature.
// Fields a version does not carry are zero. Arrays whose wire form is
// "count, then arrays of that count" (core, cpu and memory arrays) must
// have equal lengths within each group.
type JobCred struct {
	StepID JobStepID // job id, assigned step id, het comp

	// Identity (pack_identity): the job's user.
	UID        uint32 // never 99
	GID        uint32 // never 99
	UserName   string
	Gecos      string
	Dir        string
	Shell      string
	GIDs       []uint32 // supplementary groups
	GroupNames []string // nil or one per GIDs entry (checked)

	// JobGres and StepGres are the job and step gres lists exactly as
	// packed (u16 record count, then the records), validated record by
	// record; nil is the empty list (count 0).
	JobGres  []byte
	StepGres []byte

	JobCoreSpec      uint16 // NO_VAL16 = none
	JobAccount       string
	JobNodeAddrs     []WireAddr // 23.11+: per-host addresses (nil = count 0)
	JobAliasList     string     // 22.05-23.02 meaningful ("name:addr:host,...")
	JobComment       string
	JobConstraints   string
	JobEndTime       int64  // 23.02+
	JobExtra         string // 23.02+
	JobExclusive     uint16 // 26.05+
	JobOversubscribe uint16 // 23.02+
	JobPartition     string
	// PartitionSwitch is the switch step info 23.02-24.05 senders hide
	// after the first NUL of job_partition (plugin id + data, as packed;
	// a 23.02 controller does so in 22.05 credentials too); nil when the
	// partition string carries nothing hidden. Up to 24.05 only.
	PartitionSwitch []byte
	JobQOS          string // 26.05+
	JobReservation  string
	JobRestartCnt   uint16
	JobStartTime    int64 // 23.02+
	JobStdErr       string
	JobStdIn        string
	JobStdOut       string
	StepHostlist    string // the step's nodes; slurmd checks it holds its own name
	JobX11          uint16
	CTime           int64 // creation time; slurmd rejects it after cred_expire (120 s)

	TotCoreCnt     uint32   // bits in JobCoreBitmap (0 when none)
	JobCoreBitmap  *HexBits // nil = NULL
	StepCoreBitmap *HexBits

	// core_array_size entries each (checked).
	CoresPerSocket   []uint16
	SocketsPerNode   []uint16
	SockCoreRepCount []uint32
	// cpu_array_count entries each (checked).
	CPUArray     []uint16
	CPUArrayReps []uint32

	JobNHosts   uint32
	JobNTasks   uint32
	JobHostlist string
	JobLicenses string // 23.02+

	JobMemAlloc      []uint64 // MB per host group; same length as JobMemAllocReps
	JobMemAllocReps  []uint32
	StepMemAlloc     []uint64
	StepMemAllocReps []uint32

	SelinuxContext string
	// SwitchStep is the 24.11+ switch step info after its u32 length
	// (plugin id + data); nil = length 0 (no SwitchType).
	SwitchStep []byte

	// Signature follows the body: a MUNGE credential ("MUNGE:...:")
	// with cred/munge, "fake signature" with cred/none. srun uses it as
	// the I/O key.
	Signature string
	// SigNoNUL: 22.05/23.02 pack the signature with packmem; set when
	// those bytes did not end in a NUL (Signature then holds them all).
	SigNoNUL bool

	// EmptyStrs has bit i set when the i-th string of the body in wire
	// order (for this version) was sent as a non-NULL "" rather than
	// NULL; bit 63 is the signature.
	EmptyStrs uint64
}

// stRd reads packstr strings, numbering them in wire order and noting
// which were non-NULL "" (so encoders can give them back unchanged).
type stRd struct {
	r     *Reader
	empty uint64
	n     uint
}

func (s *stRd) str() string {
	b, null := s.r.StrNull()
	if !null && len(b) == 0 {
		s.empty |= 1 << s.n
	}
	s.n++
	return string(b)
}

// stWr is the writing side of stRd.
type stWr struct {
	w     *Writer
	empty uint64
	n     uint
}

func (s *stWr) str(v string) {
	if v == "" && s.empty&(1<<s.n) != 0 {
		s.w.StrEmpty()
	} else {
		s.w.Str(v)
	}
	s.n++
}

// stBytes copies b (nil for empty input).
func stBytes(b []byte) []byte {
	if len(b) == 0 {
		return nil
	}
	return append([]byte(nil), b...)
}

func stBadf(r *Reader, format string, args ...any) {
	if r.Err == nil {
		r.fail(Errorf(ESLURM_PROTOCOL_INCOMPLETE_PACKET, format, args...))
	}
}

// stSkipBitmaps skips n pack_bit_str_hex bitmaps.
func stSkipBitmaps(r *Reader, n uint32) {
	for i := uint32(0); i < n && r.Err == nil; i++ {
		r.Bitstr()
	}
}

// stSkipPerBit skips n (u8 flag, [u64 array]) entries.
func stSkipPerBit(r *Reader, n uint32) {
	for i := uint32(0); i < n && r.Err == nil; i++ {
		if r.U8() != 0 {
			k := readCount(r, 8)
			r.take(8 * k)
		}
	}
}

// readGresList validates a packed gres list (job records, or step
// records with step set) and returns its bytes, count included, copied;
// nil for the empty list.
func readGresList(r *Reader, version uint16, step bool) []byte {
	start := r.Off
	cnt := r.U16()
	if r.Err != nil || cnt == 0 {
		return nil
	}
	for i := uint16(0); i < cnt && r.Err == nil; i++ {
		if m := r.U32(); r.Err == nil && m != GresMagic {
			stBadf(r, "gres record magic %#x", m)
			break
		}
		r.U32()       // plugin_id
		r.U16()       // cpus_per_gres
		r.U16()       // flags
		r.take(8 * 5) // per job|step, node, socket, task; mem_per_gres
		if !step {
			r.U16() // ntasks_per_gres
		}
		r.U64() // total_gres
		if !step || version >= V24_05 {
			r.Str() // type_name
		}
		nodes := r.U32()
		if r.Err == nil && nodes > NoVal {
			stBadf(r, "gres node_cnt %#x", nodes)
		}
		if step {
			r.Bitstr() // node_in_use
		}
		if r.U8() != 0 { // gres_cnt_node_alloc
			n := readCount(r, 8)
			r.take(8 * n)
		}
		if r.U8() != 0 { // gres_bit_alloc
			stSkipBitmaps(r, nodes)
		}
		if version >= V23_11 {
			stSkipPerBit(r, nodes) // gres_per_bit_alloc
		}
		if step {
			continue
		}
		if r.U8() != 0 { // gres_bit_step_alloc
			stSkipBitmaps(r, nodes)
		}
		if r.U8() != 0 { // gres_cnt_step_alloc
			if uint64(nodes)*8 > uint64(r.Remaining()) {
				stBadf(r, "gres node_cnt %d", nodes)
			}
			r.take(8 * int(nodes))
		}
		if version >= V23_11 {
			stSkipPerBit(r, nodes) // gres_per_bit_step_alloc
		}
	}
	if r.Err != nil {
		return nil
	}
	return stBytes(r.B[start:r.Off])
}

func writeGresList(w *Writer, raw []byte) {
	if len(raw) == 0 {
		w.U16(0)
		return
	}
	w.B = append(w.B, raw...)
}

// DecodeJobCred reads a whole credential (body then signature) packed at
// version. body is the exact body bytes, the part the signature signs: a
// view into r.B, valid while that buffer is. A uid or gid of 99
// (SLURM_AUTH_NOBODY) is refused.
func DecodeJobCred(r *Reader, version uint16) (c JobCred, body []byte, err error) {
	start := r.Off
	c.decodeBody(r, version)
	end := r.Off
	if version >= V23_11 {
		b, null := r.StrNull()
		if !null && len(b) == 0 {
			c.EmptyStrs |= 1 << 63
		}
		c.Signature = string(b)
	} else {
		b := r.Mem()
		if n := len(b); n > 0 && b[n-1] == 0 {
			b = b[:n-1]
			if n == 1 {
				c.EmptyStrs |= 1 << 63
			}
		} else if n > 0 {
			c.SigNoNUL = true
		}
		c.Signature = string(b)
	}
	if r.Err != nil {
		return JobCred{}, nil, r.Err
	}
	return c, r.B[start:end], nil
}

func (c *JobCred) decodeBody(r *Reader, version uint16) {
	*c = JobCred{}
	s := stRd{r: r}
	c.StepID.Decode(r, version)
	c.UID = r.U32()
	if r.Err == nil && c.UID == SlurmAuthNobody {
		stBadf(r, "job credential for user nobody (uid %d)", c.UID)
	}
	c.GID = r.U32()
	if r.Err == nil && c.GID == SlurmAuthNobody {
		stBadf(r, "job credential for group nobody (gid %d)", c.GID)
	}
	c.UserName = s.str()
	c.Gecos = s.str()
	c.Dir = s.str()
	c.Shell = s.str()
	c.GIDs = readU32s(r)
	c.GroupNames = jcStrArray(r, false)
	if r.Err == nil && len(c.GroupNames) != 0 && len(c.GroupNames) != len(c.GIDs) {
		stBadf(r, "job credential: %d group names for %d gids", len(c.GroupNames), len(c.GIDs))
	}
	c.JobGres = readGresList(r, version, false)
	c.StepGres = readGresList(r, version, true)
	c.JobCoreSpec = r.U16()
	c.JobAccount = s.str()
	if version >= V23_11 {
		n := readCount(r, 2)
		if n > 0 {
			c.JobNodeAddrs = make([]WireAddr, n)
			for i := range c.JobNodeAddrs {
				c.JobNodeAddrs[i] = readWireAddr(r)
				if r.Err != nil {
					break
				}
			}
		}
	}
	c.JobAliasList = s.str()
	c.JobComment = s.str()
	c.JobConstraints = s.str()
	if version >= V23_02 {
		c.JobEndTime = r.Time()
		c.JobExtra = s.str()
		if version >= V26_05 {
			c.JobExclusive = r.U16()
		}
		c.JobOversubscribe = r.U16()
	}
	if version < V24_11 {
		// The partition may carry the switch info behind its NUL.
		b, null := r.StrNull()
		if i := bytes.IndexByte(b, 0); i >= 0 {
			c.JobPartition = string(b[:i])
			c.PartitionSwitch = append(make([]byte, 0, len(b)-i-1), b[i+1:]...)
		} else {
			if !null && len(b) == 0 {
				s.empty |= 1 << s.n
			}
			c.JobPartition = string(b)
		}
		s.n++
	} else {
		c.JobPartition = s.str()
	}
	if version >= V26_05 {
		c.JobQOS = s.str()
	}
	c.JobReservation = s.str()
	c.JobRestartCnt = r.U16()
	if version >= V23_02 {
		c.JobStartTime = r.Time()
	}
	c.JobStdErr = s.str()
	c.JobStdIn = s.str()
	c.JobStdOut = s.str()
	c.StepHostlist = s.str()
	c.JobX11 = r.U16()
	c.CTime = r.Time()
	c.TotCoreCnt = r.U32()
	c.JobCoreBitmap = readHexBits(r)
	c.StepCoreBitmap = readHexBits(r)
	if n := r.U16(); n != 0 && r.Err == nil {
		c.CoresPerSocket = readU16s(r)
		c.SocketsPerNode = readU16s(r)
		c.SockCoreRepCount = readU32s(r)
		if r.Err == nil && (len(c.CoresPerSocket) != int(n) || len(c.SocketsPerNode) != int(n) || len(c.SockCoreRepCount) != int(n)) {
			stBadf(r, "job credential core arrays %d/%d/%d for %d", len(c.CoresPerSocket), len(c.SocketsPerNode), len(c.SockCoreRepCount), n)
		}
	}
	if n := r.U32(); n != 0 && r.Err == nil {
		c.CPUArray = readU16s(r)
		c.CPUArrayReps = readU32s(r)
		if r.Err == nil && (uint32(len(c.CPUArray)) != n || uint32(len(c.CPUArrayReps)) != n) {
			stBadf(r, "job credential cpu arrays %d/%d for %d", len(c.CPUArray), len(c.CPUArrayReps), n)
		}
	}
	c.JobNHosts = r.U32()
	c.JobNTasks = r.U32()
	c.JobHostlist = s.str()
	if version >= V23_02 {
		c.JobLicenses = s.str()
	}
	c.JobMemAlloc, c.JobMemAllocReps = readMemAlloc(r, "job")
	c.StepMemAlloc, c.StepMemAllocReps = readMemAlloc(r, "step")
	c.SelinuxContext = s.str()
	if version >= V24_11 {
		c.SwitchStep = stBytes(r.Mem())
	}
	c.EmptyStrs = s.empty
	if r.Err != nil {
		*c = JobCred{}
	}
}

func readMemAlloc(r *Reader, what string) ([]uint64, []uint32) {
	n := r.U32()
	if n == 0 || r.Err != nil {
		return nil, nil
	}
	vals := readU64s(r)
	reps := readU32s(r)
	if r.Err == nil && (uint32(len(vals)) != n || uint32(len(reps)) != n) {
		stBadf(r, "job credential %s memory arrays %d/%d for %d", what, len(vals), len(reps), n)
	}
	return vals, reps
}

// EncodeBody writes the credential body (what the signature signs) in
// version.
func (c *JobCred) EncodeBody(w *Writer, version uint16) {
	s := stWr{w: w, empty: c.EmptyStrs}
	c.StepID.Encode(w, version)
	w.U32(c.UID)
	w.U32(c.GID)
	s.str(c.UserName)
	s.str(c.Gecos)
	s.str(c.Dir)
	s.str(c.Shell)
	w.U32Array(c.GIDs)
	jcPutStrArray(w, c.GroupNames)
	writeGresList(w, c.JobGres)
	writeGresList(w, c.StepGres)
	w.U16(c.JobCoreSpec)
	s.str(c.JobAccount)
	if version >= V23_11 {
		w.U32(uint32(len(c.JobNodeAddrs)))
		for _, a := range c.JobNodeAddrs {
			writeWireAddr(w, a)
		}
	}
	s.str(c.JobAliasList)
	s.str(c.JobComment)
	s.str(c.JobConstraints)
	if version >= V23_02 {
		w.Time(c.JobEndTime)
		s.str(c.JobExtra)
		if version >= V26_05 {
			w.U16(c.JobExclusive)
		}
		w.U16(c.JobOversubscribe)
	}
	if version < V24_11 && c.PartitionSwitch != nil {
		w.U32(uint32(len(c.JobPartition) + 1 + len(c.PartitionSwitch) + 1))
		w.B = append(w.B, c.JobPartition...)
		w.B = append(w.B, 0)
		w.B = append(w.B, c.PartitionSwitch...)
		w.B = append(w.B, 0)
		s.n++
	} else {
		s.str(c.JobPartition)
	}
	if version >= V26_05 {
		s.str(c.JobQOS)
	}
	s.str(c.JobReservation)
	w.U16(c.JobRestartCnt)
	if version >= V23_02 {
		w.Time(c.JobStartTime)
	}
	s.str(c.JobStdErr)
	s.str(c.JobStdIn)
	s.str(c.JobStdOut)
	s.str(c.StepHostlist)
	w.U16(c.JobX11)
	w.Time(c.CTime)
	w.U32(c.TotCoreCnt)
	writeHexBits(w, c.JobCoreBitmap)
	writeHexBits(w, c.StepCoreBitmap)
	w.U16(uint16(len(c.CoresPerSocket)))
	if len(c.CoresPerSocket) != 0 {
		w.U16Array(c.CoresPerSocket)
		w.U16Array(c.SocketsPerNode)
		w.U32Array(c.SockCoreRepCount)
	}
	w.U32(uint32(len(c.CPUArray)))
	if len(c.CPUArray) != 0 {
		w.U16Array(c.CPUArray)
		w.U32Array(c.CPUArrayReps)
	}
	w.U32(c.JobNHosts)
	w.U32(c.JobNTasks)
	s.str(c.JobHostlist)
	if version >= V23_02 {
		s.str(c.JobLicenses)
	}
	w.U32(uint32(len(c.JobMemAlloc)))
	if len(c.JobMemAlloc) != 0 {
		w.U64Array(c.JobMemAlloc)
		w.U32Array(c.JobMemAllocReps)
	}
	w.U32(uint32(len(c.StepMemAlloc)))
	if len(c.StepMemAlloc) != 0 {
		w.U64Array(c.StepMemAlloc)
		w.U32Array(c.StepMemAllocReps)
	}
	s.str(c.SelinuxContext)
	if version >= V24_11 {
		w.Mem(c.SwitchStep)
	}
}

// encodeSignature writes the signature as version packs it.
func (c *JobCred) encodeSignature(w *Writer, version uint16) {
	switch {
	case c.Signature == "" && c.EmptyStrs&(1<<63) != 0:
		w.StrEmpty()
	case version < V23_11 && c.SigNoNUL:
		w.Mem([]byte(c.Signature))
	default:
		w.Str(c.Signature)
	}
}

// AppendJobCred appends the complete wire credential (body then
// signature) packed at version.
func AppendJobCred(dst []byte, c *JobCred, version uint16) []byte {
	w := Writer{B: dst}
	c.EncodeBody(&w, version)
	c.encodeSignature(&w, version)
	return w.B
}

// readCredRaw decodes a credential at version and returns it with a
// copy of its wire bytes; body is the signed prefix of raw.
func readCredRaw(r *Reader, version uint16) (c JobCred, raw, body []byte) {
	start := r.Off
	c, b, err := DecodeJobCred(r, version)
	if err != nil {
		return JobCred{}, nil, nil
	}
	raw = append([]byte(nil), r.B[start:r.Off]...)
	return c, raw, raw[:len(b)]
}
