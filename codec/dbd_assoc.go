package codec

// sacctmgr and sreport over the slurmdbd protocol: the association,
// user, account, cluster, QOS and WCKey conditions (the bodies of
// DBD_GET_*) and records (the lists of DBD_GOT_*), at 22.05, 24.11 and
// 26.05 (src/common/slurmdb_pack.c, src/common/slurmdbd_pack.c).
//
// A DBD_GOT_* body is slurmdbd_pack_list_msg: a list as slurm_pack_list
// writes it (u32 count, or NO_VAL for no list at all, which the client
// takes as an error), then a u32 return code. Lists inside records are
// written the same way; a nil Go slice is the NO_VAL (NULL) list, an empty
// one is a count of 0.
//
// The version branches below sit at the releases where slurmdb_pack.c
// changed the layout (23.02, 23.11, 24.05, 24.11, 25.11); only 22.05, 24.11
// and 26.05 are checked against the source and captures.

// slurmdbd message types (slurmdbd_defs.h slurmdbd_msg_type_t): the same
// numbers in 22.05, 24.11 and 26.05, except DBD_GOT_CONFIG (see
// DBD_GOT_CONFIG_V26) and the types 22.05 does not have (1499 and up).
const (
	DBD_ADD_ACCOUNTS          uint16 = 1402
	DBD_ADD_ACCOUNT_COORDS    uint16 = 1403
	DBD_ADD_ASSOCS            uint16 = 1404
	DBD_ADD_CLUSTERS          uint16 = 1405
	DBD_ADD_USERS             uint16 = 1406
	DBD_CLUSTER_TRES          uint16 = 1407
	DBD_FLUSH_JOBS            uint16 = 1408
	DBD_GET_ASSOC_USAGE       uint16 = 1411
	DBD_GET_CLUSTER_USAGE     uint16 = 1413
	DBD_RECONFIG              uint16 = 1414
	DBD_GOT_ACCOUNTS          uint16 = 1416
	DBD_GOT_ASSOCS            uint16 = 1417
	DBD_GOT_ASSOC_USAGE       uint16 = 1418
	DBD_GOT_CLUSTERS          uint16 = 1419
	DBD_GOT_CLUSTER_USAGE     uint16 = 1420
	DBD_GOT_LIST              uint16 = 1422
	DBD_GOT_USERS             uint16 = 1423
	DBD_JOB_COMPLETE          uint16 = 1424
	DBD_JOB_START             uint16 = 1425
	DBD_ID_RC                 uint16 = 1426
	DBD_JOB_SUSPEND           uint16 = 1427
	DBD_MODIFY_ACCOUNTS       uint16 = 1428
	DBD_MODIFY_ASSOCS         uint16 = 1429
	DBD_MODIFY_CLUSTERS       uint16 = 1430
	DBD_MODIFY_USERS          uint16 = 1431
	DBD_NODE_STATE            uint16 = 1432
	DBD_REGISTER_CTLD         uint16 = 1434
	DBD_REMOVE_ACCOUNTS       uint16 = 1435
	DBD_REMOVE_ACCOUNT_COORDS uint16 = 1436
	DBD_REMOVE_ASSOCS         uint16 = 1437
	DBD_REMOVE_CLUSTERS       uint16 = 1438
	DBD_REMOVE_USERS          uint16 = 1439
	DBD_ROLL_USAGE            uint16 = 1440
	DBD_STEP_COMPLETE         uint16 = 1441
	DBD_STEP_START            uint16 = 1442
	DBD_GET_TXN               uint16 = 1445
	DBD_GOT_TXN               uint16 = 1446
	DBD_ADD_QOS               uint16 = 1447
	DBD_GOT_QOS               uint16 = 1449
	DBD_REMOVE_QOS            uint16 = 1450
	DBD_MODIFY_QOS            uint16 = 1451
	DBD_ADD_WCKEYS            uint16 = 1452
	DBD_GET_WCKEYS            uint16 = 1453
	DBD_GOT_WCKEYS            uint16 = 1454
	DBD_REMOVE_WCKEYS         uint16 = 1455
	DBD_MODIFY_WCKEYS         uint16 = 1456
	DBD_GET_WCKEY_USAGE       uint16 = 1457
	DBD_GOT_WCKEY_USAGE       uint16 = 1458
	DBD_ARCHIVE_DUMP          uint16 = 1459
	DBD_ARCHIVE_LOAD          uint16 = 1460
	DBD_ADD_RESV              uint16 = 1461
	DBD_REMOVE_RESV           uint16 = 1462
	DBD_MODIFY_RESV           uint16 = 1463
	DBD_GET_RESVS             uint16 = 1464
	DBD_GOT_RESVS             uint16 = 1465
	DBD_GET_CONFIG            uint16 = 1466
	// DBD_GOT_CONFIG is the answer to DBD_GET_CONFIG in 22.05 and 24.11 (a
	// list of key/value pairs). 26.05 renamed 1467 DBD_GOT_CONFIG_KEYPAIRS,
	// refuses it (ESLURM_NOT_SUPPORTED) and wants DBD_GOT_CONFIG_V26 (1508,
	// its DBD_GOT_CONFIG, a packed slurmdbd.conf): see DBDGotType.
	DBD_GOT_CONFIG          uint16 = 1467
	DBD_GET_PROBS           uint16 = 1468
	DBD_GOT_PROBS           uint16 = 1469
	DBD_GET_EVENTS          uint16 = 1470
	DBD_GOT_EVENTS          uint16 = 1471
	DBD_SEND_MULT_JOB_START uint16 = 1472
	DBD_GOT_MULT_JOB_START  uint16 = 1473
	DBD_SEND_MULT_MSG       uint16 = 1474
	DBD_GOT_MULT_MSG        uint16 = 1475
	DBD_MODIFY_JOB          uint16 = 1476
	DBD_ADD_RES             uint16 = 1477
	DBD_GET_RES             uint16 = 1478
	DBD_GOT_RES             uint16 = 1479
	DBD_REMOVE_RES          uint16 = 1480
	DBD_MODIFY_RES          uint16 = 1481
	DBD_ADD_CLUS_RES        uint16 = 1482
	DBD_REMOVE_CLUS_RES     uint16 = 1483
	DBD_MODIFY_CLUS_RES     uint16 = 1484
	DBD_ADD_TRES            uint16 = 1485
	DBD_FIX_RUNAWAY_JOB     uint16 = 1488
	DBD_GET_STATS           uint16 = 1489
	DBD_GOT_STATS           uint16 = 1490
	DBD_CLEAR_STATS         uint16 = 1491
	DBD_SHUTDOWN            uint16 = 1492
	DBD_ADD_FEDERATIONS     uint16 = 1493
	DBD_GET_FEDERATIONS     uint16 = 1494
	DBD_GOT_FEDERATIONS     uint16 = 1495
	DBD_MODIFY_FEDERATIONS  uint16 = 1496
	DBD_REMOVE_FEDERATIONS  uint16 = 1497
	DBD_JOB_HEAVY           uint16 = 1498
	// 23.02 and later (not in 22.05):
	DBD_GOT_JOB_ENV       uint16 = 1499
	DBD_GOT_JOB_SCRIPT    uint16 = 1500
	DBD_ADD_ACCOUNTS_COND uint16 = 1501 // sacctmgr add account, 23.11+
	DBD_ADD_USERS_COND    uint16 = 1502 // sacctmgr add user, 23.11+
	DBD_GET_INSTANCES     uint16 = 1503
	DBD_GOT_INSTANCES     uint16 = 1504
	DBD_GET_QOS_USAGE     uint16 = 1505
	DBD_GOT_QOS_USAGE     uint16 = 1506
	// 26.05 only:
	DBD_GET_ASSOC_NG_USAGE uint16 = 1507 // slurmdbd-internal, never on the wire
	DBD_GOT_CONFIG_V26     uint16 = 1508 // 26.05's DBD_GOT_CONFIG
)

