package codec

import (
	"math"
	"strconv"
)

// Small controller RPCs: REQUEST_PING, federation, licenses,
// reservations, shares (sshare), RESPONSE_SLURM_RC_MSG, job ready and
// configless REQUEST_CONFIG. Layouts are from each release's own branch of
// the pack/unpack functions in src/common/slurm_protocol_pack.c (and
// src/common/slurmdb_pack.c for the federation record), 22.05 to 26.05.

// miscEnd finishes a whole-body decode: the sticky error, else trailing
// bytes (every message here has a fixed end).
func miscEnd(r *Reader) error {
	if r.Err != nil {
		return r.Err
	}
	if r.Remaining() != 0 {
		return ErrTrailing
	}
	return nil
}

// miscErr returns the reader's error if it has one, else e.
func miscErr(r *Reader, e error) error {
	if r.Err != nil {
		return r.Err
	}
	return e
}

// miscCount reads a u32 array count that must fit in what is left at
// minElem bytes an element (NO_VAL fails too: Slurm's array readers
// refuse it).
func miscCount(r *Reader, minElem int) uint32 {
	n := r.U32()
	if r.Err == nil && uint64(n)*uint64(minElem) > uint64(r.Remaining()) {
		r.fail(ErrBadCount)
		return 0
	}
	return n
}

// miscList reads a slurm_pack_list count: NO_VAL is a NULL list (null
// true); otherwise the count must fit at minElem bytes an element.
func miscList(r *Reader, minElem int) (n uint32, null bool) {
	n = r.U32()
	if r.Err != nil {
		return 0, true
	}
	if n == NoVal {
		return 0, true
	}
	if uint64(n)*uint64(minElem) > uint64(r.Remaining()) {
		r.fail(ErrBadCount)
		return 0, true
	}
	return n, false
}

// PingRequest is REQUEST_PING (1008): no body in any version. slurmctld
// answers RESPONSE_SLURM_RC 0; the credential is restricted to SlurmUser.
type PingRequest struct{}

func (m *PingRequest) Decode(r *Reader, version uint16) error { return miscEnd(r) }
func (m *PingRequest) Encode(w *Writer, version uint16)       {}

// FedInfoRequest is REQUEST_FED_INFO (2049): no body in any version.
type FedInfoRequest struct{}

func (m *FedInfoRequest) Decode(r *Reader, version uint16) error { return miscEnd(r) }
func (m *FedInfoRequest) Encode(w *Writer, version uint16)       {}

// FedInfo is RESPONSE_FED_INFO (2050), a slurmdb_federation_rec_t packed
// by slurmdb_pack_federation_rec (same in 22.05-26.05). slurmctld sends
// its federation record pointer, which is NULL unless the cluster is in a
// federation: the reply is then the single byte 0, and squeue, scontrol
// and scancel fall back to local-only behaviour. Only that form and a
// record without clusters are supported here; a record carrying
// slurmdb_cluster_rec entries is refused (ESLURM_NOT_SUPPORTED).
type FedInfo struct {
	Federated bool // false: the NULL record (u8 0), nothing follows
	Name      string
	Flags     uint32
	// ClustersNull: the cluster list is NULL (NO_VAL) rather than empty.
	ClustersNull bool
}

var errFedClusters = &Error{Code: ESLURM_NOT_SUPPORTED, Msg: "federation cluster records are not supported"}

func (m *FedInfo) Decode(r *Reader, version uint16) error {
	*m = FedInfo{}
	m.Federated = r.U8() != 0
	if m.Federated {
		m.Name = r.String()
		m.Flags = r.U32()
		n, null := miscList(r, 1)
		m.ClustersNull = null
		if r.Err == nil && n > 0 {
			return errFedClusters
		}
	}
	return miscEnd(r)
}

func (m *FedInfo) Encode(w *Writer, version uint16) {
	if !m.Federated {
		w.U8(0)
		return
	}
	w.U8(1)
	w.Str(m.Name)
	w.U32(m.Flags)
	if m.ClustersNull {
		w.U32(NoVal)
	} else {
		w.U32(0)
	}
}

