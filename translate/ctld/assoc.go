package ctld

import (
	"context"
	"errors"
	"math"
	"os/user"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/lablup/slurm-frontend/codec"
	"github.com/lablup/slurm-frontend/state"
	"github.com/lablup/slurm-frontend/translate"
	"github.com/lablup/slurm-frontend/translate/conf"
)

// The association tree (sshare, sacctmgr show assoc/user/account): the
// cluster's root, root's own user, then the accounts and users the
// accounting history has seen (state.Assocs), each account under root.
// Usage is what the history says was allocated (TRES-seconds), decayed
// with PriorityDecayHalfLife as slurmctld's multifactor plugin decays it,
// and fair share is Fair Tree's (PriorityFlags' default since 19.05).

type assocRow struct {
	id       uint32
	acct     string
	user     string // "" for an account's association
	uid      uint32
	parent   *assocRow
	children []*assocRow
	shares   uint32
	// usage: decayed TRES-seconds by usageTRES index; usage[usageBilling]
	// is RawUsage.
	usage   [usageTRES]float64
	runSecs [usageTRES]uint64 // running jobs' remaining TRES-seconds
	// Fair Tree's figures.
	sharesNorm, usageNorm, usageEfctv, levelFS, fsFactor float64
}

// The TRES the usage is kept for, in sshare's TRES order (codec.DefaultTRES).
const (
	usageCPU     = 0
	usageMem     = 1
	usageNode    = 3
	usageBilling = 4
	usageTRES    = 8
)

// Cluster-root association ids, as a new slurmdbd numbers them.
const (
	assocRootID     = 1
	assocRootUserID = 2
)

// usageCache keeps the decayed usage per association, added to as runs
// end: V = Σ use·2^((end−t0)/halflife) at a fixed t0, so the usage now is
// V·2^(−(now−t0)/halflife) and a new run adds without revisiting others.
type usageCache struct {
	mu     sync.Mutex
	t0     int64
	upTo   int64 // runs that ended before this are in
	built  int64 // when the cache was started (rebuilt hourly)
	byPair map[pairKey]*[usageTRES]float64
}

type pairKey struct {
	acct string
	uid  uint32
}

// halfLife is PriorityDecayHalfLife in seconds (default 7 days; 0: no
// decay).
func (c *Controller) halfLife() float64 {
	if v := c.config().Get("PriorityDecayHalfLife", ""); v != "" {
		if m, err := conf.ParseTime(v); err == nil && m != conf.Infinite {
			return float64(m) * 60
		}
	}
	return 7 * 24 * 3600
}

func decay(dt, hl float64) float64 {
	if hl <= 0 {
		return 1
	}
	return math.Exp2(dt / hl)
}

// runUse is a run's allocated TRES-seconds (cpu, mem MB, node, billing).
func runUse(j *state.Job, allocIDs string, secs float64) (u [usageTRES]float64) {
	cpus := float64(j.MinCPUs)
	mem := float64(j.MemPerNodeMB)
	nodes := float64(max(len(expandNodes(j.Nodes)), 1))
	if allocIDs != "" {
		for _, kv := range strings.Split(allocIDs, ",") {
			k, v, _ := strings.Cut(kv, "=")
			n, _ := strconv.ParseFloat(v, 64)
			switch k {
			case "1":
				cpus = n
			case "2":
				mem = n
			case "4":
				nodes = n
			}
		}
	} else if j.TresAllocStr != "" {
		for _, kv := range strings.Split(j.TresAllocStr, ",") {
			k, v, _ := strings.Cut(kv, "=")
			switch k {
			case "cpu":
				cpus, _ = strconv.ParseFloat(v, 64)
			case "node":
				nodes, _ = strconv.ParseFloat(v, 64)
			case "mem":
				mem = float64(memMB(v))
			}
		}
	}
	if j.MemPerCPUMB > 0 && mem == 0 {
		mem = float64(j.MemPerCPUMB) * cpus
	}
	u[usageCPU], u[usageMem], u[usageNode], u[usageBilling] = cpus*secs, mem*secs, nodes*secs, cpus*secs
	return u
}