// dbdWrites are the messages that change the database or the daemon:
// sacctmgr's add/modify/remove/archive/rollup/runaway-fix/reconfigure/
// shutdown/clear-stats and what a slurmctld reports.
var dbdWrites = map[uint16]bool{
	DBD_ADD_ACCOUNTS: true, DBD_ADD_ACCOUNT_COORDS: true, DBD_ADD_ASSOCS: true, DBD_ADD_CLUSTERS: true,
	DBD_ADD_USERS: true, DBD_ADD_QOS: true, DBD_ADD_WCKEYS: true, DBD_ADD_RESV: true, DBD_ADD_RES: true,
	DBD_ADD_CLUS_RES: true, DBD_ADD_TRES: true, DBD_ADD_FEDERATIONS: true, DBD_ADD_ACCOUNTS_COND: true,
	DBD_ADD_USERS_COND:  true,
	DBD_MODIFY_ACCOUNTS: true, DBD_MODIFY_ASSOCS: true, DBD_MODIFY_CLUSTERS: true, DBD_MODIFY_USERS: true,
	DBD_MODIFY_QOS: true, DBD_MODIFY_WCKEYS: true, DBD_MODIFY_RESV: true, DBD_MODIFY_JOB: true,
	DBD_MODIFY_RES: true, DBD_MODIFY_CLUS_RES: true, DBD_MODIFY_FEDERATIONS: true,
	DBD_REMOVE_ACCOUNTS: true, DBD_REMOVE_ACCOUNT_COORDS: true, DBD_REMOVE_ASSOCS: true,
	DBD_REMOVE_CLUSTERS: true, DBD_REMOVE_USERS: true, DBD_REMOVE_QOS: true, DBD_REMOVE_WCKEYS: true,
	DBD_REMOVE_RESV: true, DBD_REMOVE_RES: true, DBD_REMOVE_CLUS_RES: true, DBD_REMOVE_FEDERATIONS: true,
	DBD_ARCHIVE_DUMP: true, DBD_ARCHIVE_LOAD: true,
	DBD_ROLL_USAGE: true, DBD_FIX_RUNAWAY_JOB: true, DBD_RECONFIG: true, DBD_SHUTDOWN: true,
	DBD_CLEAR_STATS:  true,
	DBD_CLUSTER_TRES: true, DBD_FLUSH_JOBS: true, DBD_JOB_COMPLETE: true, DBD_JOB_START: true,
	DBD_JOB_SUSPEND: true, DBD_NODE_STATE: true, DBD_REGISTER_CTLD: true, DBD_STEP_COMPLETE: true,
	DBD_STEP_START: true, DBD_SEND_MULT_JOB_START: true, DBD_SEND_MULT_MSG: true, DBD_JOB_HEAVY: true,
}

// DBDIsWrite reports whether a slurmdbd request changes something: an
// add, modify or remove (DBD_ADD_*, DBD_MODIFY_*, DBD_REMOVE_*, the
// *_COORDS and *_COND forms), an archive dump or load, one of sacctmgr's
// administrative requests (rollup, fix runaway jobs, reconfigure,
// shutdown, clear stats) or a slurmctld's job/step/node report. A
// read-only slurmdbd answers these with PERSIST_RC carrying an error
// (sacctmgr prints the comment). DBD_FINI is not a write: its commit flag
// commits what earlier writes did.
func DBDIsWrite(t uint16) bool { return dbdWrites[t] }

// DBDGotType is the reply type a client at protocol version v expects to
// a read request (DBD_GET_*), or false if t is not one. Any request may
// instead be answered with PERSIST_RC.
func DBDGotType(t, v uint16) (uint16, bool) {
	switch t {
	case DBD_GET_ACCOUNTS:
		return DBD_GOT_ACCOUNTS, true
	case DBD_GET_ASSOCS:
		return DBD_GOT_ASSOCS, true
	case DBD_GET_CLUSTERS:
		return DBD_GOT_CLUSTERS, true
	case DBD_GET_USERS:
		return DBD_GOT_USERS, true
	case DBD_GET_JOBS_COND:
		return DBD_GOT_JOBS, true
	case DBD_GET_QOS:
		return DBD_GOT_QOS, true
	case DBD_GET_WCKEYS:
		return DBD_GOT_WCKEYS, true
	case DBD_GET_TRES:
		return DBD_GOT_TRES, true
	case DBD_GET_TXN:
		return DBD_GOT_TXN, true
	case DBD_GET_RESVS:
		return DBD_GOT_RESVS, true
	case DBD_GET_PROBS:
		return DBD_GOT_PROBS, true
	case DBD_GET_EVENTS:
		return DBD_GOT_EVENTS, true
	case DBD_GET_RES:
		return DBD_GOT_RES, true
	case DBD_GET_FEDERATIONS:
		return DBD_GOT_FEDERATIONS, true
	case DBD_GET_STATS:
		return DBD_GOT_STATS, true
	case DBD_GET_INSTANCES:
		return DBD_GOT_INSTANCES, true
	case DBD_GET_ASSOC_USAGE:
		return DBD_GOT_ASSOC_USAGE, true
	case DBD_GET_QOS_USAGE:
		// What slurmdbd answers; the 24.11/26.05 client only takes the
		// assoc, WCKey and cluster usage replies and fails on this one.
		return DBD_GOT_QOS_USAGE, true
	case DBD_GET_CLUSTER_USAGE:
		return DBD_GOT_CLUSTER_USAGE, true
	case DBD_GET_WCKEY_USAGE:
		return DBD_GOT_WCKEY_USAGE, true
	case DBD_GET_CONFIG:
		if v >= V26_05 {
			return DBD_GOT_CONFIG_V26, true
		}
		return DBD_GOT_CONFIG, true
	}
	return 0, false
}

