package codec

// Partition information: REQUEST_PARTITION_INFO (2009) and
// RESPONSE_PARTITION_INFO (2010).
//
// Layouts from src/common/slurm_protocol_pack.c
// (_pack_part_info_request_msg, _unpack_partition_info_msg,
// _unpack_partition_info_members) and src/slurmctld/partition_mgr.c
// (pack_all_part, pack_part) of each release tag.

// PartitionInfoRequest is REQUEST_PARTITION_INFO, identical in every
// supported version.
type PartitionInfoRequest struct {
	LastUpdate int64
	ShowFlags  uint16 // SHOW_ALL includes hidden partitions
}

// Decode reads the request. It allocates nothing.
func (m *PartitionInfoRequest) Decode(r *Reader, version uint16) error {
	m.LastUpdate = r.Time()
	m.ShowFlags = r.U16()
	return nodeInfoEnd(r)
}

// Encode writes the request.
func (m *PartitionInfoRequest) Encode(w *Writer, version uint16) {
	w.Time(m.LastUpdate)
	w.U16(m.ShowFlags)
}

// PartJobDefault is one job_defaults entry (JobDefaults=DefCpuPerGPU=…).
type PartJobDefault struct {
	Type  uint16 // JOB_DEF_*
	Value uint64
}

// PartitionInfo is one partition record, the union of every version's
// fields. "" strings are sent as NULL.
type PartitionInfo struct {
	Name             string
	CPUBind          uint32
	GraceTime        uint32 // seconds
	MaxTime          uint32 // minutes; INFINITE = UNLIMITED
	DefaultTime      uint32 // minutes; NO_VAL = NONE
	MaxNodes         uint32 // configured value (INFINITE = UNLIMITED)
	MinNodes         uint32
	TotalNodes       uint32
	TotalCPUs        uint32
	DefMemPerCPU     uint64 // MB, MEM_PER_CPU bit = per CPU; 0 = unlimited
	MaxCPUsPerNode   uint32 // INFINITE = UNLIMITED
	MaxCPUsPerSocket uint32 // 23.02+
	MaxMemPerCPU     uint64
	// Flags are PART_FLAG_*; u16 on the wire up to 23.11 (higher bits
	// are dropped for those clients), u32 from 24.05.
	Flags             uint32
	MaxShare          uint16 // low 15 bits count, SHARED_FORCE; 0 = EXCLUSIVE, 1 = NO
	OverTimeLimit     uint16
	PreemptMode       uint16 // NO_VAL16: client shows its own cluster PreemptMode
	PriorityJobFactor uint16
	PriorityTier      uint16
	StateUp           uint16 // PARTITION_*
	CRType            uint16
	ResumeTimeout     uint16 // NO_VAL16: cluster default
	SuspendTimeout    uint16
	SuspendTime       uint32
	AllowAccounts     string
	AllowGroups       string
	AllowAllocNodes   string
	AllowQOS          string
	QOSChar           string
	Alternate         string
	DenyAccounts      string
	DenyQOS           string
	Nodes             string // display string, e.g. "n[1-12]"
	NodeSets          string

	// node_inx: bitmap over the RESPONSE_NODE_INFO node table (sinfo
	// maps partitions to nodes through it), kept in wire form. Use
	// SetNodeInx to fill it.
	NodeInxNull bool
	NodeInxBits uint32
	NodeInx     string // "0x…" hex text

	BillingWeightsStr string
	TopologyName      string // 25.05+
	TRESFmtStr        string
	// JobDefaults is a slurm_pack_list: nil is a NULL list (NO_VAL, what
	// slurmctld sends without JobDefaults), a non-nil empty slice count 0.
	JobDefaults []PartJobDefault
}

// SetNodeInx sets node_inx to a bitmap of nbits bits (the node table
// size) whose set bits are given by isSet.
func (p *PartitionInfo) SetNodeInx(nbits int, isSet func(i int) bool) {
	p.NodeInxNull = false
	p.NodeInxBits = uint32(nbits)
	p.NodeInx = string(BitHex(nil, nbits, isSet))
}

// NodeInxSet reports whether node index i is in the partition's bitmap.
func (p *PartitionInfo) NodeInxSet(i int) bool {
	if p.NodeInxNull || i < 0 || uint32(i) >= p.NodeInxBits {
		return false
	}
	set, _ := nodeHexBit(p.NodeInx, i)
	return set
}

