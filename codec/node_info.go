package codec

// Node information: REQUEST_NODE_INFO (2007), REQUEST_NODE_INFO_SINGLE
// (2040) and RESPONSE_NODE_INFO (2008).
//
// Layouts from src/common/slurm_protocol_pack.c (request pack/unpack,
// _unpack_node_info_msg, _unpack_node_info_members) and
// src/slurmctld/node_mgr.c (pack_all_nodes, pack_one_node, _pack_node)
// of each release tag; each record layout was taken from the newest
// branch of that release's own _pack_node and checked against the newer
// releases' branches for older peers.

// NodeInfoRequest is REQUEST_NODE_INFO: the same two fields in every
// supported version.
type NodeInfoRequest struct {
	LastUpdate int64  // client's last reply time; unchanged data gets SLURM_NO_CHANGE_IN_DATA
	ShowFlags  uint16 // SHOW_* bits
}

// Decode reads the request. It allocates nothing.
func (m *NodeInfoRequest) Decode(r *Reader, version uint16) error {
	m.LastUpdate = r.Time()
	m.ShowFlags = r.U16()
	return nodeInfoEnd(r)
}

// Encode writes the request.
func (m *NodeInfoRequest) Encode(w *Writer, version uint16) {
	w.Time(m.LastUpdate)
	w.U16(m.ShowFlags)
}

// NodeInfoSingleRequest is REQUEST_NODE_INFO_SINGLE (scontrol show node
// NAME). There is no last_update, so it never gets a 1900 reply.
type NodeInfoSingleRequest struct {
	NodeName  []byte // view into the request body; NULL and "" both read as empty
	ShowFlags uint16
}

// Decode reads the request. NodeName aliases r's buffer; nothing is
// allocated.
func (m *NodeInfoSingleRequest) Decode(r *Reader, version uint16) error {
	m.NodeName = r.Str()
	m.ShowFlags = r.U16()
	return nodeInfoEnd(r)
}

// Encode writes the request (an empty NodeName is sent as NULL, which
// slurmctld reads as "the first node").
func (m *NodeInfoSingleRequest) Encode(w *Writer, version uint16) {
	w.StrBytes(m.NodeName)
	w.U16(m.ShowFlags)
}

// NodeEnergy is the acct_gather_energy record inside a node record.
// A node without energy data is packed as all zeros.
type NodeEnergy struct {
	BaseConsumedEnergy     uint64
	AveWatts               uint32
	ConsumedEnergy         uint64
	CurrentWatts           uint32 // clients print n/a only for NO_VAL
	PreviousConsumedEnergy uint64
	PollTime               int64
	SlurmdStartTime        int64 // 24.11+
}

func (e *NodeEnergy) decode(r *Reader, version uint16) {
	e.BaseConsumedEnergy = r.U64()
	e.AveWatts = r.U32()
	e.ConsumedEnergy = r.U64()
	e.CurrentWatts = r.U32()
	e.PreviousConsumedEnergy = r.U64()
	e.PollTime = r.Time()
	if version >= V24_11 {
		e.SlurmdStartTime = r.Time()
	}
}

func (e *NodeEnergy) encode(w *Writer, version uint16) {
	w.U64(e.BaseConsumedEnergy)
	w.U32(e.AveWatts)
	w.U64(e.ConsumedEnergy)
	w.U32(e.CurrentWatts)
	w.U64(e.PreviousConsumedEnergy)
	w.Time(e.PollTime)
	if version >= V24_11 {
		w.Time(e.SlurmdStartTime)
	}
}