// LicenseInfoRequest is REQUEST_LICENSE_INFO (1021): last_update and
// show_flags in every version. A server answers SLURM_NO_CHANGE_IN_DATA
// when LastUpdate-1 >= its last license change.
type LicenseInfoRequest struct {
	LastUpdate int64
	ShowFlags  uint16
}

func (m *LicenseInfoRequest) Decode(r *Reader, version uint16) error {
	m.LastUpdate = r.Time()
	m.ShowFlags = r.U16()
	return miscEnd(r)
}

func (m *LicenseInfoRequest) Encode(w *Writer, version uint16) {
	w.Time(m.LastUpdate)
	w.U16(m.ShowFlags)
}

// LicenseInfo is one license as slurmctld's _pack_license sends it
// (src/slurmctld/licenses.c). Clients compute Available themselves
// (total - in_use - last_deficit, floored at 0; INFINITE stays INFINITE
// from 25.05).
type LicenseInfo struct {
	Name         string
	Total        uint32
	InUse        uint32
	Reserved     uint32
	Remote       bool   // from slurmdbd rather than slurm.conf
	LastConsumed uint32 // 23.02+
	LastDeficit  uint32 // 23.02+
	LastUpdate   int64  // 23.02+
	Mode         uint8  // 25.05+
	Nodes        string // 25.05+
}

// LicenseInfoMsg is RESPONSE_LICENSE_INFO (1022): u32 count, time
// last_update, then the licenses.
type LicenseInfoMsg struct {
	LastUpdate int64
	Licenses   []LicenseInfo
}

func (m *LicenseInfoMsg) Decode(r *Reader, version uint16) error {
	*m = LicenseInfoMsg{}
	n := miscCount(r, 17) // smallest 22.05 record: NULL name, 3 u32, u8
	m.LastUpdate = r.Time()
	if n > 0 && r.Err == nil {
		m.Licenses = make([]LicenseInfo, n)
	}
	for i := range m.Licenses {
		l := &m.Licenses[i]
		l.Name = r.String()
		l.Total = r.U32()
		l.InUse = r.U32()
		l.Reserved = r.U32()
		l.Remote = r.U8() != 0
		if version >= V23_02 {
			l.LastConsumed = r.U32()
			l.LastDeficit = r.U32()
			l.LastUpdate = r.Time()
		}
		if version >= V25_05 {
			l.Mode = r.U8()
			l.Nodes = r.String()
		}
		if r.Err != nil {
			break
		}
	}
	return miscEnd(r)
}

func (m *LicenseInfoMsg) Encode(w *Writer, version uint16) {
	w.U32(uint32(len(m.Licenses)))
	w.Time(m.LastUpdate)
	for i := range m.Licenses {
		l := &m.Licenses[i]
		w.Str(l.Name)
		w.U32(l.Total)
		w.U32(l.InUse)
		w.U32(l.Reserved)
		w.Bool(l.Remote)
		if version >= V23_02 {
			w.U32(l.LastConsumed)
			w.U32(l.LastDeficit)
			w.Time(l.LastUpdate)
		}
		if version >= V25_05 {
			w.U8(l.Mode)
			w.Str(l.Nodes)
		}
	}
}

// ReservationInfoRequest is REQUEST_RESERVATION_INFO (2024): only
// last_update, every version.
type ReservationInfoRequest struct {
	LastUpdate int64
}

func (m *ReservationInfoRequest) Decode(r *Reader, version uint16) error {
	m.LastUpdate = r.Time()
	return miscEnd(r)
}

func (m *ReservationInfoRequest) Encode(w *Writer, version uint16) { w.Time(m.LastUpdate) }

// ReservationCoreSpec is one node's reserved cores ("0-3").
type ReservationCoreSpec struct {
	NodeName string
	CoreID   string
}

