package ctld

import (
	"fmt"
	"hash/fnv"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/lablup/slurm-frontend/codec"
	"github.com/lablup/slurm-frontend/state"
	"github.com/lablup/slurm-frontend/translate/hostlist"
)

// sacctmgr's listings (DBD_GET_ASSOCS, USERS, ACCOUNTS, CLUSTERS, QOS,
// WCKEYS) from the association tree (assoc.go), in the records slurmdbd
// sends: limits INFINITE, one QOS (normal, id 1), lineage paths. Writes
// are refused: the accounts and users are Backend.AI's projects and
// users, or on the embedded engine those the jobs use.

const infinite = 0xffffffff

// dbdWriteRefusal is what sacctmgr add/modify/delete get.
const dbdWriteRefusal = "slurm-frontend keeps no account database of its own: accounts and users are the engine's (Backend.AI projects and users; on the embedded engine, those jobs use), change them there"

// AccountingWrite answers a DBD write (add, modify, remove, archive).
func (c *Controller) AccountingWrite(uid uint32, typ uint16, v uint16) (uint32, string) {
	c.logf("accounting: uid %d sent %s: refused", uid, codec.DBDMsgName(typ))
	if !c.isOperator(uid) {
		return codec.ESLURM_ACCESS_DENIED, "Access/permission denied"
	}
	return codec.ESLURM_NOT_SUPPORTED, dbdWriteRefusal
}

func (c *Controller) assocRec(a *assocRow, defAcct map[string]string) codec.AssocRec {
	r := codec.AssocRec{Acct: a.acct, Cluster: c.opt.ClusterName, SharesRaw: 1, ID: a.id, User: a.user,
		GrpJobs: infinite, GrpJobsAccrue: infinite, GrpSubmitJobs: infinite, GrpWall: infinite,
		MaxJobs: infinite, MaxJobsAccrue: infinite, MinPrioThresh: infinite, MaxSubmitJobs: infinite,
		MaxWallPJ: infinite, Priority: infinite, QOSList: []string{"1"}}
	if a.shares != codec.NoVal {
		r.SharesRaw = a.shares
	}
	switch {
	case a.parent == nil:
		r.Lineage = "/"
	case a.user != "":
		r.ParentID = a.parent.id
		r.Lineage = lineage(a.parent) + "0-" + a.user + "/"
		if defAcct[a.user] == a.acct {
			r.IsDef = 1
		}
	default:
		r.ParentID, r.ParentAcct = a.parent.id, a.parent.acct
		r.Lineage = lineage(a)
	}
	return r
}

func lineage(a *assocRow) string {
	if a.parent == nil {
		return "/"
	}
	return lineage(a.parent) + a.acct + "/"
}

// defaultAccounts is each user's default account: the engine's, else the
// account jobs naming none run in when the user has that association,
// else the user's first.
func (c *Controller) defaultAccounts(rows []*assocRow) map[string]string {
	def := map[string]string{}
	jobsAcct := state.RootAccount
	for _, d := range c.directory() {
		for _, u := range d.users {
			if u.DefaultAccount != "" {
				def[u.Name] = u.DefaultAccount
			}
		}
		if d.jobsAcct != "" {
			jobsAcct = d.jobsAcct
		}
	}
	first := map[string]string{}
	for _, a := range rows {
		if a.user == "" || a.parent == nil {
			continue
		}
		if _, ok := first[a.user]; !ok {
			first[a.user] = a.acct
		}
		if a.acct == jobsAcct && def[a.user] == "" {
			def[a.user] = a.acct
		}
	}
	for u, a := range first {
		if def[u] == "" {
			def[u] = a
		}
	}
	return def
}

func inList(l []string, s string) bool {
	for _, x := range l {
		if strings.EqualFold(x, s) {
			return true
		}
	}
	return false
}

// visible applies PrivateData=users/accounts: an ordinary user sees its
// own user rows and the accounts it has an association in.
func (c *Controller) visibleRows(uid uint32, rows []*assocRow) []*assocRow {
	if !c.hides(privateUsers, uid) && !c.hides(privateAccounts, uid) {
		return rows
	}
	mine := map[string]bool{}
	for _, a := range rows {
		if a.user != "" && a.uid == uid {
			mine[a.acct] = true
		}
	}
	var out []*assocRow
	for _, a := range rows {
		if (a.user != "" && a.uid == uid) || (a.user == "" && mine[a.acct]) {
			out = append(out, a)
		}
	}
	return out
}