// Flags (slurmdb.h).
const (
	// ASSOC_COND_FLAG_* (AssocCond.Flags). 22.05 sends the first seven as
	// u16 booleans instead (only_defs, with_usage, with_deleted,
	// with_raw_qos, with_sub_accts, without_parent_info,
	// without_parent_limits); AssocCond folds them into these bits.
	AssocCondWithDeleted uint32 = 1 << 0
	AssocCondWithUsage   uint32 = 1 << 1
	AssocCondOnlyDefs    uint32 = 1 << 2
	AssocCondRawQOS      uint32 = 1 << 3
	AssocCondSubAccts    uint32 = 1 << 4
	AssocCondWOPI        uint32 = 1 << 5 // without parent info
	AssocCondWOPL        uint32 = 1 << 6 // without parent limits
	AssocCondQOSUsage    uint32 = 1 << 7 // 24.11+
	AssocCondWithNGUsage uint32 = 1 << 8 // 26.05

	// SLURMDB_ACCT_FLAG_* (AccountCond.Flags; 22.05: with_deleted,
	// with_assocs, with_coords u16 booleans).
	AcctFlagDeleted uint32 = 1 << 0
	AcctFlagWAssoc  uint32 = 1 << 1
	AcctFlagWCoord  uint32 = 1 << 2

	// QOS_COND_FLAG_WITH_DELETED (QOSCond.Flags; 22.05: a with_deleted u16).
	QOSCondWithDeleted uint16 = 1 << 0

	// ASSOC_FLAG_DELETED, SLURMDB_USER_FLAG_DELETED, SLURMDB_WCKEY_FLAG_DELETED.
	AssocFlagDeleted uint32 = 1 << 0
	UserFlagDeleted  uint32 = 1 << 0
	WCKeyFlagDeleted uint32 = 1 << 0

	// slurmdb_admin_level_t (UserRec.AdminLevel, UserCond.AdminLevel).
	AdminNotSet    uint16 = 0
	AdminNone      uint16 = 1
	AdminOperator  uint16 = 2
	AdminSuperUser uint16 = 3
)

// acctPacker is dbdPacker with what these records need besides: u8 and
// bools, string lists, bitmaps, lists of records that may be NULL, and
// records that may be NULL.
type acctPacker interface {
	dbdPacker
	u8(*uint8)
	strs(*[]string)            // a list of strings (nil: NO_VAL)
	bits(n *uint32, h *string) // pack_bit_str_hex (n 0 and h "": NULL)
	// list writes a count (NO_VAL when null) or reads one, checked
	// against what is left at minElem bytes an element.
	list(n int, null bool, minElem int) (int, bool)
	// present packs a record's leading "not NULL" bool and reports
	// whether the record follows.
	present(null *bool) bool
	// flag16 packs a u16 boolean that stands for bit of *flags.
	flag16(flags *uint32, bit uint32)
	reading() bool
	failed() bool
	rec(empty *uint64) acctPacker // the packer of a record inside
}

func (p *dbdW) u8(x *uint8)              { p.w.U8(*x) }
func (p *dbdW) strs(l *[]string)         { writeStrList(p.w, *l) }
func (p *dbdW) reading() bool            { return false }
func (p *dbdW) failed() bool             { return false }
func (p *dbdW) rec(e *uint64) acctPacker { return &dbdW{w: p.w, v: p.v, empty: e} }
func (p *dbdW) bits(n *uint32, h *string) {
	if *n == 0 && *h == "" {
		p.w.BitstrNull()
		return
	}
	p.w.U32(*n)
	p.w.Str(*h)
}
func (p *dbdW) list(n int, null bool, _ int) (int, bool) {
	if null {
		p.w.U32(NoVal)
		return 0, true
	}
	p.w.U32(uint32(n))
	return n, false
}
func (p *dbdW) present(null *bool) bool { p.w.Bool(!*null); return !*null }
func (p *dbdW) flag16(f *uint32, bit uint32) {
	if *f&bit != 0 {
		p.w.U16(1)
	} else {
		p.w.U16(0)
	}
}

func (p *dbdR) u8(x *uint8)              { *x = p.r.U8() }
func (p *dbdR) strs(l *[]string)         { *l = readStrList(p.r) }
func (p *dbdR) reading() bool            { return true }
func (p *dbdR) failed() bool             { return p.r.Err != nil }
func (p *dbdR) rec(e *uint64) acctPacker { return &dbdR{r: p.r, v: p.v, empty: e} }
func (p *dbdR) bits(n *uint32, h *string) {
	nb, hex, null := p.r.Bitstr()
	if null {
		*n, *h = 0, ""
		return
	}
	*n, *h = nb, string(hex)
}
func (p *dbdR) list(_ int, _ bool, minElem int) (int, bool) {
	n, null := p.r.Count(minElem)
	return int(n), null
}
func (p *dbdR) present(null *bool) bool { *null = !p.r.Bool(); return !*null }
func (p *dbdR) flag16(f *uint32, bit uint32) {
	if p.r.U16() != 0 {
		*f |= bit
	}
}

// acctRec is what every record here has: its fields, packed at a version
// by the packer of the list or record it is in.
type acctRec[T any] interface {
	*T
	pack(acctPacker, uint16)
}

// packRecs packs a list of records (nil: NO_VAL) whose smallest encoding
// is minElem bytes. Reading grows the list as records arrive, so a hostile
// count costs no more than the bytes that back it.
func packRecs[T any, P acctRec[T]](p acctPacker, l *[]T, minElem int, v uint16) {
	n, null := p.list(len(*l), *l == nil, minElem)
	if !p.reading() {
		for i := range *l {
			P(&(*l)[i]).pack(p, v)
		}
		return
	}
	if null {
		*l = nil
		return
	}
	out := make([]T, 0, min(n, 64))
	for i := 0; i < n && !p.failed(); i++ {
		out = append(out, *new(T))
		P(&out[len(out)-1]).pack(p, v)
	}
	*l = out
}

