package codec

import (
	"encoding/binary"
	"fmt"
)

// slurmdbd's protocol (what sacct, sacctmgr and sreport speak to
// AccountingStorageHost:AccountingStoragePort).
//
// A connection opens with REQUEST_PERSIST_INIT: a whole Slurm message
// (header, auth credential, body) whose header flags carry
// SLURMDBD_CONNECTION, so pack_header writes the message type once more
// before the header. The answer, and everything after on the connection,
// is a "persist" frame: u32 length, u16 message type, the body packed at
// the client's protocol version; no header, no credential.
// (src/common/persist_conn.c, src/common/slurmdbd_pack.c,
// src/common/slurmdb_pack.c.)

// slurmdbd message types (slurmdbd_defs.h).
const (
	REQUEST_PERSIST_INIT     uint16 = 6500
	REQUEST_PERSIST_INIT_TLS uint16 = 6501
	PERSIST_RC               uint16 = 1433
	DBD_FINI                 uint16 = 1401
	DBD_GET_ACCOUNTS         uint16 = 1409
	DBD_GET_ASSOCS           uint16 = 1410
	DBD_GET_CLUSTERS         uint16 = 1412
	DBD_GET_USERS            uint16 = 1415
	DBD_GOT_JOBS             uint16 = 1421
	DBD_GET_JOBS_COND        uint16 = 1444
	DBD_GET_QOS              uint16 = 1448
	DBD_GET_TRES             uint16 = 1486
	DBD_GOT_TRES             uint16 = 1487

	FlagDBDConnection uint16 = 2 // SLURMDBD_CONNECTION

	PersistTypeDBD       = 1       // PERSIST_TYPE_DBD
	PersistFlagUserCase  = 8       // PERSIST_FLAG_P_USER_CASE
	SLURMDBD_MAX_MSG_LEN = 1 << 30 // MAX_MSG_SIZE: what a client accepts
)

// DBDVersion reports whether the accounting records of a protocol
// version are known here (the wire formats of the three releases served).
func DBDVersion(v uint16) bool { return v == V22_05 || v == V24_11 || v == V26_05 }

// PersistInit is persist_init_req_msg_t, REQUEST_PERSIST_INIT's body.
type PersistInit struct {
	Version     uint16
	ClusterName string
	PersistType uint16
	Port        uint16
}

// DecodePersistInit reads the opening message of a slurmdbd connection:
// b is the whole frame (its 4-byte length included). The frame's header
// and credential are in f.
func DecodePersistInit(b []byte, f *Frame, m *PersistInit) error {
	if len(b) < 6 {
		return ErrShort
	}
	if t := binary.BigEndian.Uint16(b[4:]); t != REQUEST_PERSIST_INIT {
		return Errorf(SLURM_UNEXPECTED_MSG_ERROR, "persist connection opened with message type %d", t)
	}
	// Without the extra type, the rest is a plain frame.
	p := make([]byte, 0, len(b)-2)
	p = binary.BigEndian.AppendUint32(p, uint32(len(b)-6))
	p = append(p, b[6:]...)
	if err := DecodeFrame(p, f); err != nil {
		return err
	}
	if f.MsgType != REQUEST_PERSIST_INIT {
		return Errorf(SLURM_UNEXPECTED_MSG_ERROR, "persist init header says message type %d", f.MsgType)
	}
	r := NewReader(f.Body)
	m.Version = r.U16()
	m.ClusterName = r.String()
	m.PersistType = r.U16()
	m.Port = r.U16()
	return r.Err
}

// AppendPersistInit is DecodePersistInit's inverse (cred: the credential
// text), for tests and the bench.
func AppendPersistInit(dst []byte, cred []byte, m *PersistInit) []byte {
	var w Writer
	w.U16(m.Version)
	w.Str(m.ClusterName)
	w.U16(m.PersistType)
	w.U16(m.Port)
	fr := AppendFrame(nil, m.Version, REQUEST_PERSIST_INIT, cred, w.B)
	// The flags: SLURM_GLOBAL_AUTH_KEY | SLURMDBD_CONNECTION.
	binary.BigEndian.PutUint16(fr[6:], 1|FlagDBDConnection)
	dst = binary.BigEndian.AppendUint32(dst, uint32(len(fr)-4+2))
	dst = binary.BigEndian.AppendUint16(dst, REQUEST_PERSIST_INIT)
	return append(dst, fr[4:]...)
}

// PersistRC is persist_rc_msg_t (PERSIST_RC's body).
type PersistRC struct {
	Comment string
	Flags   uint16
	RC      uint32
	RetInfo uint16
}

func (m *PersistRC) Encode(w *Writer) {
	w.Str(m.Comment)
	w.U16(m.Flags)
	w.U32(m.RC)
	w.U16(m.RetInfo)
}

