package double

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
	"testing"
	"time"
)

func fsItems(t *testing.T, r reply) ([]map[string]any, map[string]any) {
	t.Helper()
	if r.status != 200 {
		t.Fatalf("status %d: %s", r.status, r.body)
	}
	m := r.json(t)
	var items []map[string]any
	for _, it := range m["items"].([]any) {
		items = append(items, it.(map[string]any))
	}
	return items, m["pagination"].(map[string]any)
}

func snap(it map[string]any, k string) any {
	return it["calculation_snapshot"].(map[string]any)[k]
}

func usageOf(it map[string]any) map[string]string {
	out := map[string]string{}
	for _, e := range snap(it, "total_decayed_usage").(map[string]any)["entries"].([]any) {
		em := e.(map[string]any)
		out[em["resource_type"].(string)] = em["quantity"].(string)
	}
	return out
}

func f6(x float64) string { return strconv.FormatFloat(math.Round(x*1e6)/1e6, 'f', 6, 64) }

func TestFairShareSearch(t *testing.T) {
	fx := newFixture(t, Options{LongCycle: time.Hour}) // no observer pass but ours
	d := fx.d
	search := func(body any) reply { return fx.admin.post("/fair-share/users/search", body) }

	// superadmin only
	fx.alice.post("/fair-share/users/search", map[string]any{}).problem(t, 403, "generic-forbidden", "backendai_generic_forbidden")
	if items, pg := fsItems(t, search(map[string]any{})); len(items) != 0 || pg["total"] != json.Number("0") || pg["limit"] != json.Number("50") {
		t.Fatalf("empty: %v %v", items, pg)
	}
	// A day of 4 cores (the group's whole cpu) today: normalized 1/28.
	if err := d.AddFairShareUsage(FairShareUsage{User: "alice@example.com", Slots: map[string]string{"cpu": "4"}, Duration: 24 * time.Hour}); err != nil {
		t.Fatal(err)
	}
	if items, _ := fsItems(t, search(map[string]any{})); len(items) != 0 {
		t.Fatalf("record before the observer ran: %v", items)
	}
	d.ObserveFairShare()
	r := search(map[string]any{})
	items, pg := fsItems(t, r)
	if len(items) != 1 || pg["total"] != json.Number("1") {
		t.Fatalf("after observation: %s", r.body)
	}
	it := items[0]
	aliceID := d.byEmail["alice@example.com"].uuid
	projID := d.projectByName("default", "default").id
	if it["user_uuid"] != aliceID || it["project_id"] != projID || it["resource_group"] != "default" || it["domain_name"] != "default" {
		t.Fatalf("keys: %v", it)
	}
	if it["id"] != uuid5DNS("default:"+aliceID+":"+projID) {
		t.Fatalf("id %v", it["id"])
	}
	norm := 1.0 / 28
	if snap(it, "normalized_usage") != f6(norm) || snap(it, "fair_share_factor") != f6(math.Pow(2, -norm)) {
		t.Fatalf("factor: %s", r.body)
	}
	if u := usageOf(it); u["cpu"] != "345600" || len(u) != 1 {
		t.Fatalf("usage %v", u)
	}
	spec := it["spec"].(map[string]any)
	if spec["weight"] != "1.0" || spec["half_life_days"] != json.Number("7") || spec["lookback_days"] != json.Number("28") || spec["decay_unit_days"] != json.Number("1") {
		t.Fatalf("spec %v", spec)
	}
	today := time.Now().UTC().Format("2006-01-02")
	if snap(it, "lookback_end") != today || snap(it, "lookback_start") != time.Now().UTC().AddDate(0, 0, -28).Format("2006-01-02") {
		t.Fatalf("window: %v %v", snap(it, "lookback_start"), snap(it, "lookback_end"))
	}
	for _, s := range []string{`"fair_share_factor": "` + f6(math.Pow(2, -1.0/28)) + `"`, `"resource_weights": {"entries": [{"resource_type": "cpu", "quantity": "1.0"}, {"resource_type": "mem", "quantity": "1.0"}, {"resource_type": "cuda.device", "quantity": "1.0"}]}`} {
		if !strings.Contains(string(r.body), s) {
			t.Fatalf("%s not in %s", s, r.body)
		}
	}
	if ts := snap(it, "last_calculated_at").(string); !strings.HasSuffix(ts, "Z") {
		t.Fatalf("datetime %q", ts)
	}

	// The second calculation uses the record's merged weights (1 each):
	// half of the memory for a day now counts as much as the cpu.
	d.AddFairShareUsage(FairShareUsage{User: "alice@example.com", Slots: map[string]string{"mem": "8g"}, Duration: 24 * time.Hour})
	d.ObserveFairShare()
	items, _ = fsItems(t, search(map[string]any{}))
	norm = (4.0/(4*28) + 8.0/(16*28)) / 2
	if snap(items[0], "normalized_usage") != f6(norm) {
		t.Fatalf("merged weights: %v, want %s", snap(items[0], "normalized_usage"), f6(norm))
	}
	// Without anything to observe, nothing is recalculated.
	at := snap(items[0], "last_calculated_at")
	d.ObserveFairShare()
	if items, _ = fsItems(t, search(map[string]any{})); snap(items[0], "last_calculated_at") != at {
		t.Fatal("recalculated with nothing observed")
	}

	// bob: weight 2, usage a week ago (decayed by half); carol: no usage.
	for _, n := range []string{"bob", "carol"} {
		if _, err := d.AddUser(User{Username: n, Email: n + "@example.com", Projects: []string{"default"}}); err != nil {
			t.Fatal(err)
		}
	}
	if err := d.SetUserFairShareWeight("default", "default", "bob", 2); err != nil {
		t.Fatal(err)
	}
	items, _ = fsItems(t, search(map[string]any{"filter": map[string]any{"user_uuid": map[string]any{"equals": d.byEmail["bob@example.com"].uuid}}}))
	if len(items) != 1 || items[0]["spec"].(map[string]any)["weight"] != "2.0000" || snap(items[0], "fair_share_factor") != "1.000000" || len(usageOf(items[0])) != 0 {
		t.Fatalf("weight only: %v", items)
	}
	d.AddFairShareUsage(FairShareUsage{User: "bob@example.com", Day: time.Now().AddDate(0, 0, -7), Slots: map[string]string{"cpu": "4"}, Duration: 48 * time.Hour})
	d.ObserveFairShare()
	items, _ = fsItems(t, search(map[string]any{"filter": map[string]any{"user_uuid": map[string]any{"equals": d.byEmail["bob@example.com"].uuid}}}))
	norm = 2.0 / 28 / 2 // two days of the whole cpu, halved by a week's decay
	if snap(items[0], "normalized_usage") != f6(norm) || snap(items[0], "fair_share_factor") != f6(math.Pow(2, -norm/2)) || usageOf(items[0])["cpu"] != "345600" {
		t.Fatalf("bob: %v", items[0])
	}

	// order, pagination, filters
	r = search(map[string]any{"order": []any{map[string]any{"field": "fair_share_factor"}}, "limit": 1, "offset": 1})
	items, pg = fsItems(t, r)
	if len(items) != 1 || pg["total"] != json.Number("2") || pg["offset"] != json.Number("1") || pg["limit"] != json.Number("1") || items[0]["user_uuid"] != aliceID {
		t.Fatalf("page: %s", r.body)
	}
	items, _ = fsItems(t, search(map[string]any{"order": []any{map[string]any{"field": "fair_share_factor", "direction": "asc"}}}))
	if items[0]["user_uuid"] != aliceID {
		t.Fatalf("asc order: %v", items)
	}
	for _, f := range []map[string]any{
		{"resource_group": map[string]any{"equals": "nope"}},
		{"domain_name": map[string]any{"i_not_contains": "FAUL"}},
		{"project_id": map[string]any{"not_in": []any{projID}}},
	} {
		if items, _ := fsItems(t, search(map[string]any{"filter": f})); len(items) != 0 {
			t.Fatalf("filter %v: %v", f, items)
		}
	}
	if items, _ := fsItems(t, search(map[string]any{"filter": map[string]any{"resource_group": map[string]any{"starts_with": "def"}}})); len(items) != 2 {
		t.Fatalf("starts_with: %v", items)
	}
	// validation
	for _, b := range []map[string]any{{"limit": 0}, {"limit": 1001}, {"offset": -1}, {"order": []any{map[string]any{"field": "weight"}}},
		{"filter": map[string]any{"user_uuid": map[string]any{"equals": "x"}}}} {
		search(b).problem(t, 400, "generic-bad-request", "api_parsing_invalid-parameters")
	}
	fx.admin.req("POST", "/fair-share/users/search", nil, nil).problem(t, 400, "generic-bad-request", "api_parsing_bad-request")
	fx.admin.get("/fair-share/users/search").problem(t, 405, "method-not-allowed", "api_access_forbidden")
}