// selectAssocs is the rows an assoc_cond picks.
func (c *Controller) selectAssocs(uid uint32, cond *codec.AssocCond, rows []*assocRow, def map[string]string) []*assocRow {
	if len(cond.ClusterList) > 0 && !inList(cond.ClusterList, c.opt.ClusterName) {
		return nil
	}
	var out []*assocRow
	for _, a := range c.visibleRows(uid, rows) {
		if len(cond.AcctList) > 0 && !inList(cond.AcctList, a.acct) {
			continue
		}
		if len(cond.UserList) > 0 && (a.user == "" || !inList(cond.UserList, a.user)) {
			continue
		}
		if len(cond.IDList) > 0 && !inList(cond.IDList, strconv.FormatUint(uint64(a.id), 10)) {
			continue
		}
		if len(cond.PartitionList) > 0 {
			continue // no association is per partition
		}
		if len(cond.ParentAcctList) > 0 && (a.user != "" || a.parent == nil || !inList(cond.ParentAcctList, a.parent.acct)) {
			continue
		}
		if len(cond.QOSList) > 0 && !inList(cond.QOSList, "normal") && !inList(cond.QOSList, "1") {
			continue
		}
		if cond.Flags&codec.AssocCondOnlyDefs != 0 && a.user != "" && def[a.user] != a.acct {
			continue
		}
		out = append(out, a)
	}
	return out
}

// lftOrder puts rows in the order of slurmdbd's nested-set tree before
// 23.11 (its lft): depth first, each parent's newest child first. Later
// slurmdbds order by lineage, as the tree is built here.
func lftOrder(rows []*assocRow, v uint16) []*assocRow {
	if v >= codec.V23_11 || len(rows) == 0 {
		return rows
	}
	pos := map[*assocRow]int{}
	var walk func(a *assocRow)
	walk = func(a *assocRow) {
		pos[a] = len(pos)
		kids := append([]*assocRow(nil), a.children...)
		sort.SliceStable(kids, func(i, j int) bool { return kids[i].id > kids[j].id })
		for _, ch := range kids {
			walk(ch)
		}
	}
	root := rows[0]
	for root.parent != nil {
		root = root.parent
	}
	walk(root)
	out := append([]*assocRow(nil), rows...)
	sort.SliceStable(out, func(i, j int) bool { return pos[out[i]] < pos[out[j]] })
	return out
}

// AccountingAssocs answers DBD_GET_ASSOCS (sacctmgr show assoc; sreport).
func (c *Controller) AccountingAssocs(uid uint32, cond *codec.AssocCond, v uint16) codec.GotAssocs {
	now := time.Now().Unix()
	rows := c.assocTree(now)
	def := c.defaultAccounts(rows)
	var out codec.GotAssocs
	var use map[*assocRow][usageTRES]float64
	if cond.Flags&(codec.AssocCondWithUsage|codec.AssocCondWithNGUsage) != 0 {
		use = c.rowUse(rows, cond.UsageStart, cond.UsageEnd)
	}
	for _, a := range lftOrder(c.selectAssocs(uid, cond, rows, def), v) {
		r := c.assocRec(a, def)
		if use != nil {
			r.Accounting = accountingRecs(a, use[a], cond.UsageStart)
		}
		out.Assocs = append(out.Assocs, r)
	}
	return out
}

// accountingRecs is an association's usage as sreport reads it: one
// record per TRES with any.
func accountingRecs(a *assocRow, x [usageTRES]float64, start int64) []codec.AccountingRec {
	out := []codec.AccountingRec{}
	for i, id := range usageTRESIDs {
		if id != 0 && x[i] >= 1 {
			out = append(out, codec.AccountingRec{AllocSecs: uint64(x[i]), TRES: codec.TRESRec{ID: id}, ID: a.id, PeriodStart: start})
		}
	}
	return out
}

// usageTRESIDs are the TRES ids of the usage indexes (0: not kept).
var usageTRESIDs = [usageTRES]uint32{usageCPU: 1, usageMem: 2, usageNode: 4, usageBilling: 5}

// rowUse is each row's allocation in [start, end), accounts summing
// their children.
func (c *Controller) rowUse(rows []*assocRow, start, end int64) map[*assocRow][usageTRES]float64 {
	w := c.windowUse(start, end, jobsAccount(c.directory()))
	out := map[*assocRow][usageTRES]float64{}
	var sum func(a *assocRow) [usageTRES]float64
	sum = func(a *assocRow) [usageTRES]float64 {
		var x [usageTRES]float64
		if a.user != "" {
			x = w[pairKey{a.acct, a.uid}]
		}
		for _, ch := range a.children {
			y := sum(ch)
			for i := range y {
				x[i] += y[i]
			}
		}
		out[a] = x
		return x
	}
	if len(rows) > 0 {
		sum(rows[0])
	}
	return out
}