// ReservationInfo is one reservation as _pack_resv
// (src/slurmctld/reservation.c) sends it to clients. Strings: "" is
// sent as NULL, which is what slurmctld sends for unset ones.
type ReservationInfo struct {
	Accounts      string
	BurstBuffer   string
	Comment       string // 23.02+
	CoreCnt       uint32
	EndTime       int64
	Features      string
	Flags         uint64 // RESERVE_FLAG_*
	Licenses      string
	MaxStartDelay uint32
	Name          string
	NodeCnt       uint32
	NodeList      string
	Partition     string
	PurgeCompTime uint32
	ResvWatts     uint32 // to 25.05 (ignored by 24.05+ clients; slurmctld sends its stored value)
	StartTime     int64
	TRES          string // tres_str, e.g. "cpu=64,node=2"
	Users         string
	Groups        string
	QOS           string // 25.11+
	AllowedParts  string // 25.11+
	// NodeInx is the node bitmap's hex text ("0x…", indexes into the
	// RESPONSE_NODE_INFO table) of NodeInxBits bits; "" sends a NULL
	// bitmap (a reservation without nodes).
	NodeInxBits uint32
	NodeInx     string
	CoreSpec    []ReservationCoreSpec
}

// reservationMinLen is the smallest encoded record (22.05: 10 NULL
// strings, 5 u32, 2 times, u64 flags, NULL bitmap, core_spec_cnt).
const reservationMinLen = 92

func (v *ReservationInfo) decode(r *Reader, version uint16) {
	v.Accounts = r.String()
	v.BurstBuffer = r.String()
	if version >= V23_02 {
		v.Comment = r.String()
	}
	v.CoreCnt = r.U32()
	v.EndTime = r.Time()
	v.Features = r.String()
	v.Flags = r.U64()
	v.Licenses = r.String()
	v.MaxStartDelay = r.U32()
	v.Name = r.String()
	v.NodeCnt = r.U32()
	v.NodeList = r.String()
	v.Partition = r.String()
	v.PurgeCompTime = r.U32()
	if version < V25_11 {
		v.ResvWatts = r.U32()
	}
	v.StartTime = r.Time()
	v.TRES = r.String()
	v.Users = r.String()
	v.Groups = r.String()
	if version >= V25_11 {
		v.QOS = r.String()
		v.AllowedParts = r.String()
	}
	nbits, hex, null := r.Bitstr()
	if !null && len(hex) > 0 { // a count with a NULL hex string is no bitmap either
		v.NodeInxBits, v.NodeInx = nbits, string(hex)
	}
	n := miscCount(r, 8)
	if n > 0 && r.Err == nil {
		v.CoreSpec = make([]ReservationCoreSpec, n)
	}
	for i := range v.CoreSpec {
		v.CoreSpec[i].NodeName = r.String()
		v.CoreSpec[i].CoreID = r.String()
	}
}

func (v *ReservationInfo) encode(w *Writer, version uint16) {
	w.Str(v.Accounts)
	w.Str(v.BurstBuffer)
	if version >= V23_02 {
		w.Str(v.Comment)
	}
	w.U32(v.CoreCnt)
	w.Time(v.EndTime)
	w.Str(v.Features)
	w.U64(v.Flags)
	w.Str(v.Licenses)
	w.U32(v.MaxStartDelay)
	w.Str(v.Name)
	w.U32(v.NodeCnt)
	w.Str(v.NodeList)
	w.Str(v.Partition)
	w.U32(v.PurgeCompTime)
	if version < V25_11 {
		w.U32(v.ResvWatts)
	}
	w.Time(v.StartTime)
	w.Str(v.TRES)
	w.Str(v.Users)
	w.Str(v.Groups)
	if version >= V25_11 {
		w.Str(v.QOS)
		w.Str(v.AllowedParts)
	}
	if v.NodeInx == "" {
		w.BitstrNull()
	} else {
		w.U32(v.NodeInxBits)
		w.Str(v.NodeInx)
	}
	w.U32(uint32(len(v.CoreSpec)))
	for _, c := range v.CoreSpec {
		w.Str(c.NodeName)
		w.Str(c.CoreID)
	}
}

// ReservationInfoMsg is RESPONSE_RESERVATION_INFO (2025): u32 count,
// time last_update, records. With no reservations (count 0) scontrol
// prints "No reservations in the system".
type ReservationInfoMsg struct {
	LastUpdate   int64
	Reservations []ReservationInfo
}

