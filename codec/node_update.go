package codec

// Node administration requests: REQUEST_UPDATE_NODE (3002, scontrol
// update NodeName=...), REQUEST_SHUTDOWN (1005, scontrol shutdown) and
// REQUEST_RECONFIGURE (1003, scontrol reconfigure), whose body is empty
// in every supported version (pack_msg packs nothing for it, as for
// REQUEST_PING). Layouts read from _pack_update_node_msg and
// _pack_shutdown_msg (src/common/slurm_protocol_pack.c) at the 22.05.8,
// 23.02.8, 23.11.11, 24.05.8, 24.11.5, 25.05.8, 25.11.7 and 26.05.3
// tags.

// UpdateNodeRequest is update_node_msg_t. A NULL string means "not
// given"; an empty one (EmptyStrs bit set) clears the field, as
// scontrol's Comment= does. Fields a version does not carry stay zero.
type UpdateNodeRequest struct {
	CertToken       string // 24.11+
	Comment         string
	CPUBind         uint32
	Extra           string
	Features        string
	FeaturesAct     string
	Gres            string
	InstanceID      string // 23.11+
	InstanceType    string // 23.11+
	NodeAddr        string
	NodeHostname    string
	NodeNames       string // a host list expression
	NodeState       uint32 // NO_VAL: unchanged
	PowerActionName string // 26.05+
	Reason          string
	ReasonUID       uint32 // 22.05 only (slurmctld ignores it and takes the sender's uid)
	ResumeAfter     uint32 // 23.02+: seconds, NO_VAL none, INFINITE never
	TopologyStr     string // 25.05+
	Weight          uint32 // NO_VAL: unchanged

	EmptyStrs uint16 // bit per string field (the un* constants): a non-NULL ""
}

// Bits of UpdateNodeRequest.EmptyStrs.
const (
	unCertToken = iota
	unComment
	unExtra
	unFeatures
	unFeaturesAct
	unGres
	unInstanceID
	unInstanceType
	unNodeAddr
	unNodeHostname
	unNodeNames
	unPowerAction
	unReason
	unTopology
)

// given reports whether the request sets a string field (non-NULL):
// field is the value, bit its EmptyStrs bit.
func (m *UpdateNodeRequest) given(field string, bit uint) bool {
	return field != "" || m.EmptyStrs&(1<<bit) != 0
}

// Changes lists what the request would change besides the node state
// and reason, by scontrol's keyword names: what a controller that only
// administers states refuses.
func (m *UpdateNodeRequest) Changes() []string {
	var out []string
	for _, f := range []struct {
		name string
		set  bool
	}{
		{"CertToken", m.given(m.CertToken, unCertToken)},
		{"Comment", m.given(m.Comment, unComment)},
		{"CpuBind", m.CPUBind != 0},
		{"Extra", m.given(m.Extra, unExtra)},
		{"AvailableFeatures", m.given(m.Features, unFeatures)},
		{"ActiveFeatures", m.given(m.FeaturesAct, unFeaturesAct)},
		{"Gres", m.given(m.Gres, unGres)},
		{"InstanceId", m.given(m.InstanceID, unInstanceID)},
		{"InstanceType", m.given(m.InstanceType, unInstanceType)},
		{"NodeAddr", m.given(m.NodeAddr, unNodeAddr)},
		{"NodeHostName", m.given(m.NodeHostname, unNodeHostname)},
		{"PowerAction", m.given(m.PowerActionName, unPowerAction)},
		{"ResumeAfter", m.ResumeAfter != NoVal && m.ResumeAfter != 0},
		{"Topology", m.given(m.TopologyStr, unTopology)},
		{"Weight", m.Weight != NoVal},
	} {
		if f.set {
			out = append(out, f.name)
		}
	}
	return out
}

