package double

import (
	"crypto/sha1"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Fair share (BEP-1026) as 26.8.1 computes and serves it, for users.
//
// The FairShareObserver (sokovan/scheduler/handlers/observer/fair_share.py,
// a scheduler task every 300 s after a 60 s delay; here every
// 5×LongCycle after one LongCycle, or on ObserveFairShare) books the
// occupied slots of every started kernel of a resource group into daily
// usage buckets per (user, project): from its starts_at, or where the
// previous pass stopped, to terminated_at, or for a running kernel to the
// last 5-minute clock boundary, in 5-minute slices whose seconds are
// truncated to whole seconds (fair_share/aggregator.py). Terminated
// kernels older than the lookback window are not looked at. A group
// whose pass booked nothing is not recalculated: snapshots only move
// while kernels run or have just ended.
//
// The calculation (fair_share/calculator.py, repositories/fair_share/
// db_source/db_source.py get_fair_share_calculation_context and
// bulk_update_fair_share_factors) takes, for each user with buckets dated
// today-lookback_days … today:
//
//	decayed[r] = Σ bucket[r] · 2^(-days_ago/half_life_days)  (today: undecayed)
//	normalized = Σ_r w[r]·decayed[r]/(cap[r]·lookback_days·86400) / Σ_r w[r]
//	             over the slots r with cap[r] > 0 (cap: ALIVE schedulable agents)
//	factor     = 2^(clamp(-normalized/weight, -10, 10)), clamped to [0, 1]
//
// with the group's FairShareScalingGroupSpec defaults (half_life_days 7,
// lookback_days 28, decay_unit_days 1, default_weight 1, no resource
// weights). Resource weights w: a user without a record yet gets the
// calculator's DEFAULT_RESOURCE_WEIGHTS (cpu 1, mem 0.001, cuda.device
// 10, cuda.shares 10, others 1); a user with one gets its merged weights,
// which (row resource_weights being empty) are default_weight = 1 for
// every slot of the capacity — so from the second calculation on, mem
// counts as much as cpu. That is what 26.8.1 does. The record is upserted
// with the factor and normalized usage rounded to Numeric(8,6) and the
// decayed usage as a JSONB ResourceSlot (hundredths, keys in JSONB order).
//
// Not modelled: domain and project records (and the scheduling ranks
// derived from them), the rg-scoped routes, weight upserts over HTTP, the
// v2 REST routes, per-group fair_share_spec changes. A session
// rescheduled (RESCHEDULING resets its kernels) loses the part of its
// previous run not observed yet.

// The defaults of FairShareScalingGroupSpec (data/scaling_group/types.py)
// and of the fair share rows (models/fair_share/row.py).
const (
	fsHalfLifeDays  = 7
	fsLookbackDays  = 28
	fsDecayUnitDays = 1
	fsSliceSeconds  = 300 // aggregator.py SLICE_DURATION_SECONDS
)

// DEFAULT_RESOURCE_WEIGHTS of calculator.py.
var fsDefaultResourceWeights = map[string]float64{"cpu": 1, "mem": 0.001, "cuda.device": 10, "cuda.shares": 10}

// fsKey is (resource group name, user uuid, project id).
type fsKey struct{ rg, user, project string }

// fsRecord is a user_fair_shares row.
type fsRecord struct {
	key        fsKey
	domain     string
	weight     *float64 // nil: the group's default_weight
	factor     float64  // Numeric(8,6)
	normalized float64  // Numeric(8,6)
	decayed    map[string]float64
	lookStart  int64 // days since the epoch (UTC)
	lookEnd    int64
	calcAt     time.Time
	createdAt  time.Time
	updatedAt  time.Time
}

type fsBuckets struct {
	domain string
	days   map[int64]map[string]float64 // day → slot → resource-seconds
}

type fsState struct {
	records  map[fsKey]*fsRecord
	order    []*fsRecord // insertion order (the table's natural order)
	buckets  map[fsKey]*fsBuckets
	pending  map[string]bool // groups with usage booked since their last calculation
	lastPass time.Time       // the last observer pass
}

func (d *Double) fairShare() *fsState {
	if d.fs == nil {
		d.fs = &fsState{records: map[fsKey]*fsRecord{}, buckets: map[fsKey]*fsBuckets{}, pending: map[string]bool{}}
	}
	return d.fs
}

func dayOf(t time.Time) int64 { return int64(math.Floor(float64(t.UTC().Unix()) / 86400)) }

func dayTime(n int64) time.Time { return time.Unix(n*86400, 0).UTC() }

func floorSlice(t time.Time) time.Time {
	e := t.Unix()
	return time.Unix(e-((e%fsSliceSeconds)+fsSliceSeconds)%fsSliceSeconds, 0).UTC()
}

// fairShareDue runs the observer when its period has come (from the
// scheduler loop, d.mu held).
func (d *Double) fairShareDue(now time.Time) {
	st := d.fairShare()
	if st.lastPass.IsZero() {
		if now.Sub(d.start) < d.opts.LongCycle {
			return
		}
	} else if now.Sub(st.lastPass) < 5*d.opts.LongCycle {
		return
	}
	d.observeFairShare(now)
}

// ObserveFairShare runs a FairShareObserver pass now: kernel usage up to
// now is booked and the factors of the groups that booked any (or got
// AddFairShareUsage) are recalculated.
func (d *Double) ObserveFairShare() {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.observeFairShare(time.Now().UTC())
}

func (d *Double) observeFairShare(now time.Time) {
	st := d.fairShare()
	prev := st.lastPass
	prevFloor := floorSlice(prev)
	cutoff := now.Add(-fsLookbackDays * 24 * time.Hour)
	for _, s := range d.sessSeq {
		if s.rg == nil || s.project == nil || s.owner == nil {
			continue
		}
		for _, k := range s.kernels {
			if k.startsAt.IsZero() {
				continue
			}
			end := k.terminatedAt
			if end.IsZero() && k.status.terminal() {
				end = k.statusChanged
			}
			if end.IsZero() {
				end = floorSlice(now) // RUNNING: complete slices only
			} else if (!prev.IsZero() && !end.After(prev)) || end.Before(cutoff) {
				continue // observed when it ended, or out of the window
			}
			start := k.startsAt
			if !prev.IsZero() && prevFloor.After(start) {
				start = prevFloor // last_observed_at
			}
			if !end.After(start) {
				continue
			}
			occ := d.occupiedOf(k)
			key := fsKey{s.rg.name, s.owner.uuid, s.project.id}
			b := st.buckets[key]
			if b == nil {
				b = &fsBuckets{domain: s.domain, days: map[int64]map[string]float64{}}
				st.buckets[key] = b
			}
			for cur := start; cur.Before(end); {
				next := time.Unix((cur.Unix()/fsSliceSeconds+1)*fsSliceSeconds, 0).UTC()
				if next.After(end) {
					next = end
				}
				secs := math.Trunc(next.Sub(cur).Seconds())
				day := dayOf(cur)
				m := b.days[day]
				if m == nil {
					m = map[string]float64{}
					b.days[day] = m
				}
				for _, q := range occ {
					m[q.name] += q.v * secs
				}
				cur = next
			}
			st.pending[s.rg.name] = true
		}
	}
	st.lastPass = now
	for _, rg := range d.rgOrder {
		if st.pending[rg.name] {
			d.calcFairShares(rg, now)
		}
	}
	st.pending = map[string]bool{}
}

type fsSlot struct {
	name string
	v    float64
}

// occupiedOf is the kernel's occupied_slots in slot units (cores, bytes,
// devices).
func (d *Double) occupiedOf(k *kernel) []fsSlot {
	out := make([]fsSlot, 0, len(k.requested))
	for _, q := range k.requested {
		out = append(out, fsSlot{q.name, d.slotUnits(q.name, q.q)})
	}
	return out
}

func (d *Double) slotUnits(name string, q int64) float64 {
	if isBytesSlot(name, d.slotTypes) {
		return float64(q)
	}
	return float64(q) / 1000
}

// fsCapacity is the sum of the ALIVE schedulable agents' slots, in slot
// rank order (_fetch_cluster_capacity).
func (d *Double) fsCapacity(rg *rgroup) []fsSlot {
	sum := map[string]int64{}
	for _, a := range rg.agents {
		if a.status != "ALIVE" || !a.schedulable {
			continue
		}
		for _, q := range a.capacity {
			sum[q.name] += q.q
		}
	}
	var out []fsSlot
	for _, n := range d.slotOrder {
		if q, ok := sum[n]; ok {
			out = append(out, fsSlot{n, d.slotUnits(n, q)})
		}
	}
	return out
}

func round6(x float64) float64 { return math.Round(x*1e6) / 1e6 }

// calcFairShares is _calculate_and_update_factors_and_ranks for one group.
func (d *Double) calcFairShares(rg *rgroup, now time.Time) {
	st := d.fairShare()
	today := dayOf(now)
	lookStart := today - fsLookbackDays
	capl := d.fsCapacity(rg)
	capm := map[string]float64{}
	for _, c := range capl {
		capm[c.name] = c.v
	}
	type result struct {
		key        fsKey
		domain     string
		decayed    map[string]float64
		normalized float64
		factor     float64
	}
	var results []result
	keys := make([]fsKey, 0)
	for k := range st.buckets {
		if k.rg == rg.name {
			keys = append(keys, k)
		}
	}
	sort.Slice(keys, func(i, j int) bool {
		return keys[i].user < keys[j].user || (keys[i].user == keys[j].user && keys[i].project < keys[j].project)
	})
	for _, k := range keys {
		b := st.buckets[k]
		usage := map[string]float64{}
		any := false
		for day, slots := range b.days {
			if day < lookStart || day > today {
				continue
			}
			any = true
			f := 1.0
			if ago := today - day; ago > 0 {
				f = math.Pow(2, -float64(ago)/fsHalfLifeDays)
			}
			for n, v := range slots {
				usage[n] += v * f
			}
		}
		if !any {
			continue
		}
		rec := st.records[k]
		weight := 1.0 // default_weight
		if rec != nil && rec.weight != nil {
			weight = *rec.weight
		}
		rw := fsDefaultResourceWeights
		if rec != nil && len(capl) > 0 {
			// to_data's merged weights: default_weight for every slot.
			rw = map[string]float64{}
			for _, c := range capl {
				rw[c.name] = 1
			}
		}
		var tot, tw float64
		for n, u := range usage {
			if c := capm[n]; c > 0 {
				w, ok := rw[n]
				if !ok {
					w = 1
				}
				tot += u / (c * fsLookbackDays * 86400) * w
				tw += w
			}
		}
		norm := 0.0
		if tw > 0 {
			norm = tot / tw
		}
		exp := math.Max(math.Min(-norm/weight, 10), -10)
		factor := math.Max(math.Min(math.Pow(2, exp), 1), 0)
		if round6(norm) >= 100 || round6(factor) >= 100 {
			// Numeric(8,6) overflows: the whole update fails (logged).
			d.log.Printf("double: fair share of %s: normalized usage %g out of range", rg.name, norm)
			return
		}
		results = append(results, result{k, b.domain, usage, round6(norm), round6(factor)})
	}
	for _, r := range results {
		rec := st.records[r.key]
		if rec == nil {
			rec = &fsRecord{key: r.key, createdAt: now, updatedAt: now}
			st.records[r.key] = rec
			st.order = append(st.order, rec)
		}
		rec.domain = r.domain
		rec.factor, rec.normalized, rec.decayed = r.factor, r.normalized, r.decayed
		rec.lookStart, rec.lookEnd, rec.calcAt = lookStart, today, now
	}
}

// FairShareUsage is resource use to book into the fair-share history, as
// the observer would have from kernels that ran before: Slots occupied
// for Duration, on the UTC day of Day.
type FairShareUsage struct {
	ResourceGroup string            // default "default"
	Project       string            // name or id; default "default"
	User          string            // e-mail, username or UUID
	Day           time.Time         // zero: today
	Slots         map[string]string // e.g. {"cpu": "2", "mem": "4g"}
	Duration      time.Duration
}

// AddFairShareUsage books past usage. The factors follow at the next
// observer pass (ObserveFairShare), which recalculates the group.
func (d *Double) AddFairShareUsage(u FairShareUsage) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	rg, p, usr, err := d.fsTarget(u.ResourceGroup, u.Project, u.User)
	if err != nil {
		return err
	}
	day := u.Day
	if day.IsZero() {
		day = time.Now()
	}
	key := fsKey{rg.name, usr.uuid, p.id}
	st := d.fairShare()
	b := st.buckets[key]
	if b == nil {
		b = &fsBuckets{domain: p.domain, days: map[int64]map[string]float64{}}
		st.buckets[key] = b
	}
	m := b.days[dayOf(day)]
	if m == nil {
		m = map[string]float64{}
		b.days[dayOf(day)] = m
	}
	secs := math.Trunc(u.Duration.Seconds())
	for n, v := range u.Slots {
		m[n] += d.slotUnits(n, parseQuantityString(v, isBytesSlot(n, d.slotTypes))) * secs
	}
	st.pending[rg.name] = true
	return nil
}