func rootW(w *Writer, v uint16) acctPacker { return &dbdW{w: w, v: v, empty: new(uint64)} }
func rootR(r *Reader, v uint16) acctPacker { return &dbdR{r: r, v: v, empty: new(uint64)} }

// encodeRec and decodeRec are the Encode and Decode of one record.
func encodeRec[T any, P acctRec[T]](x *T, w *Writer, v uint16) { P(x).pack(rootW(w, v), v) }

func decodeRec[T any, P acctRec[T]](x *T, r *Reader, v uint16) error {
	*x = *new(T)
	P(x).pack(rootR(r, v), v)
	return r.Err
}

// Smallest encodings (all versions; a NULL record where one may be NULL),
// to bound counts (see TestDBDAssocMinSizes).
const (
	minCoord       = 6
	minTRES        = 28
	minAccounting  = 48
	minClusterAcct = 84
	minAssoc       = 128
	minWCKey       = 30
	minUser        = 1 // 25.11+: a NULL record is one byte
	minAccount     = 24
	minCluster     = 1 // 24.11+: likewise
	minQOS         = 150
)

// ---- conditions ----

// AssocCond is slurmdb_assoc_cond_t (DBD_GET_ASSOCS, DBD_GET_PROBS,
// DBD_REMOVE_ASSOCS; inside the user and account conditions).
type AssocCond struct {
	// Null: no condition at all (24.11+ send a lone false; 22.05 sends the
	// all-empty condition instead, which decodes as such).
	Null                                bool
	AcctList, ClusterList, DefQOSIDList []string
	Flags                               uint32 // AssocCond* bits
	FormatList, IDList                  []string
	PartitionList, ParentAcctList       []string
	QOSList                             []string
	UsageEnd, UsageStart                int64
	UserList                            []string
}

func (c *AssocCond) pack(p acctPacker, v uint16) {
	if v >= V24_11 {
		if !p.present(&c.Null) {
			return
		}
	}
	// Before 24.11 a NULL condition is written as an empty one.
	p.strs(&c.AcctList)
	p.strs(&c.ClusterList)
	p.strs(&c.DefQOSIDList)
	if v >= V24_11 {
		p.u32(&c.Flags)
	}
	p.strs(&c.FormatList)
	p.strs(&c.IDList)
	if v < V24_11 {
		p.flag16(&c.Flags, AssocCondOnlyDefs)
	}
	p.strs(&c.PartitionList)
	p.strs(&c.ParentAcctList)
	p.strs(&c.QOSList)
	p.tm(&c.UsageEnd)
	p.tm(&c.UsageStart)
	p.strs(&c.UserList)
	if v < V24_11 {
		for _, b := range []uint32{AssocCondWithUsage, AssocCondWithDeleted, AssocCondRawQOS,
			AssocCondSubAccts, AssocCondWOPI, AssocCondWOPL} {
			p.flag16(&c.Flags, b)
		}
	}
}

func (c *AssocCond) Encode(w *Writer, v uint16)       { encodeRec(c, w, v) }
func (c *AssocCond) Decode(r *Reader, v uint16) error { return decodeRec(c, r, v) }

// UserCond is slurmdb_user_cond_t (DBD_GET_USERS, DBD_REMOVE_USERS).
type UserCond struct {
	AdminLevel                          uint16
	Assoc                               AssocCond
	DefAcctList, DefWCKeyList           []string
	WithAssocs, WithCoords, WithDeleted uint16
	WithWCKeys                          uint16
}

func (c *UserCond) pack(p acctPacker, v uint16) {
	p.u16(&c.AdminLevel)
	c.Assoc.pack(p, v)
	p.strs(&c.DefAcctList)
	p.strs(&c.DefWCKeyList)
	p.u16(&c.WithAssocs)
	p.u16(&c.WithCoords)
	p.u16(&c.WithDeleted)
	p.u16(&c.WithWCKeys)
}

func (c *UserCond) Encode(w *Writer, v uint16)       { encodeRec(c, w, v) }
func (c *UserCond) Decode(r *Reader, v uint16) error { return decodeRec(c, r, v) }

// AccountCond is slurmdb_account_cond_t (DBD_GET_ACCOUNTS,
// DBD_REMOVE_ACCOUNTS).
type AccountCond struct {
	Assoc           AssocCond
	DescriptionList []string
	Flags           uint32 // AcctFlag* bits
	OrgList         []string
}

func (c *AccountCond) pack(p acctPacker, v uint16) {
	c.Assoc.pack(p, v)
	p.strs(&c.DescriptionList)
	if v >= V24_05 {
		p.u32(&c.Flags)
	}
	p.strs(&c.OrgList)
	if v < V24_05 {
		p.flag16(&c.Flags, AcctFlagWAssoc)
		p.flag16(&c.Flags, AcctFlagWCoord)
		p.flag16(&c.Flags, AcctFlagDeleted)
	}
}

func (c *AccountCond) Encode(w *Writer, v uint16)       { encodeRec(c, w, v) }
func (c *AccountCond) Decode(r *Reader, v uint16) error { return decodeRec(c, r, v) }

// ClusterCond is slurmdb_cluster_cond_t (DBD_GET_CLUSTERS,
// DBD_REMOVE_CLUSTERS; sreport's cluster reports set WithUsage).
type ClusterCond struct {
	Classification         uint16
	ClusterList, FedList   []string
	Flags                  uint32
	FormatList             []string
	PluginIDSelectList     []string // 22.05 (gone in 23.11)
	RPCVersionList         []string
	UsageEnd, UsageStart   int64
	WithUsage, WithDeleted uint16
}

func (c *ClusterCond) pack(p acctPacker, v uint16) {
	p.u16(&c.Classification)
	p.strs(&c.ClusterList)
	p.strs(&c.FedList)
	p.u32(&c.Flags)
	p.strs(&c.FormatList)
	if v < V23_11 {
		p.strs(&c.PluginIDSelectList)
	}
	p.strs(&c.RPCVersionList)
	p.tm(&c.UsageEnd)
	p.tm(&c.UsageStart)
	p.u16(&c.WithUsage)
	p.u16(&c.WithDeleted)
}