// NodeInfo is one node record of RESPONSE_NODE_INFO, the union of the
// fields of every version 22.05-26.05. Fields a version does not pack
// are ignored when encoding for it and left zero when decoding.
//
// Strings: "" is sent as NULL (slurmctld sends NULL for unset fields;
// clients treat NULL and "" alike).
type NodeInfo struct {
	Name            string // NULL name = blank/hidden slot (clients skip it)
	NodeHostname    string
	NodeAddr        string // slurmctld's comm_name
	BcastAddress    string
	CertFlags       uint16 // 25.05+: NODE_CERT_TOKEN_SET
	Port            uint16 // slurmd port
	NextState       uint32 // NO_VAL unless a reboot sets it
	NodeState       uint32 // NODE_STATE_* base | flags
	Version         string // slurmd version string
	CPUs            uint16
	Boards          uint16
	Sockets         uint16 // total sockets (tot_sockets), not per board
	Cores           uint16 // cores per socket
	Threads         uint16 // threads per core
	RealMemory      uint64 // MB
	TmpDisk         uint32 // MB
	GPUSpec         string // 24.05+
	MCSLabel        string
	Owner           uint32 // NO_VAL when unset
	CoreSpecCnt     uint16
	CPUBind         uint32
	MemSpecLimit    uint64
	CPUSpecList     string
	CPUsEfctv       uint16 // usable CPUs after core specialization; clients use it for idle = efctv - alloc
	CPULoad         uint32 // load average * 100
	FreeMem         uint64 // MB; NO_VAL64 unknown
	Weight          uint32
	ResCoresPerGPU  uint16 // 24.05+
	ReasonUID       uint32 // NO_VAL when no reason
	SuspendTime     uint32 // 26.05+: per-node SuspendTime
	BootTime        int64
	LastBusy        int64
	ReasonTime      int64
	ResumeAfter     int64 // 23.02+
	SlurmdStartTime int64
	CertLastRenewal int64 // 25.05+

	// Allocation data. Up to 24.11 it travels as a select plugin blob:
	// u32 plugin id, then alloc_cpus, alloc_memory, tres string and a
	// weighted double; 25.05 dropped the id and the double. The id must
	// name a select plugin the client can load (SELECT_PLUGIN_CONS_TRES
	// or _LINEAR); 24.11 clients ignore it.
	SelectPluginID    uint32  // <= 24.11
	AllocCPUs         uint16  // clients derive MIXED from 0 < AllocCPUs < CPUsEfctv
	AllocMemory       uint64  // MB
	AllocTRESFmtStr   string  // scontrol AllocTRES=
	AllocTRESWeighted float64 // <= 24.11 (24.11 slurmctld sends 0)

	Arch         string
	Features     string
	FeaturesAct  string
	Gres         string
	GresDrain    string // only filled with SHOW_DETAIL
	GresUsed     string // only filled with SHOW_DETAIL
	OS           string
	Comment      string
	Extra        string
	InstanceID   string // 23.11+
	InstanceType string // 23.11+
	Parameters   string // 25.11+
	Reason       string
	Energy       NodeEnergy

	// External sensors and power capping, 22.05-23.11 only. 22.05
	// slurmctld sends NO_VAL64/NO_VAL/0/0 and cap NO_VAL for a real node
	// without sensors (the capture), zeros and NO_VAL for a blank slot;
	// 24.05+ slurmctld sends zeros and NO_VAL to 23.x clients.
	ExtSensorsConsumedEnergy uint64
	ExtSensorsTemperature    uint32
	ExtSensorsUpdateTime     int64
	ExtSensorsCurrentWatts   uint32
	PowerCapWatts            uint32

	TRESFmtStr  string // scontrol CfgTRES=
	ResvName    string // 23.02+
	TopologyStr string // 25.05+
}

// BlankNodeInfo returns the record slurmctld 22.05-24.05 packs for a
// node slot the caller may not see (NULL name, zeroed config, no energy
// or sensors); 24.11+ clients get a hidden_nodes bit instead.
func BlankNodeInfo() NodeInfo {
	return NodeInfo{SelectPluginID: SELECT_PLUGIN_CONS_TRES, PowerCapWatts: NoVal}
}