func (m *ReservationInfoMsg) Decode(r *Reader, version uint16) error {
	*m = ReservationInfoMsg{}
	n := miscCount(r, reservationMinLen)
	m.LastUpdate = r.Time()
	if n > 0 && r.Err == nil {
		m.Reservations = make([]ReservationInfo, n)
	}
	for i := range m.Reservations {
		m.Reservations[i].decode(r, version)
		if r.Err != nil {
			break
		}
	}
	return miscEnd(r)
}

func (m *ReservationInfoMsg) Encode(w *Writer, version uint16) {
	w.U32(uint32(len(m.Reservations)))
	w.Time(m.LastUpdate)
	for i := range m.Reservations {
		m.Reservations[i].encode(w, version)
	}
}

// ShareInfoRequest is REQUEST_SHARE_INFO (2022): two lists of names
// (slurm_pack_list of packstr; NO_VAL = NULL list), the same in every
// version. sshare sends its own user name in Users unless -a or -u was
// given; `sshare -a` sends both lists NULL. The names are views into the
// decoded buffer (copy them to keep them); reusing one request value
// makes decoding allocation-free.
type ShareInfoRequest struct {
	Accounts    [][]byte
	AccountsSet bool // false: NULL list (no account filter)
	Users       [][]byte
	UsersSet    bool // false: NULL list (no user filter)
}

func (m *ShareInfoRequest) Decode(r *Reader, version uint16) error {
	m.Accounts, m.AccountsSet = shareNames(r, m.Accounts[:0])
	m.Users, m.UsersSet = shareNames(r, m.Users[:0])
	return miscEnd(r)
}

func shareNames(r *Reader, dst [][]byte) ([][]byte, bool) {
	n, null := miscList(r, 4)
	for i := uint32(0); i < n && r.Err == nil; i++ {
		s := r.Str()
		if len(s) == 0 {
			s = nil // NULL and "" both mean an empty name
		}
		dst = append(dst, s)
	}
	return dst, !null
}

func (m *ShareInfoRequest) Encode(w *Writer, version uint16) {
	for _, l := range [2]struct {
		set   bool
		names [][]byte
	}{{m.AccountsSet, m.Accounts}, {m.UsersSet, m.Users}} {
		if !l.set {
			w.U32(NoVal)
			continue
		}
		w.U32(uint32(len(l.names)))
		for _, s := range l.names {
			w.StrBytes(s)
		}
	}
}

// AssocShares is one association row of RESPONSE_SHARE_INFO
// (_pack_assoc_shares_object, same in 22.05-26.05).
type AssocShares struct {
	AssocID    uint32
	Cluster    string
	Name       string // user name for a user row, else account name
	Parent     string // parent account; NULL for root
	Partition  string
	SharesNorm float64
	SharesRaw  uint32 // SLURMDB_FS_USE_PARENT (0x7FFFFFFF) for "parent"
	// TRESRunSecs, TRESGrpMins and UsageTRESRaw have one entry per
	// ShareInfo.TRESNames entry: clients refuse other counts for the
	// first two, and Encode pads or cuts all three to that length.
	TRESRunSecs  []uint64
	TRESGrpMins  []uint64
	UsageEfctv   float64
	UsageNorm    float64
	UsageRaw     uint64
	UsageTRESRaw []float64 // long doubles, sent as "%Lf" strings
	FSFactor     float64
	LevelFS      float64
	User         bool // u16 on the wire: 1 for a user row
}

// ShareInfo is RESPONSE_SHARE_INFO (2023): the TRES names, the rows and
// tot_shares. slurmctld sends the row count NO_VAL when there are none;
// Encode does the same for an empty Assocs.
type ShareInfo struct {
	TRESNames []string
	Assocs    []AssocShares
	TotShares uint64
}

// assocSharesMinLen: u32, 4 NULL strings, double, u32, 3 empty arrays,
// 2 doubles, u64, 2 doubles, u16.
const assocSharesMinLen = 4 + 16 + 8 + 4 + 12 + 16 + 8 + 16 + 2

var errShareTRESCount = &Error{Code: ESLURM_PROTOCOL_INCOMPLETE_PACKET, Msg: "share TRES array count differs from tres_cnt"}