func (c *ClusterCond) Encode(w *Writer, v uint16)       { encodeRec(c, w, v) }
func (c *ClusterCond) Decode(r *Reader, v uint16) error { return decodeRec(c, r, v) }

// QOSCond is slurmdb_qos_cond_t (DBD_GET_QOS, DBD_REMOVE_QOS).
type QOSCond struct {
	Null            bool // 24.11+: no condition (a lone false)
	DescriptionList []string
	Flags           uint16 // QOSCond* bits
	FormatList      []string
	IDList          []string
	NameList        []string
	PreemptMode     uint16
}

func (c *QOSCond) pack(p acctPacker, v uint16) {
	if v >= V24_11 {
		if !p.present(&c.Null) {
			return
		}
	}
	p.strs(&c.DescriptionList)
	if v >= V24_11 {
		p.u16(&c.Flags)
	}
	p.strs(&c.FormatList)
	p.strs(&c.IDList)
	p.strs(&c.NameList)
	p.u16(&c.PreemptMode)
	if v < V24_11 {
		f := uint32(c.Flags)
		p.flag16(&f, uint32(QOSCondWithDeleted))
		c.Flags = uint16(f)
	}
}

func (c *QOSCond) Encode(w *Writer, v uint16)       { encodeRec(c, w, v) }
func (c *QOSCond) Decode(r *Reader, v uint16) error { return decodeRec(c, r, v) }

// TRESCond is slurmdb_tres_cond_t (DBD_GET_TRES; sacctmgr and sreport ask
// with WithDeleted 1).
type TRESCond struct {
	Count                                  uint64
	FormatList, IDList, NameList, TypeList []string
	WithDeleted                            uint16
}

func (c *TRESCond) pack(p acctPacker, _ uint16) {
	p.u64(&c.Count)
	p.strs(&c.FormatList)
	p.strs(&c.IDList)
	p.strs(&c.NameList)
	p.strs(&c.TypeList)
	p.u16(&c.WithDeleted)
}

func (c *TRESCond) Encode(w *Writer, v uint16)       { encodeRec(c, w, v) }
func (c *TRESCond) Decode(r *Reader, v uint16) error { return decodeRec(c, r, v) }

// WCKeyCond is slurmdb_wckey_cond_t (DBD_GET_WCKEYS, DBD_REMOVE_WCKEYS).
type WCKeyCond struct {
	ClusterList, FormatList, IDList, NameList []string
	OnlyDefs                                  uint16
	UsageEnd, UsageStart                      int64
	UserList                                  []string
	WithUsage, WithDeleted                    uint16
}

func (c *WCKeyCond) pack(p acctPacker, _ uint16) {
	p.strs(&c.ClusterList)
	p.strs(&c.FormatList)
	p.strs(&c.IDList)
	p.strs(&c.NameList)
	p.u16(&c.OnlyDefs)
	p.tm(&c.UsageEnd)
	p.tm(&c.UsageStart)
	p.strs(&c.UserList)
	p.u16(&c.WithUsage)
	p.u16(&c.WithDeleted)
}

func (c *WCKeyCond) Encode(w *Writer, v uint16)       { encodeRec(c, w, v) }
func (c *WCKeyCond) Decode(r *Reader, v uint16) error { return decodeRec(c, r, v) }

// ---- records ----

func (t *TRESRec) pack(pp acctPacker, _ uint16) {
	var e uint64 // TRESRec keeps no EmptyStrs: "" reads back as NULL
	p := pp.rec(&e)
	p.u64(&t.AllocSecs)
	p.u64(&t.Count)
	p.u32(&t.ID)
	p.str(&t.Name)
	p.str(&t.Type)
}

// CoordRec is slurmdb_coord_rec_t: an account a user coordinates.
type CoordRec struct {
	Name   string
	Direct uint16 // 1: made coordinator of this account, 0: inherited from a parent

	EmptyStrs uint64 // strings sent as "" rather than NULL (dbdPacker)
}

func (c *CoordRec) pack(pp acctPacker, _ uint16) {
	p := pp.rec(&c.EmptyStrs)
	p.str(&c.Name)
	p.u16(&c.Direct)
}

func (c *CoordRec) Encode(w *Writer, v uint16)       { encodeRec(c, w, v) }
func (c *CoordRec) Decode(r *Reader, v uint16) error { return decodeRec(c, r, v) }

// AccountingRec is slurmdb_accounting_rec_t: one period of an
// association's or WCKey's usage (sreport).
type AccountingRec struct {
	AllocSecs   uint64
	TRES        TRESRec
	ID          uint32 // the association or WCKey
	IDAlt       uint32 // 24.11+
	PeriodStart int64
}

func (a *AccountingRec) pack(p acctPacker, v uint16) {
	p.u64(&a.AllocSecs)
	a.TRES.pack(p, v)
	p.u32(&a.ID)
	if v >= V24_11 {
		p.u32(&a.IDAlt)
	}
	p.tm(&a.PeriodStart)
}

func (a *AccountingRec) Encode(w *Writer, v uint16)       { encodeRec(a, w, v) }
func (a *AccountingRec) Decode(r *Reader, v uint16) error { return decodeRec(a, r, v) }

// ClusterAccountingRec is slurmdb_cluster_accounting_rec_t: one period of
// a cluster's usage of one TRES (sreport cluster utilization).
type ClusterAccountingRec struct {
	AllocSecs                               uint64
	TRES                                    TRESRec
	DownSecs, IdleSecs, OverSecs, PDownSecs uint64
	PeriodStart                             int64
	PlanSecs                                uint64
}

func (a *ClusterAccountingRec) pack(p acctPacker, v uint16) {
	p.u64(&a.AllocSecs)
	a.TRES.pack(p, v)
	p.u64(&a.DownSecs)
	p.u64(&a.IdleSecs)
	p.u64(&a.OverSecs)
	p.u64(&a.PDownSecs)
	p.tm(&a.PeriodStart)
	p.u64(&a.PlanSecs)
}

func (a *ClusterAccountingRec) Encode(w *Writer, v uint16)       { encodeRec(a, w, v) }
func (a *ClusterAccountingRec) Decode(r *Reader, v uint16) error { return decodeRec(a, r, v) }