// Decode reads one node record.
func (n *NodeInfo) Decode(r *Reader, version uint16) error {
	n.Name = r.String()
	n.NodeHostname = r.String()
	n.NodeAddr = r.String()
	n.BcastAddress = r.String()
	if version >= V25_05 {
		n.CertFlags = r.U16()
	}
	n.Port = r.U16()
	n.NextState = r.U32()
	n.NodeState = r.U32()
	n.Version = r.String()

	n.CPUs = r.U16()
	n.Boards = r.U16()
	n.Sockets = r.U16()
	n.Cores = r.U16()
	n.Threads = r.U16()
	n.RealMemory = r.U64()
	n.TmpDisk = r.U32()

	if version >= V24_05 {
		n.GPUSpec = r.String()
	}
	n.MCSLabel = r.String()
	n.Owner = r.U32()
	n.CoreSpecCnt = r.U16()
	n.CPUBind = r.U32()
	n.MemSpecLimit = r.U64()
	n.CPUSpecList = r.String()
	n.CPUsEfctv = r.U16()

	n.CPULoad = r.U32()
	n.FreeMem = r.U64()
	n.Weight = r.U32()
	if version >= V24_05 {
		n.ResCoresPerGPU = r.U16()
	}
	n.ReasonUID = r.U32()
	if version >= V26_05 {
		n.SuspendTime = r.U32()
	}

	n.BootTime = r.Time()
	n.LastBusy = r.Time()
	n.ReasonTime = r.Time()
	if version >= V23_02 {
		n.ResumeAfter = r.Time()
	}
	n.SlurmdStartTime = r.Time()
	if version >= V25_05 {
		n.CertLastRenewal = r.Time()
	}

	if version < V25_05 {
		n.SelectPluginID = r.U32()
	}
	n.AllocCPUs = r.U16()
	n.AllocMemory = r.U64()
	n.AllocTRESFmtStr = r.String()
	if version < V25_05 {
		n.AllocTRESWeighted = r.Double()
	}

	n.Arch = r.String()
	n.Features = r.String()
	n.FeaturesAct = r.String()
	n.Gres = r.String()
	n.GresDrain = r.String()
	n.GresUsed = r.String()
	n.OS = r.String()
	n.Comment = r.String()
	n.Extra = r.String()
	if version >= V23_11 {
		n.InstanceID = r.String()
		n.InstanceType = r.String()
	}
	if version >= V25_11 {
		n.Parameters = r.String()
	}
	n.Reason = r.String()
	n.Energy.decode(r, version)
	if version < V24_05 {
		n.ExtSensorsConsumedEnergy = r.U64()
		n.ExtSensorsTemperature = r.U32()
		n.ExtSensorsUpdateTime = r.Time()
		n.ExtSensorsCurrentWatts = r.U32()
		n.PowerCapWatts = r.U32()
	}

	n.TRESFmtStr = r.String()
	if version >= V23_02 {
		n.ResvName = r.String()
	}
	if version >= V25_05 {
		n.TopologyStr = r.String()
	}
	return r.Err
}

// Encode appends one node record. With enough capacity in w.B it
// allocates nothing, so a server can pre-encode each node per version
// and concatenate the records behind AppendNodeInfoHeader.
func (n *NodeInfo) Encode(w *Writer, version uint16) {
	w.Str(n.Name)
	w.Str(n.NodeHostname)
	w.Str(n.NodeAddr)
	w.Str(n.BcastAddress)
	if version >= V25_05 {
		w.U16(n.CertFlags)
	}
	w.U16(n.Port)
	w.U32(n.NextState)
	w.U32(n.NodeState)
	w.Str(n.Version)

	w.U16(n.CPUs)
	w.U16(n.Boards)
	w.U16(n.Sockets)
	w.U16(n.Cores)
	w.U16(n.Threads)
	w.U64(n.RealMemory)
	w.U32(n.TmpDisk)

	if version >= V24_05 {
		w.Str(n.GPUSpec)
	}
	w.Str(n.MCSLabel)
	w.U32(n.Owner)
	w.U16(n.CoreSpecCnt)
	w.U32(n.CPUBind)
	w.U64(n.MemSpecLimit)
	w.Str(n.CPUSpecList)
	w.U16(n.CPUsEfctv)

	w.U32(n.CPULoad)
	w.U64(n.FreeMem)
	w.U32(n.Weight)
	if version >= V24_05 {
		w.U16(n.ResCoresPerGPU)
	}
	w.U32(n.ReasonUID)
	if version >= V26_05 {
		w.U32(n.SuspendTime)
	}

	w.Time(n.BootTime)
	w.Time(n.LastBusy)
	w.Time(n.ReasonTime)
	if version >= V23_02 {
		w.Time(n.ResumeAfter)
	}
	w.Time(n.SlurmdStartTime)
	if version >= V25_05 {
		w.Time(n.CertLastRenewal)
	}

	if version < V25_05 {
		w.U32(n.SelectPluginID)
	}
	w.U16(n.AllocCPUs)
	w.U64(n.AllocMemory)
	w.Str(n.AllocTRESFmtStr)
	if version < V25_05 {
		w.Double(n.AllocTRESWeighted)
	}

	w.Str(n.Arch)
	w.Str(n.Features)
	w.Str(n.FeaturesAct)
	w.Str(n.Gres)
	w.Str(n.GresDrain)
	w.Str(n.GresUsed)
	w.Str(n.OS)
	w.Str(n.Comment)
	w.Str(n.Extra)
	if version >= V23_11 {
		w.Str(n.InstanceID)
		w.Str(n.InstanceType)
	}
	if version >= V25_11 {
		w.Str(n.Parameters)
	}
	w.Str(n.Reason)
	n.Energy.encode(w, version)
	if version < V24_05 {
		w.U64(n.ExtSensorsConsumedEnergy)
		w.U32(n.ExtSensorsTemperature)
		w.Time(n.ExtSensorsUpdateTime)
		w.U32(n.ExtSensorsCurrentWatts)
		w.U32(n.PowerCapWatts)
	}

	w.Str(n.TRESFmtStr)
	if version >= V23_02 {
		w.Str(n.ResvName)
	}
	if version >= V25_05 {
		w.Str(n.TopologyStr)
	}
}