func (m *PersistRC) Decode(r *Reader) error {
	m.Comment = r.String()
	m.Flags = r.U16()
	m.RC = r.U32()
	m.RetInfo = r.U16()
	return r.Err
}

// DBDFrameLen is the length of the persist frame at the start of b (0
// until its length prefix is there).
func DBDFrameLen(b []byte) (int, error) {
	n, err := FrameLen(b) // the same length prefix as a Slurm frame's
	if err == nil && n != 0 && n < 6 {
		return 0, Errorf(SLURM_PROTOCOL_INSANE_MSG_LENGTH, "persist frame of %d bytes", n-4)
	}
	return n, err
}

// DecodeDBDFrame splits a whole persist frame into its type and body.
func DecodeDBDFrame(b []byte) (uint16, []byte, error) {
	n, err := DBDFrameLen(b)
	if err != nil {
		return 0, nil, err
	}
	if n == 0 || n != len(b) {
		return 0, nil, ErrShort
	}
	return binary.BigEndian.Uint16(b[4:]), b[6:], nil
}

// AppendDBDFrame appends a persist frame of msgType and body.
func AppendDBDFrame(dst []byte, msgType uint16, body []byte) []byte {
	dst = binary.BigEndian.AppendUint32(dst, uint32(len(body)+2))
	dst = binary.BigEndian.AppendUint16(dst, msgType)
	return append(dst, body...)
}

// DBDFini is dbd_fini_msg_t.
type DBDFini struct{ CloseConn, Commit uint16 }

func (m *DBDFini) Decode(r *Reader) error {
	m.CloseConn, m.Commit = r.U16(), r.U16()
	return r.Err
}

func (m *DBDFini) Encode(w *Writer) { w.U16(m.CloseConn); w.U16(m.Commit) }

// JOBCOND_FLAG_* (slurmdb.h).
const (
	JobCondDup     uint32 = 1 << 0
	JobCondNoStep  uint32 = 1 << 1
	JobCondNoTrunc uint32 = 1 << 2
)

// SelectedStep is slurm_selected_step_t: a job, array task or step asked
// for with -j.
type SelectedStep struct {
	StepID       JobStepID
	ArrayTaskID  uint32
	HetJobOffset uint32
	// ArrayBits/ArrayHex: the array_bitmap (24.11+), hex; NBits 0: none.
	ArrayBits uint32
	ArrayHex  string
}

// JobCond is slurmdb_job_cond_t (DBD_GET_JOBS_COND's body). Lists are nil
// when NULL (NO_VAL count).
type JobCond struct {
	AcctList, AssocIDList, ClusterList, ConstraintList []string
	CPUsMax, CPUsMin, DBFlags, ExitCode, Flags         uint32
	FormatList, GroupIDList, JobNameList               []string
	NodesMax, NodesMin                                 uint32
	PartitionList, QOSList, ReasonList, ResvList       []string
	ResvIDList                                         []string
	StepList                                           []SelectedStep
	StepListSet                                        bool // the list was sent (even empty)
	StateList                                          []string
	TimelimitMax, TimelimitMin                         uint32
	UsageEnd, UsageStart                               int64
	UsedNodes                                          string
	UserIDList, WCKeyList                              []string
}

func readStrList(r *Reader) []string {
	n, null := r.Count(4)
	if null {
		return nil
	}
	out := make([]string, 0, n)
	for i := uint32(0); i < n && r.Err == nil; i++ {
		out = append(out, r.String())
	}
	return out
}

func writeStrList(w *Writer, l []string) {
	if l == nil {
		w.U32(NoVal)
		return
	}
	w.U32(uint32(len(l)))
	for _, s := range l {
		w.Str(s)
	}
}

func (s *SelectedStep) decode(r *Reader, v uint16) {
	s.StepID.Decode(r, v)
	s.ArrayTaskID = r.U32()
	s.HetJobOffset = r.U32()
	if v >= V24_11 {
		n, hex, null := r.Bitstr()
		if !null {
			s.ArrayBits, s.ArrayHex = n, string(hex)
		}
	}
}

func (s *SelectedStep) encode(w *Writer, v uint16) {
	s.StepID.Encode(w, v)
	w.U32(s.ArrayTaskID)
	w.U32(s.HetJobOffset)
	if v >= V24_11 {
		if s.ArrayBits == 0 {
			w.BitstrNull()
		} else {
			w.U32(s.ArrayBits)
			w.Str(s.ArrayHex)
		}
	}
}