// memMB reads "4000M", "4G", "512K" as MB.
func memMB(v string) uint64 {
	if v == "" {
		return 0
	}
	mult := 1.0
	switch v[len(v)-1] {
	case 'K':
		mult, v = 1.0/1024, v[:len(v)-1]
	case 'M':
		v = v[:len(v)-1]
	case 'G':
		mult, v = 1024, v[:len(v)-1]
	case 'T':
		mult, v = 1024*1024, v[:len(v)-1]
	}
	n, _ := strconv.ParseFloat(v, 64)
	return uint64(n * mult)
}

// pairOf is the association a run of uid in account acct counts in: a
// run that named no account in the account such runs go to (jobsAcct).
func pairOf(acct, jobsAcct string, uid uint32) pairKey {
	if acct == "" {
		acct = jobsAcct
	}
	return pairKey{acct, uid}
}

// refreshUsage adds the runs that ended since the last call (all of the
// last 20 half-lives at first, and again hourly), and returns the usage
// per pair at now.
func (c *Controller) refreshUsage(now int64, jobsAcct string) map[pairKey][usageTRES]float64 {
	u := &c.usage
	u.mu.Lock()
	defer u.mu.Unlock()
	hl := c.halfLife()
	if u.byPair == nil || now-u.built > 3600 {
		u.byPair, u.t0, u.built = map[pairKey]*[usageTRES]float64{}, now, now
		u.upTo = 0
		if hl > 0 {
			u.upTo = now - int64(20*hl)
		}
	}
	// Runs end into the history a moment after their end time: the last
	// few seconds are read again next time, not skipped.
	to := now - 5
	if c.opt.Store != nil && to > u.upTo {
		_ = c.opt.Store.RunsEnded(u.upTo, to, func(h *state.HistJob) bool {
			if h.StartTime == 0 {
				return true
			}
			alloc := ""
			if h.Origin == state.OriginSlurmdbd {
				alloc = h.TresAllocIDs
			}
			use := runUse(&h.Job, alloc, float64(max(h.EndTime-h.StartTime, 0)))
			k := pairOf(h.Account, "", h.UserID) // mapped when read
			v := u.byPair[k]
			if v == nil {
				v = new([usageTRES]float64)
				u.byPair[k] = v
			}
			f := decay(float64(h.EndTime-u.t0), hl)
			for i := range use {
				v[i] += use[i] * f
			}
			return true
		})
		u.upTo = to
	}
	out := make(map[pairKey][usageTRES]float64, len(u.byPair))
	f := decay(float64(u.t0-now), hl)
	for k, v := range u.byPair {
		k = pairOf(k.acct, jobsAcct, k.uid)
		x := out[k]
		for i := range v {
			x[i] += v[i] * f
		}
		out[k] = x
	}
	return out
}