// AssocRec is slurmdb_assoc_rec_t. Limits not set are INFINITE as
// slurmdbd sends them (NO_VAL in a NULL record, see NullAssocRec).
type AssocRec struct {
	Accounting     []AccountingRec // usage, with AssocCondWithUsage
	Acct, Cluster  string
	Comment        string // 23.02+
	DefQOSID       uint32
	Flags          uint32 // AssocFlag* (a u16 before 24.05)
	SharesRaw      uint32
	GrpTRESMins    string
	GrpTRESRunMins string
	GrpTRES        string
	GrpJobs        uint32
	GrpJobsAccrue  uint32
	GrpSubmitJobs  uint32
	GrpWall        uint32
	ID             uint32
	IsDef          uint16
	Lft            uint32 // before 23.11
	Lineage        string // 23.11+: "/acct/.../0-user/"
	MaxTRESMinsPJ  string
	MaxTRESRunMins string
	MaxTRESPJ      string
	MaxTRESPN      string
	MaxJobs        uint32
	MaxJobsAccrue  uint32
	MinPrioThresh  uint32
	MaxSubmitJobs  uint32
	MaxWallPJ      uint32
	ParentAcct     string
	ParentID       uint32
	Partition      string
	Priority       uint32
	QOSList        []string // QOS ids, as strings
	Rgt            uint32   // before 23.11
	UID            uint32
	User           string

	EmptyStrs uint64 // strings sent as "" rather than NULL (dbdPacker)
}

// NullAssocRec is what slurmdb_pack_assoc_rec writes for a NULL record
// (a cluster without a root association, say): every limit NO_VAL.
func NullAssocRec() AssocRec {
	return AssocRec{DefQOSID: NoVal, SharesRaw: NoVal, GrpJobs: NoVal, GrpJobsAccrue: NoVal,
		GrpSubmitJobs: NoVal, GrpWall: NoVal, MaxJobs: NoVal, MaxJobsAccrue: NoVal,
		MinPrioThresh: NoVal, MaxSubmitJobs: NoVal, MaxWallPJ: NoVal}
}

func (a *AssocRec) pack(pp acctPacker, v uint16) {
	p := pp.rec(&a.EmptyStrs)
	packRecs(p, &a.Accounting, minAccounting, v)
	p.str(&a.Acct)
	p.str(&a.Cluster)
	if v >= V23_02 {
		p.str(&a.Comment)
	}
	p.u32(&a.DefQOSID)
	if v >= V24_05 {
		p.u32(&a.Flags)
	} else {
		f := uint16(a.Flags)
		p.u16(&f)
		a.Flags = uint32(f)
	}
	p.u32(&a.SharesRaw)
	p.str(&a.GrpTRESMins)
	p.str(&a.GrpTRESRunMins)
	p.str(&a.GrpTRES)
	p.u32(&a.GrpJobs)
	p.u32(&a.GrpJobsAccrue)
	p.u32(&a.GrpSubmitJobs)
	p.u32(&a.GrpWall)
	p.u32(&a.ID)
	p.u16(&a.IsDef)
	if v >= V23_11 {
		p.str(&a.Lineage)
	} else {
		p.u32(&a.Lft)
	}
	p.str(&a.MaxTRESMinsPJ)
	p.str(&a.MaxTRESRunMins)
	p.str(&a.MaxTRESPJ)
	p.str(&a.MaxTRESPN)
	p.u32(&a.MaxJobs)
	p.u32(&a.MaxJobsAccrue)
	p.u32(&a.MinPrioThresh)
	p.u32(&a.MaxSubmitJobs)
	p.u32(&a.MaxWallPJ)
	p.str(&a.ParentAcct)
	p.u32(&a.ParentID)
	p.str(&a.Partition)
	p.u32(&a.Priority)
	p.strs(&a.QOSList)
	if v < V23_11 {
		p.u32(&a.Rgt)
	}
	p.u32(&a.UID)
	p.str(&a.User)
}

func (a *AssocRec) Encode(w *Writer, v uint16)       { encodeRec(a, w, v) }
func (a *AssocRec) Decode(r *Reader, v uint16) error { return decodeRec(a, r, v) }

// WCKeyRec is slurmdb_wckey_rec_t.
type WCKeyRec struct {
	Accounting []AccountingRec // usage, with WCKeyCond.WithUsage
	Cluster    string
	Flags      uint32 // WCKeyFlag*
	ID         uint32
	IsDef      uint16
	Name       string
	UID        uint32
	User       string

	EmptyStrs uint64 // strings sent as "" rather than NULL (dbdPacker)
}

func (k *WCKeyRec) pack(pp acctPacker, v uint16) {
	p := pp.rec(&k.EmptyStrs)
	packRecs(p, &k.Accounting, minAccounting, v)
	p.str(&k.Cluster)
	p.u32(&k.Flags)
	p.u32(&k.ID)
	p.u16(&k.IsDef)
	p.str(&k.Name)
	p.u32(&k.UID)
	p.str(&k.User)
}

func (k *WCKeyRec) Encode(w *Writer, v uint16)       { encodeRec(k, w, v) }
func (k *WCKeyRec) Decode(r *Reader, v uint16) error { return decodeRec(k, r, v) }

// UserRec is slurmdb_user_rec_t.
type UserRec struct {
	Null         bool // 25.11+: a NULL record (a lone false); before, NULL is the zero record
	AdminLevel   uint16
	Assocs       []AssocRec // with UserCond.WithAssocs
	Coords       []CoordRec // with UserCond.WithCoords
	DefQOSID     uint32     // 25.11+
	DefaultAcct  string
	DefaultWCKey string
	Flags        uint32 // UserFlag*
	Name         string
	OldName      string
	UID          uint32
	WCKeys       []WCKeyRec // with UserCond.WithWCKeys

	EmptyStrs uint64 // strings sent as "" rather than NULL (dbdPacker)
}

func (u *UserRec) pack(pp acctPacker, v uint16) {
	p := pp.rec(&u.EmptyStrs)
	if v >= V25_11 {
		if !p.present(&u.Null) {
			return
		}
	}
	p.u16(&u.AdminLevel)
	packRecs(p, &u.Assocs, minAssoc, v)
	packRecs(p, &u.Coords, minCoord, v)
	if v >= V25_11 {
		p.u32(&u.DefQOSID)
	}
	p.str(&u.DefaultAcct)
	p.str(&u.DefaultWCKey)
	p.u32(&u.Flags)
	p.str(&u.Name)
	p.str(&u.OldName)
	p.u32(&u.UID)
	packRecs(p, &u.WCKeys, minWCKey, v)
}

func (u *UserRec) Encode(w *Writer, v uint16)       { encodeRec(u, w, v) }
func (u *UserRec) Decode(r *Reader, v uint16) error { return decodeRec(u, r, v) }