func (m *UpdateNodeRequest) Decode(r *Reader, version uint16) error {
	*m = UpdateNodeRequest{}
	var e uint64
	if version >= V24_11 {
		m.CertToken = jcStr(r, &e, unCertToken)
	}
	m.Comment = jcStr(r, &e, unComment)
	m.CPUBind = r.U32()
	m.Extra = jcStr(r, &e, unExtra)
	m.Features = jcStr(r, &e, unFeatures)
	m.FeaturesAct = jcStr(r, &e, unFeaturesAct)
	m.Gres = jcStr(r, &e, unGres)
	if version >= V23_11 {
		m.InstanceID = jcStr(r, &e, unInstanceID)
		m.InstanceType = jcStr(r, &e, unInstanceType)
	}
	m.NodeAddr = jcStr(r, &e, unNodeAddr)
	m.NodeHostname = jcStr(r, &e, unNodeHostname)
	m.NodeNames = jcStr(r, &e, unNodeNames)
	m.NodeState = r.U32()
	if version >= V26_05 {
		m.PowerActionName = jcStr(r, &e, unPowerAction)
	}
	m.Reason = jcStr(r, &e, unReason)
	if version >= V23_02 {
		m.ResumeAfter = r.U32()
	} else {
		m.ReasonUID = r.U32()
	}
	if version >= V25_05 {
		m.TopologyStr = jcStr(r, &e, unTopology)
	}
	m.Weight = r.U32()
	m.EmptyStrs = uint16(e)
	return jcDone(r)
}

func (m *UpdateNodeRequest) Encode(w *Writer, version uint16) {
	e := uint64(m.EmptyStrs)
	if version >= V24_11 {
		jcPutStr(w, m.CertToken, e, unCertToken)
	}
	jcPutStr(w, m.Comment, e, unComment)
	w.U32(m.CPUBind)
	jcPutStr(w, m.Extra, e, unExtra)
	jcPutStr(w, m.Features, e, unFeatures)
	jcPutStr(w, m.FeaturesAct, e, unFeaturesAct)
	jcPutStr(w, m.Gres, e, unGres)
	if version >= V23_11 {
		jcPutStr(w, m.InstanceID, e, unInstanceID)
		jcPutStr(w, m.InstanceType, e, unInstanceType)
	}
	jcPutStr(w, m.NodeAddr, e, unNodeAddr)
	jcPutStr(w, m.NodeHostname, e, unNodeHostname)
	jcPutStr(w, m.NodeNames, e, unNodeNames)
	w.U32(m.NodeState)
	if version >= V26_05 {
		jcPutStr(w, m.PowerActionName, e, unPowerAction)
	}
	jcPutStr(w, m.Reason, e, unReason)
	if version >= V23_02 {
		w.U32(m.ResumeAfter)
	} else {
		w.U32(m.ReasonUID)
	}
	if version >= V25_05 {
		jcPutStr(w, m.TopologyStr, e, unTopology)
	}
	w.U32(m.Weight)
}

// shutdown_msg_t options (slurm_protocol_defs.h).
const (
	SLURMCTLD_SHUTDOWN_ALL   uint16 = 0 // slurmctld and every slurmd
	SLURMCTLD_SHUTDOWN_ABORT uint16 = 1 // 22.05/23.02 only: slurmctld, no state save, core dump
	SLURMCTLD_SHUTDOWN_CTLD  uint16 = 2 // slurmctld only (scontrol shutdown slurmctld)
)

// ShutdownRequest is shutdown_msg_t, REQUEST_SHUTDOWN's body: one u16
// in every supported version.
type ShutdownRequest struct {
	Options uint16
}

func (m *ShutdownRequest) Decode(r *Reader, version uint16) error {
	m.Options = r.U16()
	return jcDone(r)
}

func (m *ShutdownRequest) Encode(w *Writer, version uint16) { w.U16(m.Options) }

// ReasonGiven reports whether the request carries a reason (non-NULL).
func (m *UpdateNodeRequest) ReasonGiven() bool { return m.given(m.Reason, unReason) }

// ESLURM_INVALID_NODE_STATE_TRANSITION is 25.11+'s answer to a node state
// change update_node refuses for the node's state (earlier releases:
// ESLURM_INVALID_NODE_STATE).
const ESLURM_INVALID_NODE_STATE_TRANSITION = 2180