func (m *JobCond) Decode(r *Reader, v uint16) error {
	*m = JobCond{}
	m.AcctList = readStrList(r)
	m.AssocIDList = readStrList(r)
	m.ClusterList = readStrList(r)
	m.ConstraintList = readStrList(r)
	m.CPUsMax, m.CPUsMin, m.DBFlags, m.ExitCode, m.Flags = r.U32(), r.U32(), r.U32(), r.U32(), r.U32()
	m.FormatList = readStrList(r)
	m.GroupIDList = readStrList(r)
	m.JobNameList = readStrList(r)
	m.NodesMax, m.NodesMin = r.U32(), r.U32()
	m.PartitionList = readStrList(r)
	m.QOSList = readStrList(r)
	m.ReasonList = readStrList(r)
	m.ResvList = readStrList(r)
	m.ResvIDList = readStrList(r)
	if n, null := r.Count(20); !null {
		m.StepListSet = true
		for i := uint32(0); i < n && r.Err == nil; i++ {
			var s SelectedStep
			s.decode(r, v)
			m.StepList = append(m.StepList, s)
		}
	}
	m.StateList = readStrList(r)
	m.TimelimitMax, m.TimelimitMin = r.U32(), r.U32()
	m.UsageEnd, m.UsageStart = r.Time(), r.Time()
	m.UsedNodes = r.String()
	m.UserIDList = readStrList(r)
	m.WCKeyList = readStrList(r)
	return r.Err
}

func (m *JobCond) Encode(w *Writer, v uint16) {
	writeStrList(w, m.AcctList)
	writeStrList(w, m.AssocIDList)
	writeStrList(w, m.ClusterList)
	writeStrList(w, m.ConstraintList)
	w.U32(m.CPUsMax)
	w.U32(m.CPUsMin)
	w.U32(m.DBFlags)
	w.U32(m.ExitCode)
	w.U32(m.Flags)
	writeStrList(w, m.FormatList)
	writeStrList(w, m.GroupIDList)
	writeStrList(w, m.JobNameList)
	w.U32(m.NodesMax)
	w.U32(m.NodesMin)
	writeStrList(w, m.PartitionList)
	writeStrList(w, m.QOSList)
	writeStrList(w, m.ReasonList)
	writeStrList(w, m.ResvList)
	writeStrList(w, m.ResvIDList)
	if !m.StepListSet {
		w.U32(NoVal)
	} else {
		w.U32(uint32(len(m.StepList)))
		for i := range m.StepList {
			m.StepList[i].encode(w, v)
		}
	}
	writeStrList(w, m.StateList)
	w.U32(m.TimelimitMax)
	w.U32(m.TimelimitMin)
	w.Time(m.UsageEnd)
	w.Time(m.UsageStart)
	w.Str(m.UsedNodes)
	writeStrList(w, m.UserIDList)
	writeStrList(w, m.WCKeyList)
}

// dbdPacker packs or unpacks one field list, so that a record's encoder
// and decoder are one list of fields and cannot disagree. Strings that
// are empty but not NULL are kept in the record's EmptyStrs, a bit per
// string in field order, so records round-trip byte for byte.
type dbdPacker interface {
	u16(*uint16)
	u32(*uint32)
	u64(*uint64)
	tm(*int64)
	str(*string)
	dbl(*float64)
	stepID(*JobStepID)
	count(n int) int             // writes n, or reads and returns the count
	sub(empty *uint64) dbdPacker // the packer of a record inside
}

type dbdW struct {
	w     *Writer
	v     uint16
	empty *uint64
	i     int
}

func (p *dbdW) u16(x *uint16)       { p.w.U16(*x) }
func (p *dbdW) u32(x *uint32)       { p.w.U32(*x) }
func (p *dbdW) u64(x *uint64)       { p.w.U64(*x) }
func (p *dbdW) tm(x *int64)         { p.w.Time(*x) }
func (p *dbdW) dbl(x *float64)      { p.w.Double(*x) }
func (p *dbdW) stepID(x *JobStepID) { x.Encode(p.w, p.v) }
func (p *dbdW) count(n int) int     { p.w.U32(uint32(n)); return n }
func (p *dbdW) sub(e *uint64) dbdPacker {
	return &dbdW{w: p.w, v: p.v, empty: e}
}
func (p *dbdW) str(x *string) {
	if *x == "" && p.i < 64 && *p.empty&(1<<p.i) != 0 {
		p.w.StrEmpty()
	} else {
		p.w.Str(*x)
	}
	p.i++
}

type dbdR struct {
	r     *Reader
	v     uint16
	empty *uint64
	i     int
}

func (p *dbdR) u16(x *uint16)       { *x = p.r.U16() }
func (p *dbdR) u32(x *uint32)       { *x = p.r.U32() }
func (p *dbdR) u64(x *uint64)       { *x = p.r.U64() }
func (p *dbdR) tm(x *int64)         { *x = p.r.Time() }
func (p *dbdR) dbl(x *float64)      { *x = p.r.Double() }
func (p *dbdR) stepID(x *JobStepID) { x.Decode(p.r, p.v) }
func (p *dbdR) sub(e *uint64) dbdPacker {
	return &dbdR{r: p.r, v: p.v, empty: e}
}
func (p *dbdR) count(int) int {
	n, null := p.r.Count(8)
	if null {
		return 0
	}
	return int(n)
}
func (p *dbdR) str(x *string) {
	b, null := p.r.StrNull()
	*x = string(b)
	if !null && len(b) == 0 && p.i < 64 {
		*p.empty |= 1 << p.i
	}
	p.i++
}