// AccountRec is slurmdb_account_rec_t.
type AccountRec struct {
	Assocs       []AssocRec // with AcctFlagWAssoc
	Coordinators []CoordRec // with AcctFlagWCoord
	Description  string
	Flags        uint32 // AcctFlagDeleted
	Name         string
	Organization string

	EmptyStrs uint64 // strings sent as "" rather than NULL (dbdPacker)
}

func (a *AccountRec) pack(pp acctPacker, v uint16) {
	p := pp.rec(&a.EmptyStrs)
	packRecs(p, &a.Assocs, minAssoc, v)
	packRecs(p, &a.Coordinators, minCoord, v)
	p.str(&a.Description)
	p.u32(&a.Flags)
	p.str(&a.Name)
	p.str(&a.Organization)
}

func (a *AccountRec) Encode(w *Writer, v uint16)       { encodeRec(a, w, v) }
func (a *AccountRec) Decode(r *Reader, v uint16) error { return decodeRec(a, r, v) }

// ClusterRec is slurmdb_cluster_rec_t.
type ClusterRec struct {
	// Null: a NULL record. 24.11+ write a lone false; before, a fixed
	// dummy record (encoding one writes that; it decodes as the dummy).
	Null           bool
	Accounting     []ClusterAccountingRec // with ClusterCond.WithUsage
	Classification uint16
	ControlHost    string
	ControlPort    uint32
	Dimensions     uint16
	FedFeatures    []string
	FedName        string
	FedID          uint32
	FedState       uint32
	FedSyncRecvd   uint8
	FedSyncSent    uint8
	Flags          uint32
	ID             uint16 // 24.11+
	Name           string
	Nodes          string
	PluginIDSelect uint32 // before 23.11 (slurmdbd sends NO_VAL from 23.02)
	RootAssoc      AssocRec
	RPCVersion     uint16
	FedRecv        uint8 // 1: the federation's receiving connection is up
	FedSend        uint8
	TRESStr        string // "1=4,2=4000,..."

	EmptyStrs uint64 // strings sent as "" rather than NULL (dbdPacker)
}

// nullClusterOld is slurmdb_pack_cluster_rec's NULL record before 24.11.
func nullClusterOld() ClusterRec {
	return ClusterRec{Dimensions: 1, Flags: NoVal, PluginIDSelect: NoVal, RootAssoc: NullAssocRec()}
}

func (c *ClusterRec) pack(pp acctPacker, v uint16) {
	p := pp.rec(&c.EmptyStrs)
	if v >= V24_11 {
		if !p.present(&c.Null) {
			return
		}
	} else if c.Null && !p.reading() {
		d := nullClusterOld()
		d.pack(pp, v)
		return
	}
	packRecs(p, &c.Accounting, minClusterAcct, v)
	p.u16(&c.Classification)
	p.str(&c.ControlHost)
	p.u32(&c.ControlPort)
	p.u16(&c.Dimensions)
	p.strs(&c.FedFeatures)
	p.str(&c.FedName)
	p.u32(&c.FedID)
	p.u32(&c.FedState)
	p.u8(&c.FedSyncRecvd)
	p.u8(&c.FedSyncSent)
	p.u32(&c.Flags)
	if v >= V24_11 {
		p.u16(&c.ID)
	}
	p.str(&c.Name)
	p.str(&c.Nodes)
	if v < V23_11 {
		p.u32(&c.PluginIDSelect)
	}
	c.RootAssoc.pack(p, v)
	p.u16(&c.RPCVersion)
	p.u8(&c.FedRecv)
	p.u8(&c.FedSend)
	p.str(&c.TRESStr)
}

func (c *ClusterRec) Encode(w *Writer, v uint16)       { encodeRec(c, w, v) }
func (c *ClusterRec) Decode(r *Reader, v uint16) error { return decodeRec(c, r, v) }

// QOSRec is slurmdb_qos_rec_t (the same layout in 22.05, 24.11 and 26.05).
// Limits not set are INFINITE; the factors are packdouble values.
type QOSRec struct {
	Description       string
	ID                uint32
	Flags             uint32 // QOS_FLAG_*
	GraceTime         uint32
	GrpTRESMins       string
	GrpTRESRunMins    string
	GrpTRES           string
	GrpJobs           uint32
	GrpJobsAccrue     uint32
	GrpSubmitJobs     uint32
	GrpWall           uint32
	MaxTRESMinsPJ     string
	MaxTRESRunMinsPA  string
	MaxTRESRunMinsPU  string
	MaxTRESPA         string
	MaxTRESPJ         string
	MaxTRESPN         string
	MaxTRESPU         string
	MaxJobsPA         uint32
	MaxJobsPU         uint32
	MaxJobsAccruePA   uint32
	MaxJobsAccruePU   uint32
	MinPrioThresh     uint32
	MaxSubmitJobsPA   uint32
	MaxSubmitJobsPU   uint32
	MaxWallPJ         uint32
	MinTRESPJ         string
	Name              string
	PreemptBits       uint32 // preempt_bitstr: its size and hex ("0x2"); 0 and "": NULL
	PreemptHex        string
	PreemptList       []string
	PreemptMode       uint16
	PreemptExemptTime uint32
	Priority          uint32
	UsageFactor       float64
	UsageThres        float64
	LimitFactor       float64

	EmptyStrs uint64 // strings sent as "" rather than NULL (dbdPacker)
}

func (q *QOSRec) pack(pp acctPacker, _ uint16) {
	p := pp.rec(&q.EmptyStrs)
	p.str(&q.Description)
	p.u32(&q.ID)
	p.u32(&q.Flags)
	p.u32(&q.GraceTime)
	p.str(&q.GrpTRESMins)
	p.str(&q.GrpTRESRunMins)
	p.str(&q.GrpTRES)
	p.u32(&q.GrpJobs)
	p.u32(&q.GrpJobsAccrue)
	p.u32(&q.GrpSubmitJobs)
	p.u32(&q.GrpWall)
	p.str(&q.MaxTRESMinsPJ)
	p.str(&q.MaxTRESRunMinsPA)
	p.str(&q.MaxTRESRunMinsPU)
	p.str(&q.MaxTRESPA)
	p.str(&q.MaxTRESPJ)
	p.str(&q.MaxTRESPN)
	p.str(&q.MaxTRESPU)
	p.u32(&q.MaxJobsPA)
	p.u32(&q.MaxJobsPU)
	p.u32(&q.MaxJobsAccruePA)
	p.u32(&q.MaxJobsAccruePU)
	p.u32(&q.MinPrioThresh)
	p.u32(&q.MaxSubmitJobsPA)
	p.u32(&q.MaxSubmitJobsPU)
	p.u32(&q.MaxWallPJ)
	p.str(&q.MinTRESPJ)
	p.str(&q.Name)
	p.bits(&q.PreemptBits, &q.PreemptHex)
	p.strs(&q.PreemptList)
	p.u16(&q.PreemptMode)
	p.u32(&q.PreemptExemptTime)
	p.u32(&q.Priority)
	p.dbl(&q.UsageFactor)
	p.dbl(&q.UsageThres)
	p.dbl(&q.LimitFactor)
}