func (m *ShareInfo) Decode(r *Reader, version uint16) error {
	*m = ShareInfo{}
	m.TRESNames = r.StrArray()
	tres := uint32(len(m.TRESNames))
	n, _ := miscList(r, assocSharesMinLen)
	if n > 0 && r.Err == nil {
		m.Assocs = make([]AssocShares, n)
	}
	for i := range m.Assocs {
		a := &m.Assocs[i]
		a.AssocID = r.U32()
		a.Cluster = r.String()
		a.Name = r.String()
		a.Parent = r.String()
		a.Partition = r.String()
		a.SharesNorm = r.Double()
		a.SharesRaw = r.U32()
		for _, p := range [2]*[]uint64{&a.TRESRunSecs, &a.TRESGrpMins} {
			c := miscCount(r, 8)
			if r.Err == nil && c != tres {
				return errShareTRESCount
			}
			if c > 0 {
				*p = make([]uint64, c)
			}
			for j := range *p {
				(*p)[j] = r.U64()
			}
		}
		a.UsageEfctv = r.Double()
		a.UsageNorm = r.Double()
		a.UsageRaw = r.U64()
		c := miscCount(r, 4)
		if c > 0 && r.Err == nil {
			a.UsageTRESRaw = make([]float64, c)
		}
		for j := range a.UsageTRESRaw {
			a.UsageTRESRaw[j] = shareLongDouble(r)
		}
		a.FSFactor = r.Double()
		a.LevelFS = r.Double()
		a.User = r.U16() != 0
		if r.Err != nil {
			break
		}
	}
	m.TotShares = r.U64()
	return miscEnd(r)
}

var errShareLongDouble = &Error{Code: ESLURM_PROTOCOL_INCOMPLETE_PACKET, Msg: "bad long double text"}

// shareLongDouble reads packlongdouble: the "%Lf" text of the value.
// Like Slurm, NaN reads as 0.
func shareLongDouble(r *Reader) float64 {
	s := r.Str()
	if r.Err != nil {
		return 0
	}
	v, err := strconv.ParseFloat(string(s), 64)
	if err != nil {
		r.fail(errShareLongDouble)
		return 0
	}
	if math.IsNaN(v) {
		return 0
	}
	return v
}

// shareLongDoubleText formats v as C's "%Lf" does (six decimals, "inf").
func shareLongDoubleText(dst []byte, v float64) []byte {
	switch {
	case math.IsInf(v, 1):
		return append(dst, "inf"...)
	case math.IsInf(v, -1):
		return append(dst, "-inf"...)
	case math.IsNaN(v):
		return append(dst, "nan"...)
	}
	return strconv.AppendFloat(dst, v, 'f', 6, 64)
}

func (m *ShareInfo) Encode(w *Writer, version uint16) {
	w.StrArray(m.TRESNames)
	tres := len(m.TRESNames)
	if len(m.Assocs) == 0 {
		w.U32(NoVal)
	} else {
		w.U32(uint32(len(m.Assocs)))
	}
	var num [64]byte
	for i := range m.Assocs {
		a := &m.Assocs[i]
		w.U32(a.AssocID)
		w.Str(a.Cluster)
		w.Str(a.Name)
		w.Str(a.Parent)
		w.Str(a.Partition)
		w.Double(a.SharesNorm)
		w.U32(a.SharesRaw)
		for _, p := range [2][]uint64{a.TRESRunSecs, a.TRESGrpMins} {
			w.U32(uint32(tres))
			for j := 0; j < tres; j++ {
				if j < len(p) {
					w.U64(p[j])
				} else {
					w.U64(0)
				}
			}
		}
		w.Double(a.UsageEfctv)
		w.Double(a.UsageNorm)
		w.U64(a.UsageRaw)
		w.U32(uint32(tres))
		for j := 0; j < tres; j++ {
			v := 0.0
			if j < len(a.UsageTRESRaw) {
				v = a.UsageTRESRaw[j]
			}
			w.StrBytes(shareLongDoubleText(num[:0], v))
		}
		w.Double(a.FSFactor)
		w.Double(a.LevelFS)
		if a.User {
			w.U16(1)
		} else {
			w.U16(0)
		}
	}
	w.U64(m.TotShares)
}