// clusterUsage is sreport's cluster figures for [start, end): per TRES,
// what jobs were allocated and the rest of the capacity idle.
func (c *Controller) clusterUsage(cpus, mem, nodes uint64, start, end int64) []codec.ClusterAccountingRec {
	now := time.Now().Unix()
	if end == 0 || end > now {
		end = now
	}
	if start >= end {
		return []codec.ClusterAccountingRec{}
	}
	var total [usageTRES]float64
	for _, x := range c.windowUse(start, end, jobsAccount(c.directory())) {
		for i := range x {
			total[i] += x[i]
		}
	}
	capacity := [usageTRES]uint64{usageCPU: cpus, usageMem: mem, usageNode: nodes, usageBilling: cpus}
	var out []codec.ClusterAccountingRec
	secs := uint64(end - start)
	for i, id := range usageTRESIDs {
		if id == 0 {
			continue
		}
		alloc := min(uint64(total[i]), capacity[i]*secs)
		out = append(out, codec.ClusterAccountingRec{AllocSecs: alloc, TRES: codec.TRESRec{ID: id, Count: capacity[i]},
			IdleSecs: capacity[i]*secs - alloc, PeriodStart: start})
	}
	return out
}

// AccountingUsers answers DBD_GET_USERS (sacctmgr show user).
func (c *Controller) AccountingUsers(uid uint32, cond *codec.UserCond, v uint16) codec.GotUsers {
	rows := c.assocTree(time.Now().Unix())
	def := c.defaultAccounts(rows)
	admins := map[string]bool{"root": true}
	operators := map[string]bool{}
	for _, d := range c.directory() {
		for _, u := range d.users {
			if u.Admin {
				admins[u.Name] = true
			}
		}
		for n := range d.operators {
			operators[n] = true
		}
	}
	var use map[*assocRow][usageTRES]float64
	if cond.Assoc.Flags&(codec.AssocCondWithUsage|codec.AssocCondWithNGUsage) != 0 {
		use = c.rowUse(rows, cond.Assoc.UsageStart, cond.Assoc.UsageEnd)
	}
	type urec struct {
		uid    uint32
		assocs []*assocRow
	}
	users := map[string]*urec{}
	var names []string
	for _, a := range c.visibleRows(uid, rows) {
		if a.user == "" {
			continue
		}
		u := users[a.user]
		if u == nil {
			u = &urec{uid: a.uid}
			users[a.user] = u
			names = append(names, a.user)
		}
		u.assocs = append(u.assocs, a)
	}
	sort.Strings(names)
	var out codec.GotUsers
	for _, n := range names {
		u := users[n]
		if len(cond.Assoc.UserList) > 0 && !inList(cond.Assoc.UserList, n) {
			continue
		}
		if len(cond.DefAcctList) > 0 && !inList(cond.DefAcctList, def[n]) {
			continue
		}
		r := codec.UserRec{AdminLevel: codec.AdminNone, DefaultAcct: def[n], Name: n}
		if admins[n] {
			r.AdminLevel = codec.AdminSuperUser
		} else if operators[n] {
			r.AdminLevel = codec.AdminOperator
		}
		if cond.AdminLevel != codec.AdminNotSet && r.AdminLevel < cond.AdminLevel {
			continue
		}
		if cond.WithAssocs != 0 {
			r.Assocs = []codec.AssocRec{}
			for _, a := range lftOrder(c.selectAssocs(uid, &cond.Assoc, u.assocs, def), v) {
				x := c.assocRec(a, def)
				if use != nil {
					x.Accounting = accountingRecs(a, use[a], cond.Assoc.UsageStart)
				}
				r.Assocs = append(r.Assocs, x)
			}
		}
		if cond.WithCoords != 0 {
			r.Coords = []codec.CoordRec{}
		}
		if cond.WithWCKeys != 0 {
			r.WCKeys = []codec.WCKeyRec{}
		}
		out.Users = append(out.Users, r)
	}
	return out
}