// SetUserFairShareWeight sets a user's fair-share weight in a project and
// resource group (PUT /fair-share/users/{rg}/{project_id}/{user_uuid}/weight
// without the HTTP): the record is created (factor 1, no usage) if there
// is none. The factor follows at the next calculation of the group.
// Higher weight = less penalty for the same usage.
func (d *Double) SetUserFairShareWeight(resourceGroup, project, user string, weight float64) error {
	if !(weight > 0) || weight >= 1e6 {
		return fmt.Errorf("double: fair-share weight %v out of range (0, 1e6)", weight)
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	rg, p, usr, err := d.fsTarget(resourceGroup, project, user)
	if err != nil {
		return err
	}
	st := d.fairShare()
	key := fsKey{rg.name, usr.uuid, p.id}
	now := time.Now().UTC()
	w := math.Round(weight*1e4) / 1e4 // Numeric(10,4)
	rec := st.records[key]
	if rec == nil {
		rec = &fsRecord{key: key, domain: p.domain, factor: 1, decayed: map[string]float64{},
			lookStart: dayOf(now), lookEnd: dayOf(now), calcAt: now, createdAt: now}
		st.records[key] = rec
		st.order = append(st.order, rec)
	}
	rec.weight = &w
	rec.updatedAt = now
	return nil
}

func (d *Double) fsTarget(rgName, project, user string) (*rgroup, *project, *user, error) {
	if rgName == "" {
		rgName = "default"
	}
	if project == "" {
		project = "default"
	}
	rg := d.rgs[rgName]
	if rg == nil {
		return nil, nil, nil, fmt.Errorf("double: no resource group %q", rgName)
	}
	p := d.projects[project]
	if id, ok := canonUUID(project); ok && p == nil {
		p = d.projects[id]
	}
	if p == nil {
		p = d.projectByName("", project)
	}
	if p == nil {
		return nil, nil, nil, fmt.Errorf("double: no project %q", project)
	}
	u := d.byEmail[user]
	if u == nil {
		if id, ok := canonUUID(user); ok {
			u = d.users[id]
		}
	}
	if u == nil {
		for _, x := range d.users {
			if x.username == user {
				u = x
				break
			}
		}
	}
	if u == nil {
		return nil, nil, nil, errors.New("double: no user " + strconv.Quote(user))
	}
	return rg, p, u, nil
}

// ---- HTTP (api/rest/fair_share/handler.py)

// superadminOnly is superadmin_required: GenericForbidden otherwise.
func superadminOnly(c *rctx) *problem {
	if !c.auth.isSuperadmin {
		return errGenericForbidden.with("Insufficient privileges")
	}
	return nil
}

// POST /fair-share/users/search (SearchUserFairSharesRequest).
func (d *Double) hSearchUserFairShares(c *rctx) (*response, *problem) {
	if p := superadminOnly(c); p != nil {
		return nil, p
	}
	m, p := c.jsonBody()
	if p != nil {
		return nil, p
	}
	req, errs := parseFairShareSearch(m)
	if len(errs) > 0 {
		return nil, validationProblem("SearchUserFairSharesRequest", errs)
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	st := d.fairShare()
	var rows []*fsRecord
	for _, r := range st.order {
		if req.match(r) {
			rows = append(rows, r)
		}
	}
	for i := len(req.order) - 1; i >= 0; i-- {
		o := req.order[i]
		sort.SliceStable(rows, func(a, b int) bool {
			x, y := rows[a], rows[b]
			var less bool
			if o.field == "fair_share_factor" {
				if x.factor == y.factor {
					return false
				}
				less = x.factor < y.factor
			} else {
				if x.createdAt.Equal(y.createdAt) {
					return false
				}
				less = x.createdAt.Before(y.createdAt)
			}
			if o.desc {
				return !less
			}
			return less
		})
	}
	total := len(rows)
	lo := min(req.offset, total)
	hi := min(lo+req.limit, total)
	items := make([]any, 0, hi-lo)
	for _, r := range rows[lo:hi] {
		items = append(items, d.fsItem(r))
	}
	return ok200(obj{{"items", items}, {"pagination", obj{{"total", total}, {"offset", req.offset}, {"limit", req.limit}}}})
}

// GET /fair-share/users/{resource_group}/{project_id}/{user_uuid}: the
// record, or defaults for a member without one.
func (d *Double) hGetUserFairShare(c *rctx) (*response, *problem) {
	if p := superadminOnly(c); p != nil {
		return nil, p
	}
	var errs []verr
	pid, ok := canonUUID(c.vars["project_id"])
	if !ok {
		errs = append(errs, verr{loc: "project_id", typ: "uuid_parsing", msg: "Input should be a valid UUID", input: c.vars["project_id"]})
	}
	uid, ok := canonUUID(c.vars["user_uuid"])
	if !ok {
		errs = append(errs, verr{loc: "user_uuid", typ: "uuid_parsing", msg: "Input should be a valid UUID", input: c.vars["user_uuid"]})
	}
	if len(errs) > 0 {
		return nil, validationProblem("GetUserFairSharePathParam", errs)
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	rgName := c.vars["resource_group"]
	rg := d.rgs[rgName]
	if rg == nil {
		return nil, objectNotFound("scaling group", "scaling-group_read_not-found", strp(rgName), nil)
	}
	proj, u := d.projects[pid], d.users[uid]
	member := false
	if proj != nil && u != nil {
		for _, p := range u.projects {
			if p == proj {
				member = true
			}
		}
	}
	if !member {
		return nil, &problem{status: 404, typ: "user-not-found", title: "The user does not exist.", code: "user_read_not-found",
			msg: strp(fmt.Sprintf("User %s not found in project %s", uid, pid))}
	}
	if r := d.fairShare().records[fsKey{rg.name, uid, pid}]; r != nil {
		return ok200(obj{{"item", d.fsItem(r)}})
	}
	// _create_default_user_fair_share: spec from the group's defaults,
	// FairShareCalculationSnapshot.create_default.
	now := time.Now().UTC()
	today := dayOf(now)
	var zeros []any
	for _, c := range d.fsCapacity(rg) {
		zeros = append(zeros, obj{{"resource_type", c.name}, {"quantity", "0.0"}})
	}
	if zeros == nil {
		zeros = []any{}
	}
	item := obj{
		{"id", uuid5DNS(rg.name + ":" + uid + ":" + pid)},
		{"resource_group", rg.name}, {"user_uuid", uid}, {"project_id", pid}, {"domain_name", proj.domain},
		{"spec", obj{{"weight", "1.0"}, {"half_life_days", fsHalfLifeDays}, {"lookback_days", fsLookbackDays},
			{"decay_unit_days", fsDecayUnitDays}, {"resource_weights", obj{{"entries", []any{}}}}}},
		{"calculation_snapshot", obj{{"fair_share_factor", "1.0"}, {"total_decayed_usage", obj{{"entries", zeros}}},
			{"normalized_usage", "0.0"}, {"lookback_start", dayTime(today - fsLookbackDays).Format("2006-01-02")},
			{"lookback_end", dayTime(today).Format("2006-01-02")}, {"last_calculated_at", pydanticTime(now)}}},
		{"created_at", pydanticTime(now)}, {"updated_at", pydanticTime(now)},
	}
	return ok200(obj{{"item", item}})
}

// fsItem is convert_user_fair_share_to_dto of a stored row.
func (d *Double) fsItem(r *fsRecord) obj {
	weight := "1.0" // default_weight, Decimal("1.0")
	if r.weight != nil {
		weight = strconv.FormatFloat(*r.weight, 'f', 4, 64) // Numeric(10,4)
	}
	// merged resource weights: default_weight for each slot of the capacity
	rws := []any{}
	if rg := d.rgs[r.key.rg]; rg != nil {
		for _, c := range d.fsCapacity(rg) {
			rws = append(rws, obj{{"resource_type", c.name}, {"quantity", "1.0"}})
		}
	}
	// JSONB keeps object keys shorter first, then bytewise.
	names := make([]string, 0, len(r.decayed))
	for n := range r.decayed {
		names = append(names, n)
	}
	sort.Slice(names, func(i, j int) bool {
		if len(names[i]) != len(names[j]) {
			return len(names[i]) < len(names[j])
		}
		return names[i] < names[j]
	})
	usage := make([]any, 0, len(names))
	for _, n := range names {
		usage = append(usage, obj{{"resource_type", n}, {"quantity", stringifyNumber(r.decayed[n])}})
	}
	domain := r.domain
	return obj{
		{"id", uuid5DNS(r.key.rg + ":" + r.key.user + ":" + r.key.project)},
		{"resource_group", r.key.rg}, {"user_uuid", r.key.user}, {"project_id", r.key.project}, {"domain_name", domain},
		{"spec", obj{{"weight", weight}, {"half_life_days", fsHalfLifeDays}, {"lookback_days", fsLookbackDays},
			{"decay_unit_days", fsDecayUnitDays}, {"resource_weights", obj{{"entries", rws}}}}},
		{"calculation_snapshot", obj{{"fair_share_factor", strconv.FormatFloat(r.factor, 'f', 6, 64)},
			{"total_decayed_usage", obj{{"entries", usage}}},
			{"normalized_usage", strconv.FormatFloat(r.normalized, 'f', 6, 64)},
			{"lookback_start", dayTime(r.lookStart).Format("2006-01-02")},
			{"lookback_end", dayTime(r.lookEnd).Format("2006-01-02")},
			{"last_calculated_at", pydanticTime(r.calcAt)}}},
		{"created_at", pydanticTime(r.createdAt)}, {"updated_at", pydanticTime(r.updatedAt)},
	}
}

// stringifyNumber is _stringify_number of a Decimal (common/types.py):
// quantized to hundredths, normalized, fixed-point.
func stringifyNumber(v float64) string {
	s := strconv.FormatFloat(v, 'f', 2, 64)
	s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	if s == "-0" || s == "" {
		s = "0"
	}
	return s
}

// pydanticTime is a tz-aware datetime in pydantic's JSON mode, at the
// database's microsecond precision: "2026-08-10T01:02:03.456789Z".
func pydanticTime(t time.Time) string {
	t = t.UTC().Truncate(time.Microsecond)
	s := t.Format("2006-01-02T15:04:05")
	if us := t.Nanosecond() / 1000; us != 0 {
		s += fmt.Sprintf(".%06d", us)
	}
	return s + "Z"
}

// uuid5DNS is uuid.uuid5(uuid.NAMESPACE_DNS, name).
func uuid5DNS(name string) string {
	ns, _ := hex.DecodeString("6ba7b8109dad11d180b400c04fd430c8")
	h := sha1.New()
	h.Write(ns)
	h.Write([]byte(name))
	b := h.Sum(nil)[:16]
	b[6] = b[6]&0x0f | 0x50
	b[8] = b[8]&0x3f | 0x80
	x := hex.EncodeToString(b)
	return x[0:8] + "-" + x[8:12] + "-" + x[12:16] + "-" + x[16:20] + "-" + x[20:]
}

// ---- SearchUserFairSharesRequest (common/dto/manager/fair_share)

type fsSearch struct {
	rg, domain    *strMatch
	user, project *uuidMatch
	order         []fsOrder
	limit, offset int
}

type fsOrder struct {
	field string
	desc  bool
}

// strMatch is the one condition StringFilter.build_query_condition picks.
type strMatch struct {
	op      string // equals contains starts_with ends_with in
	value   string
	values  []string
	ci, neg bool
}

type uuidMatch struct {
	values []string
	neg    bool
}

func (q *fsSearch) match(r *fsRecord) bool {
	return q.rg.match(r.key.rg) && q.domain.match(r.domain) && q.user.match(r.key.user) && q.project.match(r.key.project)
}

func (m *strMatch) match(s string) bool {
	if m == nil {
		return true
	}
	var ok bool
	switch m.op {
	case "equals":
		ok = s == m.value || (m.ci && strings.ToLower(s) == strings.ToLower(m.value))
	case "in":
		for _, v := range m.values {
			if s == v || (m.ci && strings.ToLower(s) == strings.ToLower(v)) {
				ok = true
			}
		}
	case "contains":
		ok = sqlLike("%"+m.value+"%", s, m.ci)
	case "starts_with":
		ok = sqlLike(m.value+"%", s, m.ci)
	case "ends_with":
		ok = sqlLike("%"+m.value, s, m.ci)
	}
	return ok != m.neg
}

// sqlLike is SQL LIKE / ILIKE (escape character backslash).
func sqlLike(pat, s string, ci bool) bool {
	var b strings.Builder
	b.WriteString("^")
	if ci {
		b.WriteString("(?i)")
	}
	rs := []rune(pat)
	for i := 0; i < len(rs); i++ {
		switch r := rs[i]; {
		case r == '\\' && i+1 < len(rs):
			i++
			b.WriteString(regexp.QuoteMeta(string(rs[i])))
		case r == '%':
			b.WriteString("(?s:.*)")
		case r == '_':
			b.WriteString("(?s:.)")
		default:
			b.WriteString(regexp.QuoteMeta(string(r)))
		}
	}
	b.WriteString("$")
	re, err := regexp.Compile(b.String())
	return err == nil && re.MatchString(s)
}

func (m *uuidMatch) match(s string) bool {
	if m == nil {
		return true
	}
	ok := false
	for _, v := range m.values {
		if v == s {
			ok = true
		}
	}
	return ok != m.neg
}

func parseFairShareSearch(m map[string]any) (*fsSearch, []verr) {
	q := &fsSearch{limit: 50}
	var errs fieldErrs
	intField := func(name string, lo, hi int64) int {
		v, ok := m[name]
		if !ok || v == nil {
			if v == nil && ok {
				errs.add(name, "int_type", "Input should be a valid integer", v)
			}
			return -1
		}
		n, code := asInt(v)
		if code != "" {
			errs.add(name, code, intMsg(code), v)
			return -1
		}
		if n < lo {
			errs.add(name, "greater_than_equal", fmt.Sprintf("Input should be greater than or equal to %d", lo), v)
			return -1
		}
		if hi > 0 && n > hi {
			errs.add(name, "less_than_equal", fmt.Sprintf("Input should be less than or equal to %d", hi), v)
			return -1
		}
		return int(n)
	}
	if n := intField("limit", 1, 1000); n >= 0 {
		q.limit = n
	}
	if n := intField("offset", 0, 0); n >= 0 {
		q.offset = n
	}
	if f, ok := m["filter"]; ok && f != nil {
		fm, ok := f.(map[string]any)
		if !ok {
			errs.add("filter", "model_type", "Input should be a valid dictionary or instance of UserFairShareFilter", f)
		} else {
			q.rg = parseStrFilter(fm, "resource_group", &errs)
			q.domain = parseStrFilter(fm, "domain_name", &errs)
			q.user = parseUUIDFilter(fm, "user_uuid", &errs)
			q.project = parseUUIDFilter(fm, "project_id", &errs)
		}
	}
	if o, ok := m["order"]; ok && o != nil {
		ol, ok := o.([]any)
		if !ok {
			errs.add("order", "list_type", "Input should be a valid list", o)
		}
		for i, e := range ol {
			loc := fmt.Sprintf("order.%d", i)
			em, ok := e.(map[string]any)
			if !ok {
				errs.add(loc, "model_type", "Input should be a valid dictionary or instance of UserFairShareOrder", e)
				continue
			}
			var ord fsOrder
			switch f, ok := em["field"]; {
			case !ok:
				errs.add(loc+".field", "missing", "Field required", em)
			case f == "fair_share_factor" || f == "created_at":
				ord.field = f.(string)
			default:
				errs.add(loc+".field", "enum", "Input should be 'fair_share_factor' or 'created_at'", f)
			}
			ord.desc = true // OrderDirection.DESC
			if dir, ok := em["direction"]; ok {
				switch dir {
				case "asc":
					ord.desc = false
				case "desc":
				default:
					errs.add(loc+".direction", "enum", "Input should be 'asc' or 'desc'", dir)
				}
			}
			q.order = append(q.order, ord)
		}
	}
	return q, errs
}

func parseStrFilter(fm map[string]any, name string, errs *fieldErrs) *strMatch {
	v, ok := fm[name]
	if !ok || v == nil {
		return nil
	}
	m, ok := v.(map[string]any)
	if !ok {
		errs.add("filter."+name, "model_type", "Input should be a valid dictionary or instance of StringFilter", v)
		return nil
	}
	str := func(k string) (string, bool) {
		x, ok := m[k]
		if !ok || x == nil {
			return "", false
		}
		s, ok := x.(string)
		if !ok {
			errs.add("filter."+name+"."+k, "string_type", "Input should be a valid string", x)
			return "", false
		}
		return s, true
	}
	list := func(keys ...string) ([]string, bool) {
		for _, k := range keys {
			x, ok := m[k]
			if !ok || x == nil {
				continue
			}
			l, ok := x.([]any)
			if !ok {
				errs.add("filter."+name+"."+k, "list_type", "Input should be a valid list", x)
				return nil, false
			}
			out := make([]string, 0, len(l))
			for i, e := range l {
				s, ok := e.(string)
				if !ok {
					errs.add(fmt.Sprintf("filter.%s.%s.%d", name, k, i), "string_type", "Input should be a valid string", e)
					return nil, false
				}
				out = append(out, s)
			}
			return out, true
		}
		return nil, false
	}
	// build_query_condition's order: equals, contains, starts_with,
	// ends_with (each plain, i_, not_, i_not_), then in, not_in, i_in, i_not_in.
	for _, op := range []string{"equals", "contains", "starts_with", "ends_with"} {
		for _, v := range []struct {
			key     string
			ci, neg bool
		}{{op, false, false}, {"i_" + op, true, false}, {"not_" + op, false, true}, {"i_not_" + op, true, true}} {
			if s, ok := str(v.key); ok {
				return &strMatch{op: op, value: s, ci: v.ci, neg: v.neg}
			}
		}
	}
	if l, ok := list("in", "in_"); ok {
		return &strMatch{op: "in", values: l}
	}
	if l, ok := list("not_in"); ok {
		return &strMatch{op: "in", values: l, neg: true}
	}
	if l, ok := list("i_in"); ok {
		return &strMatch{op: "in", values: l, ci: true}
	}
	if l, ok := list("i_not_in"); ok {
		return &strMatch{op: "in", values: l, ci: true, neg: true}
	}
	return nil
}

func parseUUIDFilter(fm map[string]any, name string, errs *fieldErrs) *uuidMatch {
	v, ok := fm[name]
	if !ok || v == nil {
		return nil
	}
	m, ok := v.(map[string]any)
	if !ok {
		errs.add("filter."+name, "model_type", "Input should be a valid dictionary or instance of UUIDFilter", v)
		return nil
	}
	one := func(k string) (string, bool) {
		x, ok := m[k]
		if !ok || x == nil {
			return "", false
		}
		s, _ := x.(string)
		id, ok := canonUUID(s)
		if !ok {
			errs.add("filter."+name+"."+k, "uuid_parsing", "Input should be a valid UUID", x)
			return "", false
		}
		return id, true
	}
	many := func(keys ...string) ([]string, bool) {
		for _, k := range keys {
			x, ok := m[k]
			if !ok || x == nil {
				continue
			}
			l, ok := x.([]any)
			if !ok {
				errs.add("filter."+name+"."+k, "list_type", "Input should be a valid list", x)
				return nil, false
			}
			out := make([]string, 0, len(l))
			for i, e := range l {
				s, _ := e.(string)
				id, ok := canonUUID(s)
				if !ok {
					errs.add(fmt.Sprintf("filter.%s.%s.%d", name, k, i), "uuid_parsing", "Input should be a valid UUID", e)
					return nil, false
				}
				out = append(out, id)
			}
			return out, true
		}
		return nil, false
	}
	// equals, not_equals, in, not_in (UUIDFilter.build_query_condition).
	if id, ok := one("equals"); ok {
		return &uuidMatch{values: []string{id}}
	}
	if id, ok := one("not_equals"); ok {
		return &uuidMatch{values: []string{id}, neg: true}
	}
	if l, ok := many("in", "in_"); ok {
		return &uuidMatch{values: l}
	}
	if l, ok := many("not_in"); ok {
		return &uuidMatch{values: l, neg: true}
	}
	return nil
}