// DBDStats is slurmdb_stats_t as a step record carries it.
type DBDStats struct {
	ActCPUFreq     float64
	ConsumedEnergy uint64
	// TRES usage strings, in wire order: in ave, max, max nodeid, max
	// taskid, min, min nodeid, min taskid, tot; then the same for out.
	TRESUsage [16]string
}

func (s *DBDStats) fields(p dbdPacker) {
	p.dbl(&s.ActCPUFreq)
	p.u64(&s.ConsumedEnergy)
	for i := range s.TRESUsage {
		p.str(&s.TRESUsage[i])
	}
}

// DBDStep is slurmdb_step_rec_t.
type DBDStep struct {
	Container                                   string
	Elapsed                                     uint32
	End                                         int64
	ExitCode                                    uint32
	NNodes                                      uint32
	Nodes                                       string
	NTasks                                      uint32
	ReqCPUFreqMin, ReqCPUFreqMax, ReqCPUFreqGov uint32
	ReqUID                                      uint32
	Stats                                       DBDStats
	Start                                       int64
	State                                       uint16
	StepID                                      JobStepID
	StepName                                    string
	Cwd, StdErr, StdIn, StdOut                  string // 25.05+
	SubmitLine                                  string
	Suspended                                   uint32
	SysCPUSec                                   uint64
	SysCPUUsec                                  uint32
	TaskDist                                    uint32
	Timelimit                                   uint32 // 25.05+
	TotCPUSec                                   uint64
	TotCPUUsec                                  uint32
	TRESAlloc                                   string
	UserCPUSec                                  uint64
	UserCPUUsec                                 uint32

	EmptyStrs uint64 // strings sent as "" rather than NULL (dbdPacker)
}

func (s *DBDStep) fields(p dbdPacker, v uint16) {
	p.str(&s.Container)
	p.u32(&s.Elapsed)
	p.tm(&s.End)
	p.u32(&s.ExitCode)
	p.u32(&s.NNodes)
	p.str(&s.Nodes)
	p.u32(&s.NTasks)
	p.u32(&s.ReqCPUFreqMin)
	p.u32(&s.ReqCPUFreqMax)
	p.u32(&s.ReqCPUFreqGov)
	p.u32(&s.ReqUID)
	s.Stats.fields(p)
	p.tm(&s.Start)
	p.u16(&s.State)
	p.stepID(&s.StepID)
	p.str(&s.StepName)
	if v >= V25_05 {
		p.str(&s.Cwd)
		p.str(&s.StdErr)
		p.str(&s.StdIn)
		p.str(&s.StdOut)
	}
	p.str(&s.SubmitLine)
	p.u32(&s.Suspended)
	p.u64(&s.SysCPUSec)
	p.u32(&s.SysCPUUsec)
	p.u32(&s.TaskDist)
	if v >= V25_05 {
		p.u32(&s.Timelimit)
	}
	p.u64(&s.TotCPUSec)
	p.u32(&s.TotCPUUsec)
	p.str(&s.TRESAlloc)
	p.u64(&s.UserCPUSec)
	p.u32(&s.UserCPUUsec)
}

// DBDJob is slurmdb_job_rec_t, as DBD_GOT_JOBS carries it.
type DBDJob struct {
	Account, AdminComment         string
	AllocNodes                    uint32
	ArrayJobID, ArrayMaxTasks     uint32
	ArrayTaskID                   uint32 // NO_VAL: not an array task
	ArrayTaskStr                  string
	AssocID                       uint32
	BlockID, Cluster, Constraints string
	Container                     string
	DBIndex                       uint64
	DerivedEC                     uint32
	DerivedES                     string
	Elapsed                       uint32
	Eligible, End                 int64
	Env                           string
	Exclusive                     string // 26.05
	ExitCode                      uint32
	Extra, FailedNode             string // 24.11+
	Flags                         uint32
	GID, JobID                    uint32
	JobName                       string
	Lft                           uint32 // 22.05
	Licenses, Lineage             string // 24.11+
	MCSLabel, Nodes               string
	HetJobID, HetJobOffset        uint32
	Oversubscribe                 string // 26.05
	Partition                     string
	Priority, QOSID               uint32
	QOSReq                        string // 24.11+
	ReqCPUs                       uint32
	ReqMem                        uint64
	ReqUID                        uint32
	RestartCnt                    uint16 // 24.11+
	ResvName                      string
	ResvID                        uint32
	ResvReq                       string // 26.05
	Script                        string
	SLUID                         uint64 // 26.05
	ShowFull                      uint32
	Start                         int64
	State, StateReasonPrev        uint32
	Steps                         []DBDStep
	SegmentSize                   uint16 // 26.05
	StdErr, StdIn, StdOut         string // 24.11+
	Submit                        int64
	SubmitLine                    string
	Suspended                     uint32
	SystemComment                 string
	SysCPUSec, SysCPUUsec         uint64
	Timelimit                     uint32
	TotCPUSec, TotCPUUsec         uint64
	TRESAlloc, TRESReq            string
	UID                           uint32
	User                          string
	UserCPUSec, UserCPUUsec       uint64
	WCKey                         string
	WCKeyID                       uint32
	WorkDir                       string

	EmptyStrs uint64 // strings sent as "" rather than NULL (dbdPacker)
}