// SlurmRCMsg is RESPONSE_SLURM_RC_MSG (8002): a return code and a
// message (same in 22.05-26.05). The client logs the message line by
// line with error() and then treats the reply as RESPONSE_SLURM_RC.
// "" is sent as NULL (update_job's reply carries NULL).
type SlurmRCMsg struct {
	RC      uint32
	Message string
}

func (m *SlurmRCMsg) Decode(r *Reader, version uint16) error {
	m.RC = r.U32()
	m.Message = r.String()
	return miscEnd(r)
}

func (m *SlurmRCMsg) Encode(w *Writer, version uint16) {
	w.U32(m.RC)
	w.Str(m.Message)
}

// Bits of JobReadyResponse.Ready (READY_* in slurm.h).
const (
	JobReadyNodes  uint32 = 1 << 0 // the job's nodes are ready
	JobReadyJob    uint32 = 1 << 1 // the job is ready to run
	JobReadyProlog uint32 = 1 << 2 // PrologSlurmctld has finished
)

// JobReadyRequest is REQUEST_JOB_READY (4019), sent by salloc, srun and
// `scontrol wait_job`. Up to 25.05: u32 job_id, u16 show_flags. From
// 25.11 the job id is a whole step id (u64 sluid, job, step, het comp);
// older requests decode with the rest of the step id as
// SLURM_STEP_ID_INITIALIZER leaves it (sluid 0, step and het comp NO_VAL).
type JobReadyRequest JobInfoSingleRequest

// Decode reads the body: the same layout as REQUEST_JOB_INFO_SINGLE, and
// nothing after it.
func (m *JobReadyRequest) Decode(r *Reader, version uint16) error {
	if err := (*JobInfoSingleRequest)(m).Decode(r, version); err != nil {
		return err
	}
	return miscEnd(r)
}

// Encode writes the body.
func (m *JobReadyRequest) Encode(w *Writer, version uint16) {
	(*JobInfoSingleRequest)(m).Encode(w, version)
}

// JobReadyResponse is RESPONSE_JOB_READY (4020), a return-code body
// holding JobReady* bits. slurmctld sends the same body as
// RESPONSE_PROLOG_EXECUTING (6019) while PrologSlurmctld still runs, and
// RESPONSE_SLURM_RC with an error (e.g. ESLURM_INVALID_JOB_ID) instead.
type JobReadyResponse struct {
	Ready uint32
}

func (m *JobReadyResponse) Decode(r *Reader, version uint16) error {
	m.Ready = r.U32()
	return miscEnd(r)
}

func (m *JobReadyResponse) Encode(w *Writer, version uint16) { w.U32(m.Ready) }

// Values of ConfigRequest.Flags (config_request_flags_t).
const (
	ConfigRequestSlurmConf uint32 = 0 // a client (configless bootstrap)
	ConfigRequestSlurmd    uint32 = 1 // slurmd, SlurmUser only
	ConfigRequestSackd     uint32 = 2 // sackd, 23.11+
)

// ConfigRequest is REQUEST_CONFIG (2015), configless clients fetching
// slurm.conf: u32 flags; 25.05+ add u16 port (the sackd port to push
// changes to; 0 from other senders, and from a sackd without --port).
// Layouts read in src/common/slurm_protocol_pack.c at slurm-22-05-8-1,
// 23-11-10-1, 24-11-5-1, 25-05-0-1 and 26-05-3-1.
//
// The reply, RESPONSE_CONFIG (2016, ConfigResponse), is a slurm_pack_list
// (u32 count, NO_VAL for none) of config_file records then str
// slurmd_spooldir (NULL for clients). Each record is bool exists, (23.11+)
// bool execute, str file_name, str file_content. Clients need an entry
// named "slurm.conf" and read everything from it. The same body is
// REQUEST_RECONFIGURE_SACKD (1006, 23.11+), slurmctld's push to a sackd.
//
// The files slurmctld lists, each from slurm.conf's directory, a missing
// one as exists=false (fetch_config.c, proc_req.c in 22.05/23.02):
//
//	clients 22.05-23.02: slurm.conf cli_filter.lua plugstack.conf topology.conf
//	clients 23.11-25.05: the same, then oci.conf scrun.lua
//	clients 25.11+:      cli_filter.lua oci.conf plugstack.conf scrun.lua slurm.conf topology.conf topology.yaml
//	slurmd 22.05-23.11:  slurm.conf acct_gather.conf cgroup.conf cli_filter.lua ext_sensors.conf gres.conf
//	                     helpers.conf job_container.conf knl_cray.conf mpi.conf oci.conf plugstack.conf
//	                     (23.11: scrun.lua) topology.conf
//	slurmd 24.05-25.05:  the same without ext_sensors.conf and knl_cray.conf, with scrun.lua
//	slurmd 25.11+:       sorted by name, adding namespace.yaml and topology.yaml
//
// each followed by the files its Include lines name (slurmd's list also
// by relative Prolog/Epilog scripts, execute=true, 23.11+). When
// SlurmctldParameters lacks enable_configless slurmctld answers
// RESPONSE_SLURM_RC ESLURM_CONFIGLESS_DISABLED (2126) instead, and flags
// with CONFIG_REQUEST_SLURMD from a uid other than root or SlurmUser get
// ESLURM_USER_ID_MISSING (2010).
type ConfigRequest struct {
	Flags uint32
	Port  uint16 // 25.05+
}