// assocTree builds the tree as of now: rows in slurmctld's order (each
// parent, then its users by name, then its sub-accounts by name).
func (c *Controller) assocTree(now int64) []*assocRow {
	var list []state.Assoc
	if c.opt.Store != nil {
		list, _ = c.opt.Store.Assocs()
	}
	root := &assocRow{id: assocRootID, acct: state.RootAccount, shares: codec.NoVal}
	accts := map[string]*assocRow{state.RootAccount: root}
	users := map[pairKey]*assocRow{}
	addUser := func(a *assocRow, uid uint32, name string, id uint32) *assocRow {
		k := pairKey{a.acct, uid}
		if r := users[k]; r != nil {
			return r
		}
		r := &assocRow{id: id, acct: a.acct, user: name, uid: uid, parent: a, shares: 1}
		users[k] = r
		a.children = append(a.children, r)
		return r
	}
	addUser(root, 0, "root", assocRootUserID)
	nextID := uint32(3)
	for _, a := range list {
		nextID = max(nextID, a.ID+1)
	}
	dirs := c.directory()
	parentOf := map[string]string{}
	for _, d := range dirs {
		for a, p := range d.parents {
			parentOf[a] = p
		}
	}
	var acctOf func(name string, id uint32) *assocRow
	depth := 0
	acctOf = func(name string, id uint32) *assocRow {
		if a := accts[name]; a != nil {
			return a
		}
		if id == 0 {
			id, nextID = nextID, nextID+1
		}
		parent := root
		if p := parentOf[name]; p != "" && p != name && depth < 64 {
			depth++
			parent = acctOf(p, 0)
			depth--
		}
		a := &assocRow{id: id, acct: name, parent: parent, shares: 1}
		accts[name] = a
		parent.children = append(parent.children, a)
		return a
	}
	jobsAcct := jobsAccount(dirs)
	for _, a := range list {
		if a.User == "" {
			acctOf(a.Account, a.ID)
		}
	}
	for _, a := range list {
		if a.User != "" {
			k := pairOf(a.Account, jobsAcct, a.UID)
			addUser(acctOf(k.acct, 0), a.UID, a.User, a.ID)
		}
	}
	// The engine's accounts and users (Backend.AI's projects and their
	// members), the ones no job has used yet too.
	for _, d := range dirs {
		for _, acct := range d.accts {
			acctOf(acct, 0)
		}
		for _, u := range d.users {
			for _, acct := range u.Accounts {
				if r := addUser(acctOf(acct, 0), u.UID, u.Name, 0); r.id == 0 {
					r.id, nextID = nextID, nextID+1
				}
			}
		}
	}
	// Jobs not in the history yet (pending, running): their pairs, and
	// what the running ones use so far and have left (TRESRunMins).
	type liveUse struct {
		k        pairKey
		name     string
		use      [usageTRES]float64
		run      [usageTRES]uint64
		counting bool
	}
	var lives []liveUse
	c.mu.Lock()
	for _, e := range c.jobs {
		if e.finished() && e.state&codec.JOB_COMPLETING == 0 {
			continue
		}
		j := e.job()
		l := liveUse{k: pairOf(j.Account, jobsAcct, j.UserID), name: j.UserName}
		if codec.JobIsRunning(j.State) && j.StartTime > 0 {
			el := float64(max(now-j.StartTime, 0))
			l.use, l.counting = runUse(j, "", el), true
			if j.TimeLimit != codec.NoVal && j.TimeLimit != conf.Infinite {
				left := max(float64(j.TimeLimit)*60-el, 0)
				per := runUse(j, "", left)
				for i := range per {
					l.run[i] = uint64(per[i])
				}
			}
		}
		lives = append(lives, l)
	}
	c.mu.Unlock()
	used := c.refreshUsage(now, jobsAcct)
	for _, l := range lives {
		name := l.name
		if name == "" {
			name = strconv.FormatUint(uint64(l.k.uid), 10)
		}
		r := addUser(acctOf(l.k.acct, 0), l.k.uid, name, 0)
		if r.id == 0 {
			r.id, nextID = nextID, nextID+1
		}
		if l.counting {
			x := used[l.k]
			for i := range x {
				x[i] += l.use[i]
			}
			used[l.k] = x
		}
		for i := range l.run {
			r.runSecs[i] += l.run[i]
		}
	}
	for k, v := range used {
		r := users[k]
		if r == nil {
			name := strconv.FormatUint(uint64(k.uid), 10)
			if k.uid == 0 {
				name = "root"
			}
			r = addUser(acctOf(k.acct, 0), k.uid, name, 0)
			if r.id == 0 {
				r.id, nextID = nextID, nextID+1
			}
		}
		r.usage = v
	}
	// Shares, where the imported database gave them.
	for _, d := range dirs {
		for k, n := range d.shares {
			if k[1] == "" {
				if a := accts[k[0]]; a != nil && a != root {
					a.shares = n
				}
				continue
			}
			for pk, r := range users {
				if pk.acct == k[0] && r.user == k[1] {
					r.shares = n
				}
			}
		}
	}
	// Sums up the tree, then Fair Tree's figures.
	var sum func(a *assocRow)
	sum = func(a *assocRow) {
		for _, ch := range a.children {
			sum(ch)
			for i := range ch.usage {
				a.usage[i] += ch.usage[i]
				a.runSecs[i] += ch.runSecs[i]
			}
		}
	}
	// The engine's own fair share (Backend.AI 26.3+): its usage and
	// factor for each user row, its weight as the shares.
	engineFS := c.engineFairShares(users)
	sum(root)
	var order func(a *assocRow)
	var out []*assocRow
	order = func(a *assocRow) {
		out = append(out, a)
		sort.SliceStable(a.children, func(i, j int) bool {
			x, y := a.children[i], a.children[j]
			if (x.user != "") != (y.user != "") {
				return x.user != ""
			}
			if x.user != "" {
				return x.user < y.user
			}
			return x.acct < y.acct
		})
		for _, ch := range a.children {
			order(ch)
		}
	}
	order(root)
	fairTree(root)
	for r, f := range engineFS {
		r.fsFactor = f
	}
	return out
}