func (j *DBDJob) fields(p dbdPacker, v uint16) {
	v24, v26 := v >= V24_11, v >= V26_05
	p.str(&j.Account)
	p.str(&j.AdminComment)
	p.u32(&j.AllocNodes)
	p.u32(&j.ArrayJobID)
	p.u32(&j.ArrayMaxTasks)
	p.u32(&j.ArrayTaskID)
	p.str(&j.ArrayTaskStr)
	p.u32(&j.AssocID)
	p.str(&j.BlockID)
	p.str(&j.Cluster)
	p.str(&j.Constraints)
	p.str(&j.Container)
	p.u64(&j.DBIndex)
	p.u32(&j.DerivedEC)
	p.str(&j.DerivedES)
	p.u32(&j.Elapsed)
	p.tm(&j.Eligible)
	p.tm(&j.End)
	p.str(&j.Env)
	if v26 {
		p.str(&j.Exclusive)
	}
	p.u32(&j.ExitCode)
	if v24 {
		p.str(&j.Extra)
		p.str(&j.FailedNode)
	}
	p.u32(&j.Flags)
	p.u32(&j.GID)
	p.u32(&j.JobID)
	p.str(&j.JobName)
	if v24 {
		p.str(&j.Licenses)
		p.str(&j.Lineage)
	} else {
		p.u32(&j.Lft)
	}
	p.str(&j.MCSLabel)
	p.str(&j.Nodes)
	p.u32(&j.HetJobID)
	p.u32(&j.HetJobOffset)
	if v26 {
		p.str(&j.Oversubscribe)
	}
	p.str(&j.Partition)
	p.u32(&j.Priority)
	p.u32(&j.QOSID)
	if v24 {
		p.str(&j.QOSReq)
	}
	p.u32(&j.ReqCPUs)
	p.u64(&j.ReqMem)
	p.u32(&j.ReqUID)
	if v24 {
		p.u16(&j.RestartCnt)
	}
	p.str(&j.ResvName)
	p.u32(&j.ResvID)
	if v26 {
		p.str(&j.ResvReq)
	}
	p.str(&j.Script)
	if v26 {
		p.u64(&j.SLUID)
	}
	p.u32(&j.ShowFull)
	p.tm(&j.Start)
	p.u32(&j.State)
	p.u32(&j.StateReasonPrev)
	n := p.count(len(j.Steps))
	if len(j.Steps) != n {
		j.Steps = make([]DBDStep, n)
	}
	for i := range j.Steps {
		j.Steps[i].fields(p.sub(&j.Steps[i].EmptyStrs), v)
	}
	if v26 {
		p.u16(&j.SegmentSize)
	}
	if v24 {
		p.str(&j.StdErr)
		p.str(&j.StdIn)
		p.str(&j.StdOut)
	}
	p.tm(&j.Submit)
	p.str(&j.SubmitLine)
	p.u32(&j.Suspended)
	p.str(&j.SystemComment)
	p.u64(&j.SysCPUSec)
	p.u64(&j.SysCPUUsec)
	p.u32(&j.Timelimit)
	p.u64(&j.TotCPUSec)
	p.u64(&j.TotCPUUsec)
	p.str(&j.TRESAlloc)
	p.str(&j.TRESReq)
	p.u32(&j.UID)
	p.str(&j.User)
	p.u64(&j.UserCPUSec)
	p.u64(&j.UserCPUUsec)
	p.str(&j.WCKey)
	p.u32(&j.WCKeyID)
	p.str(&j.WorkDir)
}

// GotJobs is DBD_GOT_JOBS's body: the records, then a return code.
type GotJobs struct {
	Jobs []DBDJob
	Null bool // no list at all (NO_VAL): the client takes it as an error
	RC   uint32
	// Body, when set, is the whole body already encoded (by a
	// GotJobsBuilder), in pieces to send as they are (writev); Encode
	// writes them in order.
	Body [][]byte
}