// AccountingAccounts answers DBD_GET_ACCOUNTS (sacctmgr show account).
func (c *Controller) AccountingAccounts(uid uint32, cond *codec.AccountCond, v uint16) codec.GotAccounts {
	rows := c.assocTree(time.Now().Unix())
	def := c.defaultAccounts(rows)
	descr := map[string][2]string{state.RootAccount: {"default root account", "root"}}
	for _, d := range c.directory() {
		for _, a := range d.accounts {
			descr[a.Name] = [2]string{a.Description, a.Organization}
		}
	}
	vis := c.visibleRows(uid, rows)
	var out codec.GotAccounts
	for _, a := range vis {
		if a.user != "" {
			continue
		}
		if len(cond.Assoc.AcctList) > 0 && !inList(cond.Assoc.AcctList, a.acct) {
			continue
		}
		d, ok := descr[a.acct]
		if !ok || d[0] == "" {
			// sacctmgr add account's defaults: the name, and the
			// parent's organization (the name itself under root).
			d = [2]string{a.acct, a.acct}
		}
		if len(cond.DescriptionList) > 0 && !inList(cond.DescriptionList, d[0]) {
			continue
		}
		if len(cond.OrgList) > 0 && !inList(cond.OrgList, d[1]) {
			continue
		}
		r := codec.AccountRec{Description: d[0], Name: a.acct, Organization: d[1]}
		if cond.Flags&codec.AcctFlagWAssoc != 0 {
			r.Assocs = []codec.AssocRec{}
			sub := cond.Assoc
			sub.AcctList = []string{a.acct}
			for _, x := range lftOrder(c.selectAssocs(uid, &sub, vis, def), v) {
				r.Assocs = append(r.Assocs, c.assocRec(x, def))
			}
		}
		if cond.Flags&codec.AcctFlagWCoord != 0 {
			r.Coordinators = []codec.CoordRec{}
		}
		out.Accounts = append(out.Accounts, r)
	}
	sort.Slice(out.Accounts, func(i, j int) bool { return out.Accounts[i].Name < out.Accounts[j].Name })
	return out
}

// clusterID is a stable small id for the cluster (slurmdbd numbers its
// clusters as they are added).
func (c *Controller) clusterID() uint16 {
	h := fnv.New32a()
	h.Write([]byte(c.opt.ClusterName))
	return uint16(h.Sum32()%4000) + 1
}

// AccountingClusters answers DBD_GET_CLUSTERS (sacctmgr show cluster;
// sreport's cluster reports).
func (c *Controller) AccountingClusters(uid uint32, cond *codec.ClusterCond, v uint16) codec.GotClusters {
	var out codec.GotClusters
	if len(cond.ClusterList) > 0 && !inList(cond.ClusterList, c.opt.ClusterName) {
		return out
	}
	cl := c.cluster()
	var cpus, mem uint64
	var names []string
	for _, n := range cl.nodes {
		cpus += uint64(n.CPUs)
		mem += n.RealMemory
		names = append(names, n.Name)
	}
	rows := c.assocTree(time.Now().Unix())
	r := codec.ClusterRec{ControlHost: c.opt.ServerAddr, ControlPort: uint32(c.opt.Port), Dimensions: 1,
		Flags: 1 << 7, // CLUSTER_FLAG_MULTSD: every node is served from this host
		ID:    c.clusterID(), Name: c.opt.ClusterName, Nodes: hostlist.Compress(names), RPCVersion: v,
		RootAssoc: c.assocRec(rows[0], nil),
		TRESStr:   fmt.Sprintf("1=%d,2=%d,3=0,4=%d,5=%d,6=0,7=0,8=0", cpus, mem, len(names), cpus)}
	if r.ControlHost == "" {
		r.ControlHost = c.opt.ServerHost
	}
	if cond.WithUsage != 0 {
		r.Accounting = c.clusterUsage(cpus, mem, uint64(len(names)), cond.UsageStart, cond.UsageEnd)
	}
	out.Clusters = append(out.Clusters, r)
	return out
}

// normalQOS is slurmdbd's built-in QOS, the only one here.
func normalQOS() codec.QOSRec {
	return codec.QOSRec{Description: "Normal QOS default", ID: 1, Name: "normal",
		GrpJobs: infinite, GrpJobsAccrue: infinite, GrpSubmitJobs: infinite, GrpWall: infinite,
		MaxJobsPA: infinite, MaxJobsPU: infinite, MaxJobsAccruePA: infinite, MaxJobsAccruePU: infinite,
		MinPrioThresh: infinite, MaxSubmitJobsPA: infinite, MaxSubmitJobsPU: infinite, MaxWallPJ: infinite,
		PreemptExemptTime: infinite, UsageFactor: 1, UsageThres: float64(infinite), LimitFactor: float64(infinite)}
}

// AccountingQOS answers DBD_GET_QOS.
func (c *Controller) AccountingQOS(uid uint32, cond *codec.QOSCond, v uint16) codec.GotQOS {
	var out codec.GotQOS
	q := normalQOS()
	if (len(cond.NameList) == 0 || inList(cond.NameList, q.Name)) && (len(cond.IDList) == 0 || inList(cond.IDList, "1")) &&
		(len(cond.DescriptionList) == 0 || inList(cond.DescriptionList, q.Description)) {
		out.QOS = append(out.QOS, q)
	}
	return out
}

// AccountingWCKeys answers DBD_GET_WCKEYS: none (TrackWCKey is off).
func (c *Controller) AccountingWCKeys(uid uint32, cond *codec.WCKeyCond, v uint16) codec.GotWCKeys {
	return codec.GotWCKeys{}
}