// engineFairShares puts the engine's fair-share records on the user rows
// (those with none: no use, factor 1, as the engine says) and returns
// the factors; nil when the engine computes none (the embedded engine, a
// manager older than 26.3), the history's usage then standing. A user's
// record is its default partition's resource group's where it has one,
// else the first.
func (c *Controller) engineFairShares(users map[pairKey]*assocRow) map[*assocRow]float64 {
	src, ok := c.opt.Backend.(translate.FairShareSource)
	if !ok {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	list, err := src.FairShares(ctx)
	if err != nil {
		if !errors.Is(err, translate.ErrNotSupported) {
			c.logf("sshare: the engine's fair share: %v", err)
		}
		return nil
	}
	rg := ""
	cl := c.cluster()
	for _, p := range cl.parts {
		if p.Default {
			rg = p.ResourceGroup
		}
	}
	type key struct{ acct, user string }
	recs := map[key]translate.FairShare{}
	for _, f := range list {
		k := key{f.Project, f.User}
		if have, ok := recs[k]; !ok || (f.ResourceGroup == rg && have.ResourceGroup != rg) {
			recs[k] = f
		}
	}
	out := map[*assocRow]float64{}
	for _, r := range users {
		if r.parent == nil || r.parent.parent == nil && r.acct == state.RootAccount && r.user == "root" {
			continue // root's own association: not the engine's
		}
		f, ok := recs[key{r.acct, r.user}]
		if !ok {
			f = translate.FairShare{Weight: 1, Factor: 1}
		}
		r.usage = [usageTRES]float64{}
		r.usage[usageCPU], r.usage[usageBilling] = f.DecayedUsage, f.DecayedUsage
		if w := math.Round(f.Weight); w >= 1 && w < 1<<31 {
			r.shares = uint32(w)
		}
		out[r] = f.Factor
	}
	return out
}

// fairTree sets each row's normalised shares and usage, level fair share
// and, for users, the fair-share factor: users ranked by walking the
// tree in order of descending LevelFS, the first 1, the last 1/n, ties
// sharing a rank (priority_multifactor's Fair Tree).
func fairTree(root *assocRow) {
	total := root.usage[usageBilling]
	// The root's own figures are what slurmctld's are (its shares are
	// not shares).
	root.sharesNorm, root.usageEfctv, root.levelFS = 1/float64(codec.NoVal), 1, float64(codec.NoVal)
	root.usageNorm = float64(codec.NoVal)
	if total > 0 {
		root.usageNorm = 1
	}
	var users []*assocRow
	var walk func(a *assocRow)
	walk = func(a *assocRow) {
		var shares float64
		for _, ch := range a.children {
			shares += float64(ch.shares)
		}
		kids := append([]*assocRow(nil), a.children...)
		for _, ch := range kids {
			ch.sharesNorm = float64(ch.shares) / shares
			if total > 0 {
				ch.usageNorm = ch.usage[usageBilling] / total
			}
			if a.usage[usageBilling] > 0 {
				ch.usageEfctv = ch.usage[usageBilling] / a.usage[usageBilling]
			}
			ch.levelFS = math.Inf(1)
			if ch.usageEfctv > 0 {
				ch.levelFS = ch.sharesNorm / ch.usageEfctv
			}
		}
		sort.SliceStable(kids, func(i, j int) bool { return kids[i].levelFS > kids[j].levelFS })
		for _, ch := range kids {
			if ch.user != "" {
				users = append(users, ch)
			} else {
				walk(ch)
			}
		}
	}
	walk(root)
	n := float64(len(users))
	rank := n
	for i, u := range users {
		if i > 0 && u.levelFS != users[i-1].levelFS {
			rank = n - float64(i)
		}
		u.fsFactor = rank / n
	}
}

type dirView struct {
	accts    []string
	accounts []translate.DirAccount
	users    []translate.DirUser
	jobsAcct string
	// From an imported slurmdbd database: the account tree, shares, and
	// who is an operator.
	parents   map[string]string
	shares    map[[2]string]uint32 // (account, user "" for the account's own)
	operators map[string]bool
}

// jobsAccount is the account jobs that name none count in.
func jobsAccount(dirs []dirView) string {
	for _, d := range dirs {
		if d.jobsAcct != "" {
			return d.jobsAcct
		}
	}
	return state.RootAccount
}

// windowUse is what each association's runs were allocated in [start,
// end) (TRES-seconds, not decayed): sreport's figures.
func (c *Controller) windowUse(start, end int64, jobsAcct string) map[pairKey][usageTRES]float64 {
	now := time.Now().Unix()
	if end == 0 || end > now {
		end = now
	}
	out := map[pairKey][usageTRES]float64{}
	add := func(j *state.Job, alloc string, s, e int64) {
		s, e = max(s, start), min(e, end)
		if s >= e || j.StartTime == 0 {
			return
		}
		k := pairOf(j.Account, jobsAcct, j.UserID)
		x := out[k]
		u := runUse(j, alloc, float64(e-s))
		for i := range u {
			x[i] += u[i]
		}
		out[k] = x
	}
	if c.opt.Store != nil {
		_ = c.opt.Store.RunsEnded(start, 1<<62, func(h *state.HistJob) bool {
			alloc := ""
			if h.Origin == state.OriginSlurmdbd {
				alloc = h.TresAllocIDs
			}
			add(&h.Job, alloc, h.StartTime, h.EndTime)
			return true
		})
	}
	c.mu.Lock()
	var running []state.Job
	for _, e := range c.jobs {
		if j := e.job(); codec.JobIsRunning(j.State) && j.StartTime > 0 {
			running = append(running, *j)
		}
	}
	c.mu.Unlock()
	for i := range running {
		add(&running[i], "", running[i].StartTime, now)
	}
	return out
}

// directory is the engine's directory, if it keeps one (nil otherwise,
// or when it cannot be read: the history's associations still show).
func (c *Controller) directory() []dirView {
	var out []dirView
	if v := c.importedView(); v != nil {
		out = append(out, *v)
	}
	d, ok := c.opt.Backend.(translate.Directory)
	if !ok {
		return out
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	info, err := d.Directory(ctx)
	if err != nil {
		c.logf("accounting: the engine's users and projects: %v", err)
		return out
	}
	// The engine hands out the same directory until it reads it again:
	// the view (its users' uids looked up) is made once per directory.
	c.dirMu.Lock()
	defer c.dirMu.Unlock()
	if c.dirOf != info {
		c.dirOf, c.dirView = info, engineView(info)
	}
	return append(out, c.dirView)
}

// engineView is the engine's directory as the tree uses it: users' uids
// from its container uid, else the local passwd (else none: never root).
func engineView(info *translate.DirectoryInfo) dirView {
	v := dirView{users: append([]translate.DirUser(nil), info.Users...), jobsAcct: info.JobsAccount, accounts: info.Accounts}
	for _, a := range info.Accounts {
		v.accts = append(v.accts, a.Name)
	}
	for i := range v.users {
		u := &v.users[i]
		if !u.UIDKnown {
			if pw, err := user.Lookup(u.Name); err == nil {
				if n, err := strconv.ParseUint(pw.Uid, 10, 32); err == nil {
					u.UID, u.UIDKnown = uint32(n), true
				}
			}
		}
		if !u.UIDKnown {
			u.UID = codec.NoVal
		}
	}
	return v
}

// importedView is the directory an import-slurmdbd kept (read once: the
// import runs with the server stopped).
func (c *Controller) importedView() *dirView {
	c.impOnce.Do(func() {
		if c.opt.Store == nil {
			return
		}
		d, err := c.opt.Store.ImportedDirectoryOf()
		if err != nil {
			c.logf("accounting: the imported accounts: %v", err)
		}
		if d == nil {
			return
		}
		v := &dirView{parents: map[string]string{}, shares: map[[2]string]uint32{}, operators: map[string]bool{}}
		for _, a := range d.Accounts {
			v.accounts = append(v.accounts, translate.DirAccount{Name: a.Name, Description: a.Description, Organization: a.Organization})
			if a.Name != state.RootAccount {
				v.accts = append(v.accts, a.Name)
			}
			if a.Parent != "" {
				v.parents[a.Name] = a.Parent
			}
		}
		for _, a := range d.Assocs {
			v.shares[[2]string{a.Account, a.User}] = a.Shares
		}
		for _, u := range d.Users {
			du := translate.DirUser{Name: u.Name, UID: u.UID, UIDKnown: u.UIDKnown, DefaultAccount: u.Default, Admin: u.AdminLevel >= 3}
			if !u.UIDKnown {
				du.UID = codec.NoVal
			}
			for _, a := range d.Assocs {
				if a.User == u.Name {
					du.Accounts = append(du.Accounts, a.Account)
				}
			}
			if u.AdminLevel == 2 {
				v.operators[u.Name] = true
			}
			v.users = append(v.users, du)
		}
		c.imp = v
	})
	return c.imp
}

// shareInfo answers REQUEST_SHARE_INFO (sshare).
func (c *Controller) shareInfo(req *Request) Reply {
	var m codec.ShareInfoRequest
	r := codec.NewReader(req.Body)
	if err := m.Decode(&r, req.Version); err != nil {
		return rcReply(codec.CodeOf(err))
	}
	now := time.Now().Unix()
	rows := c.assocTree(now)
	in := func(l [][]byte, s string) bool {
		for _, x := range l {
			if strings.EqualFold(string(x), s) {
				return true
			}
		}
		return false
	}
	private := c.hides(privateUsage, req.UID)
	info := codec.ShareInfo{}
	for _, t := range codec.DefaultTRES {
		n := t.Type
		if t.Name != "" {
			n += "/" + t.Name
		}
		info.TRESNames = append(info.TRESNames, n)
	}
	nt := len(info.TRESNames)
	for _, a := range rows {
		if a.user != "" && len(m.Users) > 0 && !in(m.Users, a.user) {
			continue
		}
		if len(m.Accounts) > 0 && !in(m.Accounts, a.acct) {
			continue
		}
		if private && (a.user == "" || a.uid != req.UID) {
			continue // PrivateData=usage: one's own rows only
		}
		s := codec.AssocShares{AssocID: a.id, Cluster: c.opt.ClusterName, Name: a.acct, SharesRaw: a.shares,
			SharesNorm: a.sharesNorm, UsageEfctv: a.usageEfctv, UsageNorm: a.usageNorm, UsageRaw: uint64(a.usage[usageBilling]),
			FSFactor: a.fsFactor, LevelFS: a.levelFS,
			TRESRunSecs: make([]uint64, nt), TRESGrpMins: make([]uint64, nt), UsageTRESRaw: make([]float64, nt)}
		if a.parent != nil {
			s.Parent = a.parent.acct
		}
		if a.user != "" {
			s.Name, s.Parent, s.User = a.user, a.acct, true
		}
		for i := 0; i < nt; i++ {
			s.TRESGrpMins[i] = math.MaxUint64 // no GrpTRESMins
			if i < usageTRES {
				s.TRESRunSecs[i] = a.runSecs[i]
				s.UsageTRESRaw[i] = math.Floor(a.usage[i])
			}
		}
		info.Assocs = append(info.Assocs, s)
	}
	w := codec.Writer{B: make([]byte, 0, 256+200*len(info.Assocs))}
	info.Encode(&w, req.Version)
	return Reply{MsgType: codec.RESPONSE_SHARE_INFO, Body: w.B}
}

// priorityFactors answers REQUEST_PRIORITY_FACTORS (sprio) as slurmctld
// does: under priority/basic no factors (sprio itself refuses to ask),
// under priority/multifactor each pending job's (priority.go).
func (c *Controller) priorityFactors(req *Request) Reply {
	var m codec.PriorityFactorsRequest
	r := codec.NewReader(req.Body)
	if err := m.Decode(&r, req.Version); err != nil {
		return rcReply(codec.CodeOf(err))
	}
	var info codec.PriorityFactorsInfo
	if p := c.prioParams(); p.multifactor {
		info = c.multifactorInfo(p, &m)
	}
	w := codec.Writer{}
	info.Encode(&w, req.Version)
	return Reply{MsgType: codec.RESPONSE_PRIORITY_FACTORS, Body: w.B}
}