func TestFairShareGet(t *testing.T) {
	fx := newFixture(t, Options{LongCycle: time.Hour})
	d := fx.d
	alice := d.byEmail["alice@example.com"].uuid
	proj := d.projectByName("default", "default").id
	path := fmt.Sprintf("/fair-share/users/default/%s/%s", proj, alice)
	fx.alice.get(path).problem(t, 403, "generic-forbidden", "backendai_generic_forbidden")
	r := fx.admin.get(path)
	if r.status != 200 {
		t.Fatalf("%d %s", r.status, r.body)
	}
	it := r.json(t)["item"].(map[string]any)
	if snap(it, "fair_share_factor") != "1.0" || snap(it, "normalized_usage") != "0.0" || it["spec"].(map[string]any)["weight"] != "1.0" {
		t.Fatalf("defaults: %s", r.body)
	}
	if u := usageOf(it); len(u) != 3 || u["cpu"] != "0.0" || u["cuda.device"] != "0.0" {
		t.Fatalf("zero usage per slot: %v", u)
	}
	d.AddFairShareUsage(FairShareUsage{User: alice, Project: proj, Slots: map[string]string{"cpu": "1"}, Duration: time.Hour})
	d.ObserveFairShare()
	it = fx.admin.get(path).json(t)["item"].(map[string]any)
	if snap(it, "fair_share_factor") == "1.0" || usageOf(it)["cpu"] != "3600" {
		t.Fatalf("record: %v", it)
	}
	fx.admin.get(fmt.Sprintf("/fair-share/users/nope/%s/%s", proj, alice)).problem(t, 404, "object-not-found", "scaling-group_read_not-found")
	fx.admin.get(fmt.Sprintf("/fair-share/users/default/%s/%s", proj, newUUID())).problem(t, 404, "user-not-found", "user_read_not-found")
	fx.admin.get(fmt.Sprintf("/fair-share/users/default/%s/not-a-uuid", proj)).problem(t, 400, "generic-bad-request", "api_parsing_invalid-parameters")
}