func (m *ConfigRequest) Decode(r *Reader, version uint16) error {
	m.Flags = r.U32()
	m.Port = 0
	if version >= V25_05 {
		m.Port = r.U16()
	}
	return miscEnd(r)
}

func (m *ConfigRequest) Encode(w *Writer, version uint16) {
	w.U32(m.Flags)
	if version >= V25_05 {
		w.U16(m.Port)
	}
}

// ConfigFile is one file of RESPONSE_CONFIG.
type ConfigFile struct {
	Exists  bool   // false: named in the config but absent
	Execute bool   // 23.11+: a script slurmd must make executable
	Name    string // e.g. "slurm.conf"
	Content string
}

// ConfigResponse is RESPONSE_CONFIG (2016); see ConfigRequest. A nil
// Files list is sent NULL (clients then fail: they need slurm.conf).
type ConfigResponse struct {
	Files          []ConfigFile
	SlurmdSpoolDir string
}

func (m *ConfigResponse) Decode(r *Reader, version uint16) error {
	*m = ConfigResponse{}
	n, null := miscList(r, 9) // 1 bool + 2 strings at least
	if !null && r.Err == nil {
		m.Files = make([]ConfigFile, n)
	}
	for i := range m.Files {
		f := &m.Files[i]
		f.Exists = r.U8() != 0
		if version >= V23_11 {
			f.Execute = r.U8() != 0
		}
		f.Name = r.String()
		f.Content = r.String()
	}
	m.SlurmdSpoolDir = r.String()
	return miscEnd(r)
}

func (m *ConfigResponse) Encode(w *Writer, version uint16) {
	if m.Files == nil {
		w.U32(NoVal)
	} else {
		w.U32(uint32(len(m.Files)))
	}
	for _, f := range m.Files {
		w.Bool(f.Exists)
		if version >= V23_11 {
			w.Bool(f.Execute)
		}
		w.Str(f.Name)
		w.Str(f.Content)
	}
	w.Str(m.SlurmdSpoolDir)
}

// BatchScriptRequest is REQUEST_BATCH_SCRIPT (2051), `scontrol write
// batch_script`: a job_id_msg_t, the layout of REQUEST_JOB_READY.
type BatchScriptRequest JobReadyRequest

func (m *BatchScriptRequest) Decode(r *Reader, version uint16) error {
	return (*JobReadyRequest)(m).Decode(r, version)
}

func (m *BatchScriptRequest) Encode(w *Writer, version uint16) {
	(*JobReadyRequest)(m).Encode(w, version)
}

// BatchScriptResponse is RESPONSE_BATCH_SCRIPT (2052): the script as one
// packstr, in every release.
type BatchScriptResponse struct {
	Script string
}

func (m *BatchScriptResponse) Decode(r *Reader, version uint16) error {
	m.Script = r.String()
	return miscEnd(r)
}

func (m *BatchScriptResponse) Encode(w *Writer, version uint16) { w.Str(m.Script) }