// NodeInfoMsg is RESPONSE_NODE_INFO.
//
// Up to 24.05 every slot of the node table has a record (hidden slots
// are BlankNodeInfo records). From 24.11 the header carries a
// hidden_nodes bitmap and hidden slots have no record at all; Nodes then
// holds only the records present, in index order (see Hidden).
type NodeInfoMsg struct {
	RecordCount uint32 // node table slots, hidden ones included
	LastUpdate  int64

	// hidden_nodes (24.11+), kept in wire form: pack_all_nodes sends a
	// bitmap of RecordCount bits, pack_one_node (single node) sends NULL.
	HiddenNull  bool
	HiddenNBits uint32
	HiddenHex   string // "0x…", most significant nibble first

	Nodes []NodeInfo
}

// Hidden reports whether slot i has no record (24.11+ only).
func (m *NodeInfoMsg) Hidden(i int) bool {
	if m.HiddenNull || i < 0 || uint32(i) >= m.HiddenNBits {
		return false
	}
	set, _ := nodeHexBit(m.HiddenHex, i)
	return set
}

// Decode reads the whole message body and rejects trailing bytes.
func (m *NodeInfoMsg) Decode(r *Reader, version uint16) error {
	m.RecordCount = r.U32()
	m.LastUpdate = r.Time()
	m.HiddenNull, m.HiddenNBits, m.HiddenHex = true, 0, ""
	if version >= V24_11 {
		nbits, hex, null := r.Bitstr()
		if !null {
			m.HiddenNull, m.HiddenNBits, m.HiddenHex = false, nbits, string(hex)
		}
	}
	if r.Err != nil {
		return r.Err
	}
	// Records present = slots minus hidden slots; both are bounded
	// (hidden bits by the hex text, records by the bytes left).
	var hidden uint64
	if !m.HiddenNull {
		n, err := nodeHexCount(m.HiddenHex, min(m.HiddenNBits, m.RecordCount))
		if err != nil {
			return err
		}
		hidden = n
	}
	present := uint64(m.RecordCount) - hidden
	if present*uint64(nodeInfoMinLen(version)) > uint64(r.Remaining()) {
		return ErrBadCount
	}
	m.Nodes = nil
	if present > 0 {
		m.Nodes = make([]NodeInfo, 0, present)
	}
	for i := uint32(0); i < m.RecordCount && r.Err == nil; i++ {
		if !m.HiddenNull && m.Hidden(int(i)) {
			continue
		}
		m.Nodes = append(m.Nodes, NodeInfo{})
		m.Nodes[len(m.Nodes)-1].Decode(r, version)
	}
	return nodeInfoEnd(r)
}

// Encode writes the message from its fields as they are (RecordCount and
// the hidden bitmap are not recomputed).
func (m *NodeInfoMsg) Encode(w *Writer, version uint16) {
	w.U32(m.RecordCount)
	w.Time(m.LastUpdate)
	if version >= V24_11 {
		if m.HiddenNull {
			w.BitstrNull()
		} else {
			w.U32(m.HiddenNBits)
			w.Str(m.HiddenHex)
		}
	}
	for i := range m.Nodes {
		m.Nodes[i].Encode(w, version)
	}
}

// AppendNodeInfoHeader writes the RESPONSE_NODE_INFO header for a full
// node table of count slots with none hidden (24.11+: an all-zero
// hidden_nodes bitmap of count bits, as pack_all_nodes sends). The count
// node records follow.
func AppendNodeInfoHeader(w *Writer, version uint16, count uint32, lastUpdate int64) {
	AppendNodeInfoHeaderHidden(w, version, count, lastUpdate, nil)
}