// BodyLen is the length of an encoded Body.
func (m *GotJobs) BodyLen() int {
	n := 0
	for _, b := range m.Body {
		n += len(b)
	}
	return n
}

func (m *GotJobs) Encode(w *Writer, v uint16) {
	if m.Body != nil {
		for _, b := range m.Body {
			w.B = append(w.B, b...)
		}
		return
	}
	if m.Null {
		w.U32(NoVal)
		w.U32(m.RC)
		return
	}
	w.U32(uint32(len(m.Jobs)))
	for i := range m.Jobs {
		m.Jobs[i].fields(&dbdW{w: w, v: v, empty: &m.Jobs[i].EmptyStrs}, v)
	}
	w.U32(m.RC)
}

// GotJobsBuilder writes DBD_GOT_JOBS's body a record at a time: a
// month of history is too many records to hold as values first. Records
// go into chunks of about a megabyte (one contiguous buffer would be
// copied each time it doubled), joined once by Finish. Drop takes a
// record back out (a later run of the same job replacing it).
type GotJobsBuilder struct {
	v      uint16
	chunks [][]byte
	cur    Writer
	spans  []jobSpan
	dead   int
	size   int
}

type jobSpan struct{ chunk, start, end int }

const gotJobsChunk = 1 << 20

// NewGotJobsBuilder starts a body for version v.
func NewGotJobsBuilder(v uint16, _ int) *GotJobsBuilder {
	return &GotJobsBuilder{v: v, cur: Writer{B: make([]byte, 0, gotJobsChunk+gotJobsChunk/8)}}
}

// Add encodes j and returns its index.
func (b *GotJobsBuilder) Add(j *DBDJob) int {
	if len(b.cur.B) >= gotJobsChunk {
		b.chunks = append(b.chunks, b.cur.B)
		b.cur = Writer{B: make([]byte, 0, gotJobsChunk+gotJobsChunk/8)}
	}
	start := len(b.cur.B)
	j.fields(&dbdW{w: &b.cur, v: b.v, empty: &j.EmptyStrs}, b.v)
	b.spans = append(b.spans, jobSpan{len(b.chunks), start, len(b.cur.B)})
	b.size += len(b.cur.B) - start
	return len(b.spans) - 1
}

// Drop removes record i.
func (b *GotJobsBuilder) Drop(i int) {
	if s := &b.spans[i]; s.chunk >= 0 {
		b.size -= s.end - s.start
		s.chunk = -1
		b.dead++
	}
}

// Finish writes the count and rc and returns the body in pieces: the
// count, the records' bytes (each chunk whole where nothing was dropped
// from it), the rc. Nothing is copied.
func (b *GotJobsBuilder) Finish(rc uint32) [][]byte {
	chunks := append(b.chunks, b.cur.B)
	out := [][]byte{binary.BigEndian.AppendUint32(nil, uint32(len(b.spans)-b.dead))}
	// Consecutive live records of a chunk go out as one piece.
	cur, from, to := -1, 0, 0
	flush := func() {
		if cur >= 0 && to > from {
			out = append(out, chunks[cur][from:to])
		}
	}
	for _, s := range b.spans {
		if s.chunk < 0 {
			continue
		}
		if s.chunk == cur && s.start == to {
			to = s.end
			continue
		}
		flush()
		cur, from, to = s.chunk, s.start, s.end
	}
	flush()
	return append(out, binary.BigEndian.AppendUint32(nil, rc))
}

func (m *GotJobs) Decode(r *Reader, v uint16) error {
	*m = GotJobs{}
	n, null := r.Count(100)
	m.Null = null && r.Err == nil
	if !null {
		m.Jobs = make([]DBDJob, n)
		for i := range m.Jobs {
			m.Jobs[i].fields(&dbdR{r: r, v: v, empty: &m.Jobs[i].EmptyStrs}, v)
			if r.Err != nil {
				return r.Err
			}
		}
	}
	m.RC = r.U32()
	return r.Err
}

// TRESRec is slurmdb_tres_rec_t (DBD_GOT_TRES).
type TRESRec struct {
	AllocSecs, Count uint64
	ID               uint32
	Name, Type       string
}

// DefaultTRES are slurmdbd's built-in TRES (slurmdb_defs.h TRES_*: cpu,
// mem, energy, node, billing, fs/disk, vmem, pages), what a cluster with
// no AccountingStorageTRES additions has.
var DefaultTRES = []TRESRec{
	{ID: 1, Type: "cpu"}, {ID: 2, Type: "mem"}, {ID: 3, Type: "energy"}, {ID: 4, Type: "node"},
	{ID: 5, Type: "billing"}, {ID: 6, Type: "fs", Name: "disk"}, {ID: 7, Type: "vmem"}, {ID: 8, Type: "pages"},
}