func (q *QOSRec) Encode(w *Writer, v uint16)       { encodeRec(q, w, v) }
func (q *QOSRec) Decode(r *Reader, v uint16) error { return decodeRec(q, r, v) }

// ---- DBD_GOT_* bodies ----

// packGot packs a DBD_GOT_* body: the list (NO_VAL when null), then the
// return code. A list read with no elements comes back nil, not NULL.
func packGot[T any, P acctRec[T]](p acctPacker, l *[]T, null *bool, rc *uint32, minElem int, v uint16) {
	if !p.reading() {
		p.list(len(*l), *null, minElem)
		for i := 0; i < len(*l) && !*null; i++ {
			P(&(*l)[i]).pack(p, v)
		}
	} else {
		packRecs[T, P](p, l, minElem, v)
		*null = *l == nil && !p.failed()
		if len(*l) == 0 {
			*l = nil
		}
	}
	p.u32(rc)
}

// GotAssocs is DBD_GOT_ASSOCS's body (DBD_GOT_PROBS and DBD_ADD_ASSOCS
// carry the same list).
type GotAssocs struct {
	Assocs []AssocRec
	Null   bool // no list at all (NO_VAL): sacctmgr reports an error
	RC     uint32
}

func (m *GotAssocs) pack(p acctPacker, v uint16) {
	packGot(p, &m.Assocs, &m.Null, &m.RC, minAssoc, v)
}
func (m *GotAssocs) Encode(w *Writer, v uint16)       { encodeRec(m, w, v) }
func (m *GotAssocs) Decode(r *Reader, v uint16) error { return decodeRec(m, r, v) }

// GotUsers is DBD_GOT_USERS's body (and DBD_ADD_USERS's).
type GotUsers struct {
	Users []UserRec
	Null  bool // no list at all (NO_VAL)
	RC    uint32
}

func (m *GotUsers) pack(p acctPacker, v uint16) {
	packGot(p, &m.Users, &m.Null, &m.RC, minUser, v)
}
func (m *GotUsers) Encode(w *Writer, v uint16)       { encodeRec(m, w, v) }
func (m *GotUsers) Decode(r *Reader, v uint16) error { return decodeRec(m, r, v) }

// GotAccounts is DBD_GOT_ACCOUNTS's body (and DBD_ADD_ACCOUNTS's).
type GotAccounts struct {
	Accounts []AccountRec
	Null     bool // no list at all (NO_VAL)
	RC       uint32
}

func (m *GotAccounts) pack(p acctPacker, v uint16) {
	packGot(p, &m.Accounts, &m.Null, &m.RC, minAccount, v)
}
func (m *GotAccounts) Encode(w *Writer, v uint16)       { encodeRec(m, w, v) }
func (m *GotAccounts) Decode(r *Reader, v uint16) error { return decodeRec(m, r, v) }

// GotClusters is DBD_GOT_CLUSTERS's body (and DBD_ADD_CLUSTERS's).
type GotClusters struct {
	Clusters []ClusterRec
	Null     bool // no list at all (NO_VAL)
	RC       uint32
}

func (m *GotClusters) pack(p acctPacker, v uint16) {
	packGot(p, &m.Clusters, &m.Null, &m.RC, minCluster, v)
}
func (m *GotClusters) Encode(w *Writer, v uint16)       { encodeRec(m, w, v) }
func (m *GotClusters) Decode(r *Reader, v uint16) error { return decodeRec(m, r, v) }

// GotQOS is DBD_GOT_QOS's body (and DBD_ADD_QOS's).
type GotQOS struct {
	QOS  []QOSRec
	Null bool // no list at all (NO_VAL)
	RC   uint32
}

func (m *GotQOS) pack(p acctPacker, v uint16) {
	packGot(p, &m.QOS, &m.Null, &m.RC, minQOS, v)
}
func (m *GotQOS) Encode(w *Writer, v uint16)       { encodeRec(m, w, v) }
func (m *GotQOS) Decode(r *Reader, v uint16) error { return decodeRec(m, r, v) }

// GotWCKeys is DBD_GOT_WCKEYS's body (and DBD_ADD_WCKEYS's).
type GotWCKeys struct {
	WCKeys []WCKeyRec
	Null   bool // no list at all (NO_VAL)
	RC     uint32
}

func (m *GotWCKeys) pack(p acctPacker, v uint16) {
	packGot(p, &m.WCKeys, &m.Null, &m.RC, minWCKey, v)
}
func (m *GotWCKeys) Encode(w *Writer, v uint16)       { encodeRec(m, w, v) }
func (m *GotWCKeys) Decode(r *Reader, v uint16) error { return decodeRec(m, r, v) }

// GotList is DBD_GOT_LIST's body, the answer to DBD_MODIFY_* and
// DBD_REMOVE_*: the names of what changed ("  C = c  A = a  U = u" lines
// as sacctmgr prints them), then a return code. An empty list of any
// DBD_GOT_* type has these same bytes (a 0 count, the return code).
type GotList struct {
	List []string
	Null bool // no list at all (NO_VAL)
	RC   uint32
}

func (m *GotList) pack(p acctPacker, _ uint16) {
	switch {
	case !p.reading() && m.Null:
		var none []string
		p.strs(&none)
	case !p.reading():
		l := m.List
		if l == nil {
			l = []string{}
		}
		p.strs(&l)
	default:
		p.strs(&m.List)
		m.Null = m.List == nil && !p.failed()
		if len(m.List) == 0 {
			m.List = nil
		}
	}
	p.u32(&m.RC)
}
func (m *GotList) Encode(w *Writer, v uint16)       { encodeRec(m, w, v) }
func (m *GotList) Decode(r *Reader, v uint16) error { return decodeRec(m, r, v) }