// Kernels' occupied slots × seconds are booked by the observer.
func TestFairShareObservesKernels(t *testing.T) {
	fx := newFixture(t, Options{LongCycle: time.Hour, RunTime: 2500 * time.Millisecond})
	d := fx.d
	id, err := d.Enqueue(fx.aliceAK, batchBody("fs-1"))
	if err != nil {
		t.Fatal(err)
	}
	d.Kick()
	if _, err := d.WaitStatus(id, "TERMINATED", 30*time.Second); err != nil {
		t.Fatal(err)
	}
	d.ObserveFairShare()
	items, _ := fsItems(t, fx.admin.post("/fair-share/users/search", map[string]any{}))
	if len(items) != 1 {
		t.Fatalf("records: %v", items)
	}
	u := usageOf(items[0])
	cpu, _ := strconv.ParseFloat(u["cpu"], 64)
	mem, _ := strconv.ParseFloat(u["mem"], 64)
	if cpu < 1 || cpu > 3 || mem != cpu*2*(1<<30) {
		t.Fatalf("usage %v", u)
	}
	// Observed once: a later pass books nothing more and recalculates nothing.
	at := snap(items[0], "last_calculated_at")
	d.ObserveFairShare()
	items, _ = fsItems(t, fx.admin.post("/fair-share/users/search", map[string]any{}))
	if usageOf(items[0])["cpu"] != u["cpu"] || snap(items[0], "last_calculated_at") != at {
		t.Fatalf("observed twice: %v", items[0])
	}
}

// The observer runs by itself: one long cycle after start, then every
// five (the manager: 60 s, then every 300 s).
func TestFairShareObserverPeriod(t *testing.T) {
	fx := newFixture(t, Options{LongCycle: 40 * time.Millisecond})
	fx.d.AddFairShareUsage(FairShareUsage{User: "alice@example.com", Slots: map[string]string{"cpu": "1"}, Duration: time.Hour})
	deadline := time.Now().Add(5 * time.Second)
	for {
		if items, _ := fsItems(t, fx.admin.post("/fair-share/users/search", map[string]any{})); len(items) == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("no observer pass")
		}
		time.Sleep(20 * time.Millisecond)
	}
}