// EncodeGotTRES writes DBD_GOT_TRES's body: the list, then a return code.
func EncodeGotTRES(w *Writer, _ uint16, l []TRESRec) {
	w.U32(uint32(len(l)))
	for _, t := range l {
		w.U64(t.AllocSecs)
		w.U64(t.Count)
		w.U32(t.ID)
		w.Str(t.Name)
		w.Str(t.Type)
	}
	w.U32(SLURM_SUCCESS)
}

// DecodeGotTRES reads DBD_GOT_TRES's body.
func DecodeGotTRES(r *Reader, _ uint16) ([]TRESRec, uint32, error) {
	n, null := r.Count(24)
	var out []TRESRec
	if !null {
		for i := uint32(0); i < n && r.Err == nil; i++ {
			out = append(out, TRESRec{AllocSecs: r.U64(), Count: r.U64(), ID: r.U32(), Name: r.String(), Type: r.String()})
		}
	}
	rc := r.U32()
	return out, rc, r.Err
}

var dbdNames = map[uint16]string{
	DBD_FINI: "DBD_FINI", DBD_GET_ACCOUNTS: "DBD_GET_ACCOUNTS", DBD_GET_ASSOCS: "DBD_GET_ASSOCS",
	DBD_GET_CLUSTERS: "DBD_GET_CLUSTERS", DBD_GET_USERS: "DBD_GET_USERS", DBD_GET_JOBS_COND: "DBD_GET_JOBS_COND",
	DBD_GET_QOS: "DBD_GET_QOS", DBD_GET_TRES: "DBD_GET_TRES", PERSIST_RC: "PERSIST_RC",
	DBD_GOT_JOBS: "DBD_GOT_JOBS", DBD_GOT_TRES: "DBD_GOT_TRES", DBD_ADD_ACCOUNTS: "DBD_ADD_ACCOUNTS",
	DBD_ADD_ACCOUNT_COORDS: "DBD_ADD_ACCOUNT_COORDS", DBD_ADD_ASSOCS: "DBD_ADD_ASSOCS",
	DBD_ADD_CLUSTERS: "DBD_ADD_CLUSTERS", DBD_ADD_USERS: "DBD_ADD_USERS", DBD_CLUSTER_TRES: "DBD_CLUSTER_TRES",
	DBD_FLUSH_JOBS: "DBD_FLUSH_JOBS", DBD_GET_ASSOC_USAGE: "DBD_GET_ASSOC_USAGE",
	DBD_GET_CLUSTER_USAGE: "DBD_GET_CLUSTER_USAGE", DBD_RECONFIG: "DBD_RECONFIG",
	DBD_GOT_ACCOUNTS: "DBD_GOT_ACCOUNTS", DBD_GOT_ASSOCS: "DBD_GOT_ASSOCS",
	DBD_GOT_ASSOC_USAGE: "DBD_GOT_ASSOC_USAGE", DBD_GOT_CLUSTERS: "DBD_GOT_CLUSTERS",
	DBD_GOT_CLUSTER_USAGE: "DBD_GOT_CLUSTER_USAGE", DBD_GOT_LIST: "DBD_GOT_LIST", DBD_GOT_USERS: "DBD_GOT_USERS",
	DBD_JOB_COMPLETE: "DBD_JOB_COMPLETE", DBD_JOB_START: "DBD_JOB_START", DBD_ID_RC: "DBD_ID_RC",
	DBD_JOB_SUSPEND: "DBD_JOB_SUSPEND", DBD_MODIFY_ACCOUNTS: "DBD_MODIFY_ACCOUNTS",
	DBD_MODIFY_ASSOCS: "DBD_MODIFY_ASSOCS", DBD_MODIFY_CLUSTERS: "DBD_MODIFY_CLUSTERS",
	DBD_MODIFY_USERS: "DBD_MODIFY_USERS", DBD_NODE_STATE: "DBD_NODE_STATE",
	DBD_REGISTER_CTLD: "DBD_REGISTER_CTLD", DBD_REMOVE_ACCOUNTS: "DBD_REMOVE_ACCOUNTS",
	DBD_REMOVE_ACCOUNT_COORDS: "DBD_REMOVE_ACCOUNT_COORDS", DBD_REMOVE_ASSOCS: "DBD_REMOVE_ASSOCS",
	DBD_REMOVE_CLUSTERS: "DBD_REMOVE_CLUSTERS", DBD_REMOVE_USERS: "DBD_REMOVE_USERS",
	DBD_ROLL_USAGE: "DBD_ROLL_USAGE", DBD_STEP_COMPLETE: "DBD_STEP_COMPLETE", DBD_STEP_START: "DBD_STEP_START",
	DBD_GET_TXN: "DBD_GET_TXN", DBD_GOT_TXN: "DBD_GOT_TXN", DBD_ADD_QOS: "DBD_ADD_QOS",
	DBD_GOT_QOS: "DBD_GOT_QOS", DBD_REMOVE_QOS: "DBD_REMOVE_QOS", DBD_MODIFY_QOS: "DBD_MODIFY_QOS",
	DBD_ADD_WCKEYS: "DBD_ADD_WCKEYS", DBD_GET_WCKEYS: "DBD_GET_WCKEYS", DBD_GOT_WCKEYS: "DBD_GOT_WCKEYS",
	DBD_REMOVE_WCKEYS: "DBD_REMOVE_WCKEYS", DBD_MODIFY_WCKEYS: "DBD_MODIFY_WCKEYS",
	DBD_GET_WCKEY_USAGE: "DBD_GET_WCKEY_USAGE", DBD_GOT_WCKEY_USAGE: "DBD_GOT_WCKEY_USAGE",
	DBD_ARCHIVE_DUMP: "DBD_ARCHIVE_DUMP", DBD_ARCHIVE_LOAD: "DBD_ARCHIVE_LOAD", DBD_ADD_RESV: "DBD_ADD_RESV",
	DBD_REMOVE_RESV: "DBD_REMOVE_RESV", DBD_MODIFY_RESV: "DBD_MODIFY_RESV", DBD_GET_RESVS: "DBD_GET_RESVS",
	DBD_GOT_RESVS: "DBD_GOT_RESVS", DBD_GET_CONFIG: "DBD_GET_CONFIG", DBD_GOT_CONFIG: "DBD_GOT_CONFIG",
	DBD_GET_PROBS: "DBD_GET_PROBS", DBD_GOT_PROBS: "DBD_GOT_PROBS", DBD_GET_EVENTS: "DBD_GET_EVENTS",
	DBD_GOT_EVENTS: "DBD_GOT_EVENTS", DBD_SEND_MULT_JOB_START: "DBD_SEND_MULT_JOB_START",
	DBD_GOT_MULT_JOB_START: "DBD_GOT_MULT_JOB_START", DBD_SEND_MULT_MSG: "DBD_SEND_MULT_MSG",
	DBD_GOT_MULT_MSG: "DBD_GOT_MULT_MSG", DBD_MODIFY_JOB: "DBD_MODIFY_JOB", DBD_ADD_RES: "DBD_ADD_RES",
	DBD_GET_RES: "DBD_GET_RES", DBD_GOT_RES: "DBD_GOT_RES", DBD_REMOVE_RES: "DBD_REMOVE_RES",
	DBD_MODIFY_RES: "DBD_MODIFY_RES", DBD_ADD_CLUS_RES: "DBD_ADD_CLUS_RES",
	DBD_REMOVE_CLUS_RES: "DBD_REMOVE_CLUS_RES", DBD_MODIFY_CLUS_RES: "DBD_MODIFY_CLUS_RES",
	DBD_ADD_TRES: "DBD_ADD_TRES", DBD_FIX_RUNAWAY_JOB: "DBD_FIX_RUNAWAY_JOB", DBD_GET_STATS: "DBD_GET_STATS",
	DBD_GOT_STATS: "DBD_GOT_STATS", DBD_CLEAR_STATS: "DBD_CLEAR_STATS", DBD_SHUTDOWN: "DBD_SHUTDOWN",
	DBD_ADD_FEDERATIONS: "DBD_ADD_FEDERATIONS", DBD_GET_FEDERATIONS: "DBD_GET_FEDERATIONS",
	DBD_GOT_FEDERATIONS: "DBD_GOT_FEDERATIONS", DBD_MODIFY_FEDERATIONS: "DBD_MODIFY_FEDERATIONS",
	DBD_REMOVE_FEDERATIONS: "DBD_REMOVE_FEDERATIONS", DBD_JOB_HEAVY: "DBD_JOB_HEAVY",
	DBD_GOT_JOB_ENV: "DBD_GOT_JOB_ENV", DBD_GOT_JOB_SCRIPT: "DBD_GOT_JOB_SCRIPT",
	DBD_ADD_ACCOUNTS_COND: "DBD_ADD_ACCOUNTS_COND", DBD_ADD_USERS_COND: "DBD_ADD_USERS_COND",
	DBD_GET_INSTANCES: "DBD_GET_INSTANCES", DBD_GOT_INSTANCES: "DBD_GOT_INSTANCES",
	DBD_GET_QOS_USAGE: "DBD_GET_QOS_USAGE", DBD_GOT_QOS_USAGE: "DBD_GOT_QOS_USAGE",
	DBD_GET_ASSOC_NG_USAGE: "DBD_GET_ASSOC_NG_USAGE", DBD_GOT_CONFIG_V26: "DBD_GOT_CONFIG(26.05)",
}

// DBDMsgName names a slurmdbd message type.
func DBDMsgName(t uint16) string {
	if n, ok := dbdNames[t]; ok {
		return n
	}
	return fmt.Sprintf("DBD message %d", t)
}