// Decode reads one partition record.
func (p *PartitionInfo) Decode(r *Reader, version uint16) error {
	p.Name = r.String()
	p.CPUBind = r.U32()
	p.GraceTime = r.U32()
	p.MaxTime = r.U32()
	p.DefaultTime = r.U32()
	p.MaxNodes = r.U32()
	p.MinNodes = r.U32()
	p.TotalNodes = r.U32()
	p.TotalCPUs = r.U32()
	p.DefMemPerCPU = r.U64()
	p.MaxCPUsPerNode = r.U32()
	if version >= V23_02 {
		p.MaxCPUsPerSocket = r.U32()
	}
	p.MaxMemPerCPU = r.U64()
	if version >= V24_05 {
		p.Flags = r.U32()
	} else {
		p.Flags = uint32(r.U16())
	}
	p.MaxShare = r.U16()
	p.OverTimeLimit = r.U16()
	p.PreemptMode = r.U16()
	p.PriorityJobFactor = r.U16()
	p.PriorityTier = r.U16()
	p.StateUp = r.U16()
	p.CRType = r.U16()
	p.ResumeTimeout = r.U16()
	p.SuspendTimeout = r.U16()
	p.SuspendTime = r.U32()

	p.AllowAccounts = r.String()
	p.AllowGroups = r.String()
	p.AllowAllocNodes = r.String()
	p.AllowQOS = r.String()
	p.QOSChar = r.String()
	p.Alternate = r.String()
	p.DenyAccounts = r.String()
	p.DenyQOS = r.String()
	p.Nodes = r.String()
	p.NodeSets = r.String()
	nbits, hex, null := r.Bitstr()
	p.NodeInxNull, p.NodeInxBits, p.NodeInx = null, nbits, string(hex)
	p.BillingWeightsStr = r.String()
	if version >= V25_05 {
		p.TopologyName = r.String()
	}
	p.TRESFmtStr = r.String()

	p.JobDefaults = nil
	n, null := r.Count(2 + 8)
	if !null {
		p.JobDefaults = make([]PartJobDefault, n)
		for i := range p.JobDefaults {
			p.JobDefaults[i].Type = r.U16()
			p.JobDefaults[i].Value = r.U64()
		}
	}
	return r.Err
}

// Encode appends one partition record; with capacity in w.B it
// allocates nothing, so records can be pre-encoded per version and
// concatenated behind AppendPartitionInfoHeader.
func (p *PartitionInfo) Encode(w *Writer, version uint16) {
	w.Str(p.Name)
	w.U32(p.CPUBind)
	w.U32(p.GraceTime)
	w.U32(p.MaxTime)
	w.U32(p.DefaultTime)
	w.U32(p.MaxNodes)
	w.U32(p.MinNodes)
	w.U32(p.TotalNodes)
	w.U32(p.TotalCPUs)
	w.U64(p.DefMemPerCPU)
	w.U32(p.MaxCPUsPerNode)
	if version >= V23_02 {
		w.U32(p.MaxCPUsPerSocket)
	}
	w.U64(p.MaxMemPerCPU)
	if version >= V24_05 {
		w.U32(p.Flags)
	} else {
		w.U16(uint16(p.Flags))
	}
	w.U16(p.MaxShare)
	w.U16(p.OverTimeLimit)
	w.U16(p.PreemptMode)
	w.U16(p.PriorityJobFactor)
	w.U16(p.PriorityTier)
	w.U16(p.StateUp)
	w.U16(p.CRType)
	w.U16(p.ResumeTimeout)
	w.U16(p.SuspendTimeout)
	w.U32(p.SuspendTime)

	w.Str(p.AllowAccounts)
	w.Str(p.AllowGroups)
	w.Str(p.AllowAllocNodes)
	w.Str(p.AllowQOS)
	w.Str(p.QOSChar)
	w.Str(p.Alternate)
	w.Str(p.DenyAccounts)
	w.Str(p.DenyQOS)
	w.Str(p.Nodes)
	w.Str(p.NodeSets)
	if p.NodeInxNull {
		w.BitstrNull()
	} else {
		w.U32(p.NodeInxBits)
		w.Str(p.NodeInx)
	}
	w.Str(p.BillingWeightsStr)
	if version >= V25_05 {
		w.Str(p.TopologyName)
	}
	w.Str(p.TRESFmtStr)

	if p.JobDefaults == nil {
		w.U32(NoVal)
	} else {
		w.U32(uint32(len(p.JobDefaults)))
		for _, d := range p.JobDefaults {
			w.U16(d.Type)
			w.U64(d.Value)
		}
	}
}

// PartitionInfoMsg is RESPONSE_PARTITION_INFO: u32 record count, time
// last_update, then the records. The same header in every version.
type PartitionInfoMsg struct {
	LastUpdate int64
	Partitions []PartitionInfo
}

// Decode reads the whole message body and rejects trailing bytes.
func (m *PartitionInfoMsg) Decode(r *Reader, version uint16) error {
	count := r.U32()
	m.LastUpdate = r.Time()
	if r.Err != nil {
		return r.Err
	}
	if uint64(count)*uint64(partInfoMinLen(version)) > uint64(r.Remaining()) {
		return ErrBadCount
	}
	m.Partitions = nil
	if count > 0 {
		m.Partitions = make([]PartitionInfo, count)
	}
	for i := range m.Partitions {
		if m.Partitions[i].Decode(r, version) != nil {
			break
		}
	}
	return nodeInfoEnd(r)
}

// Encode writes the message; the record count is len(Partitions).
func (m *PartitionInfoMsg) Encode(w *Writer, version uint16) {
	AppendPartitionInfoHeader(w, version, uint32(len(m.Partitions)), m.LastUpdate)
	for i := range m.Partitions {
		m.Partitions[i].Encode(w, version)
	}
}

// AppendPartitionInfoHeader writes the RESPONSE_PARTITION_INFO header;
// count partition records follow.
func AppendPartitionInfoHeader(w *Writer, version uint16, count uint32, lastUpdate int64) {
	w.U32(count)
	w.Time(lastUpdate)
}

// partInfoMinLens[i] is the encoded size of an empty PartitionInfo with
// a NULL node_inx, for versionsForMin[i].
var partInfoMinLens = func() (out [len(versionsForMin)]int) {
	for i, v := range versionsForMin {
		var w Writer
		p := PartitionInfo{NodeInxNull: true}
		p.Encode(&w, v)
		out[i] = len(w.B)
	}
	return out
}()

func partInfoMinLen(version uint16) int { return partInfoMinLens[nodeVersionIndex(version)] }