// AppendNodeInfoHeaderHidden is AppendNodeInfoHeader with hidden(i)
// marking slots that get no record (24.11+). Before 24.11 there is no
// bitmap and the caller writes a BlankNodeInfo record for those slots.
func AppendNodeInfoHeaderHidden(w *Writer, version uint16, count uint32, lastUpdate int64, hidden func(i int) bool) {
	w.U32(count)
	w.Time(lastUpdate)
	if version < V24_11 {
		return
	}
	if hidden == nil {
		hidden = nodeNoneHidden
	}
	w.U32(count)
	lenAt := len(w.B)
	w.U32(0) // string length, patched below
	w.B = BitHex(w.B, int(count), hidden)
	w.B = append(w.B, 0)
	n := uint32(len(w.B) - lenAt - 4)
	w.B[lenAt], w.B[lenAt+1], w.B[lenAt+2], w.B[lenAt+3] = byte(n>>24), byte(n>>16), byte(n>>8), byte(n)
}

// AppendNodeInfoSingleHeader writes the header pack_one_node sends for
// REQUEST_NODE_INFO_SINGLE: count is 0 or 1 and, from 24.11, the
// hidden_nodes bitmap is NULL.
func AppendNodeInfoSingleHeader(w *Writer, version uint16, count uint32, lastUpdate int64) {
	w.U32(count)
	w.Time(lastUpdate)
	if version >= V24_11 {
		w.BitstrNull()
	}
}

func nodeNoneHidden(int) bool { return false }

var errNodeBadBitmap = &Error{Code: ESLURM_PROTOCOL_INCOMPLETE_PACKET, Msg: "bad hex bitmap"}

// nodeInfoEnd ends a whole-body decode: the sticky error, else trailing
// bytes.
func nodeInfoEnd(r *Reader) error {
	if r.Err != nil {
		return r.Err
	}
	if r.Remaining() != 0 {
		return ErrTrailing
	}
	return nil
}

// nodeHexDigit decodes one hex digit.
func nodeHexDigit(c byte) (byte, bool) {
	switch {
	case c >= '0' && c <= '9':
		return c - '0', true
	case c >= 'A' && c <= 'F':
		return c - 'A' + 10, true
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10, true
	}
	return 0, false
}

// nodeHexBit reports bit i of a "0x…" bitmap text (last digit = bits
// 0-3). Bits beyond the text are clear.
func nodeHexBit(hex string, i int) (bool, error) {
	if len(hex) < 2 || hex[0] != '0' || (hex[1] != 'x' && hex[1] != 'X') {
		return false, errNodeBadBitmap
	}
	digits := hex[2:]
	k := len(digits) - 1 - i/4
	if k < 0 {
		return false, nil
	}
	v, ok := nodeHexDigit(digits[k])
	if !ok {
		return false, errNodeBadBitmap
	}
	return v&(1<<(i%4)) != 0, nil
}

// nodeHexCount counts the set bits below nbits in a "0x…" bitmap text,
// validating every digit.
func nodeHexCount(hex string, nbits uint32) (uint64, error) {
	if len(hex) < 2 || hex[0] != '0' || (hex[1] != 'x' && hex[1] != 'X') {
		return 0, errNodeBadBitmap
	}
	digits := hex[2:]
	var n uint64
	for k := 0; k < len(digits); k++ {
		v, ok := nodeHexDigit(digits[len(digits)-1-k])
		if !ok {
			return 0, errNodeBadBitmap
		}
		for b := 0; b < 4; b++ {
			if uint64(k)*4+uint64(b) < uint64(nbits) && v&(1<<b) != 0 {
				n++
			}
		}
	}
	return n, nil
}

// nodeInfoMinLens[i] is the encoded size of an all-empty NodeInfo for
// Versions[i]: the smallest a record can be, used to bound counts.
var nodeInfoMinLens = func() (out [len(versionsForMin)]int) {
	for i, v := range versionsForMin {
		var w Writer
		var n NodeInfo
		n.Encode(&w, v)
		out[i] = len(w.B)
	}
	return out
}()

// versionsForMin mirrors Versions as an array so sizes can be tabulated
// at compile-time length.
var versionsForMin = [...]uint16{V22_05, V23_02, V23_11, V24_05, V24_11, V25_05, V25_11, V26_05}

// nodeVersionIndex maps a supported version to its index in
// versionsForMin; newer versions use the newest layout.
func nodeVersionIndex(version uint16) int {
	for i := len(versionsForMin) - 1; i > 0; i-- {
		if version >= versionsForMin[i] {
			return i
		}
	}
	return 0
}

func nodeInfoMinLen(version uint16) int { return nodeInfoMinLens[nodeVersionIndex(version)] }
