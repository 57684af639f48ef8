package double

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestLifecycleScaleWithSSE(t *testing.T) {
	fx := newFixture(t, Options{RunTime: 100 * time.Millisecond})
	ev := fx.alice.sse(t, "")
	r := fx.alice.post("/session", batchBody("s1"))
	if r.status != 201 {
		t.Fatalf("%d %s", r.status, r.body)
	}
	id := r.json(t)["sessionId"].(string)
	si, err := fx.d.WaitStatus(id, "TERMINATED", 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	wantHist := []string{"PENDING", "SCHEDULED", "PREPARING", "PREPARED", "CREATING", "RUNNING", "TERMINATING", "TERMINATED"}
	if !slices.Equal(si.History, wantHist) || si.Result != "SUCCESS" || *si.StatusInfo != "task-finished" {
		t.Fatalf("%+v", si)
	}
	// The exact SSE framing of aiohttp_sse and the propagator's data keys
	// (exitCode is always null: the exit_Code typo).
	f := ev.frame(t, 5*time.Second)
	want := fmt.Sprintf("event: session_pending\r\ndata: {\"reason\":\"Session enqueued\",\"sessionName\":\"s1\",\"ownerAccessKey\":\"%s\",\"sessionId\":\"%s\",\"exitCode\":null}\r\n\r\n", fx.aliceAK, id)
	if f != want {
		t.Fatalf("frame %q\nwant  %q", f, want)
	}
	// sessionName=* and scope=*: kernel events are interleaved
	var names []string
	reasons := map[string]string{}
	for len(names) == 0 || names[len(names)-1] != "session_terminated" {
		f := ev.frame(t, 5*time.Second)
		name := strings.TrimPrefix(strings.SplitN(f, "\r\n", 2)[0], "event: ")
		var data map[string]any
		json.Unmarshal([]byte(strings.TrimSuffix(strings.SplitN(f, "data: ", 2)[1], "\r\n\r\n")), &data)
		if strings.HasPrefix(name, "kernel_") {
			if data["kernelId"] == nil || data["clusterRole"] != "main" || data["clusterIdx"] != float64(1) {
				t.Fatalf("kernel event %q", f)
			}
			continue
		}
		names = append(names, name)
		reasons[name] = data["reason"].(string)
		if data["exitCode"] != nil {
			t.Fatalf("exitCode %v", data["exitCode"])
		}
	}
	wantNames := []string{"session_scheduled", "session_preparing", "session_prepared", "session_creating", "session_started",
		"session_success", "session_terminating", "session_terminated"}
	if !slices.Equal(names, wantNames) {
		t.Fatalf("events %v", names)
	}
	if reasons["session_preparing"] != "passed-preconditions" || reasons["session_success"] != "task-finished" ||
		reasons["session_terminating"] != "task-finished" || reasons["session_terminated"] != "triggered-by-scheduler" {
		t.Fatalf("reasons %v", reasons)
	}
	// logs after termination, by UUID
	l := fx.alice.get("/session/" + id + "/logs")
	if l.status != 200 || string(l.body) != `{"result": {"logs": ""}}` {
		t.Fatalf("%d %s", l.status, l.body)
	}
}

func TestSSEFilters(t *testing.T) {
	fx := newFixture(t, Options{Cycle: time.Hour, LongCycle: time.Hour})
	r := fx.alice.post("/session", batchBody("named"))
	id := r.json(t)["sessionId"].(string)
	// a user may not follow someone else's access key
	ak, _ := fx.d.AdminKeys()
	fx.alice.get("/events/session?ownerAccessKey="+ak).problem(t, 403, "generic-forbidden", "backendai_generic_forbidden")
	fx.alice.get("/events/session?scope=bogus").problem(t, 400, "invalid-api-params", "api_generic_invalid-parameters")
	fx.alice.get("/events/session?sessionName=nope").problem(t, 404, "object-not-found", "session_read_not-found")
	fx.alice.get("/events/session?groupName=nope").problem(t, 404, "project-not-found", "group_read_not-found")
	// an existing group name hits uuid.UUID(UUID): 500 in 26.8.1
	fx.alice.get("/events/session?groupName=default").problem(t, 500, "internal-server-error", "backendai_generic_internal-error")
	// named session: session events only (errata 1)
	ev := fx.alice.sse(t, "sessionName=named&scope=session,kernel")
	fx.d.RunCycle() // SCHEDULED
	fx.d.RunCycle() // PREPARING (+ kernel_preparing, not delivered)
	_, data := ev.until(t, "session_scheduled", 5*time.Second)
	if data["sessionId"] != id {
		t.Fatalf("%v", data)
	}
	f := ev.frame(t, 5*time.Second)
	if !strings.HasPrefix(f, "event: session_preparing\r\n") {
		t.Fatalf("frame %q", f)
	}
	// superadmin with sessionName=* sees everybody's
	all := fx.admin.sse(t, "scope=session")
	fx.d.LoseEvents(1)
	fx.alice.post("/session", batchBody("lost"))
	fx.alice.post("/session", batchBody("kept"))
	_, data = all.until(t, "session_pending", 5*time.Second)
	if data["sessionName"] != "kept" {
		t.Fatalf("the lost event arrived: %v", data)
	}
	// pings
	fx.d.SetSSEPing(20 * time.Millisecond)
	p := fx.admin.sse(t, "scope=session")
	if f := p.frame(t, 5*time.Second); f != ": ping\r\n\r\n" {
		t.Fatalf("ping %q", f)
	}
}

func TestGQL(t *testing.T) {
	fx := newFixture(t, Options{RunTime: 20 * time.Millisecond})
	r := fx.alice.post("/session", batchBody("g1"))
	id := r.json(t)["sessionId"].(string)
	if _, err := fx.d.WaitStatus(id, "TERMINATED", 10*time.Second); err != nil {
		t.Fatal(err)
	}
	fx.alice.post("/session", map[string]any{"name": "g2", "image": "python", "enqueueOnly": true})
	q := `query($st: String) { compute_session_list(limit: 10, offset: 0, status: $st) {
		total_count items { id name type status status_info result cluster_mode requested_slots occupied_slots status_history
		scheduled_at agent_ids ...c } } }
		fragment c on ComputeSession { containers { agent status status_info status_data container_id cluster_role cluster_idx } }`
	data := fx.alice.gqlData(q, map[string]any{"st": "TERMINATED,CANCELLED"})
	lst := data["compute_session_list"].(map[string]any)
	items := lst["items"].([]any)
	if lst["total_count"] != json.Number("1") || len(items) != 1 {
		t.Fatalf("%v", lst)
	}
	it := items[0].(map[string]any)
	if it["id"] != id || it["type"] != "BATCH" || it["result"] != "SUCCESS" || it["status_info"] != "task-finished" ||
		it["cluster_mode"] != "single-node" {
		t.Fatalf("%v", it)
	}
	// JSONString: a JSON document inside a string
	var slots map[string]string
	if err := json.Unmarshal([]byte(it["requested_slots"].(string)), &slots); err != nil || slots["cpu"] != "1" || slots["mem"] != "2147483648" {
		t.Fatalf("requested_slots %v", it["requested_slots"])
	}
	if it["occupied_slots"] != "{}" {
		t.Fatalf("occupied after termination: %v", it["occupied_slots"])
	}
	var hist map[string]string
	json.Unmarshal([]byte(it["status_history"].(string)), &hist)
	if hist["TERMINATED"] == "" || hist["RUNNING"] == "" {
		t.Fatalf("%v", hist)
	}
	k := it["containers"].([]any)[0].(map[string]any)
	if k["agent"] != "i-ag1" || k["status"] != "TERMINATED" || k["cluster_role"] != "main" || k["status_data"] != `{"kernel": {"exit_code": null}}` {
		t.Fatalf("%v", k)
	}
	// filter mini-language and the user scope
	data = fx.alice.gqlData(`{ compute_session_list(limit: 5, offset: 0, filter: "name == \"g2\" & status in [\"PENDING\", \"SCHEDULED\", \"PREPARING\", \"PREPARED\", \"CREATING\", \"RUNNING\"]") { total_count items { name } } }`, nil)
	if data["compute_session_list"].(map[string]any)["total_count"] != json.Number("1") {
		t.Fatalf("%v", data)
	}
	// the status CSV is split on "," only: a space is a KeyError
	rr := fx.alice.gql(`{ compute_session_list(limit: 5, offset: 0, status: "TERMINATED, CANCELLED") { total_count } }`, nil)
	m := rr.json(t)
	if m["data"].(map[string]any)["compute_session_list"] != nil || !strings.Contains(string(rr.body), `"message": "' CANCELLED'"`) {
		t.Fatalf("%s", rr.body)
	}
	// compute_session by id
	data = fx.alice.gqlData(`query($id: UUID!) { s: compute_session(id: $id) { name status } }`, map[string]any{"id": id})
	if data["s"].(map[string]any)["name"] != "g1" {
		t.Fatalf("%v", data)
	}
	// validation errors: data null
	rr = fx.alice.gql(`{ compute_session_list(limit: 1, offset: 0) { items { nope } } }`, nil)
	if !strings.Contains(string(rr.body), `"data": null, "errors": [{"message": "Cannot query field 'nope' on type 'ComputeSession'."`) {
		t.Fatalf("%s", rr.body)
	}
	// agents: superadmin only
	rr = fx.alice.gql(`{ agent_list(limit: 10, offset: 0) { total_count } }`, nil)
	if !strings.Contains(string(rr.body), "Forbidden operation. (superadmin privilege required)") {
		t.Fatalf("%s", rr.body)
	}
	data = fx.admin.gqlData(`{ agent_list(limit: 10, offset: 0, status: "ALIVE,LOST") { total_count items { id status schedulable scaling_group architecture available_slots occupied_slots cpu_slots mem_slots } } agents(status: "ALIVE") { id } scaling_groups { name is_active agent_count_by_status } }`, nil)
	ag := data["agent_list"].(map[string]any)["items"].([]any)[0].(map[string]any)
	if ag["id"] != "i-ag1" || ag["available_slots"] != `{"cpu": "4", "mem": "17179869184", "cuda.device": "2"}` || ag["mem_slots"] != json.Number("16384") || ag["cpu_slots"] != json.Number("4.0") {
		t.Fatalf("%v", ag)
	}
	// users by username, keypairs by email
	data = fx.admin.gqlData(`{ user_list(limit: 10, offset: 0, filter: "username == \"alice\"") { total_count items { uuid email role main_access_key container_uid groups { name } } } keypairs(email: "alice@example.com") { access_key is_admin user_id rate_limit } }`, nil)
	u := data["user_list"].(map[string]any)["items"].([]any)[0].(map[string]any)
	if u["email"] != "alice@example.com" || u["main_access_key"] != fx.aliceAK || u["container_uid"] != nil {
		t.Fatalf("%v", u)
	}
	kps := data["keypairs"].([]any)
	if len(kps) != 1 || kps[0].(map[string]any)["access_key"] != fx.aliceAK {
		t.Fatalf("%v", kps)
	}
	// a user may not list users
	rr = fx.alice.gql(`{ users { email } }`, nil)
	if !strings.Contains(string(rr.body), "Insufficient privilege.") {
		t.Fatalf("%s", rr.body)
	}
	// /admin/graphql turns errors into a 400 problem
	fx.alice.post("/admin/graphql", map[string]any{"query": "{ nope }"}).problem(t, 400, "graphql-error", "api_generic_internal-error")
}

func TestDependenciesAndStartsAt(t *testing.T) {
	fx := newFixture(t, Options{RunTime: 30 * time.Millisecond})
	a := fx.alice.post("/session", batchBody("dep-a")).json(t)["sessionId"].(string)
	b := batchBody("dep-b")
	b["dependencies"] = []string{a}
	bid := fx.alice.post("/session", b).json(t)["sessionId"].(string)
	sa, _ := fx.d.WaitStatus(a, "TERMINATED", 10*time.Second)
	sb, err := fx.d.WaitStatus(bid, "TERMINATED", 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if !sb.StartsAt.After(sa.TerminatedAt) {
		t.Fatalf("dependent started %v before its dependency ended %v", sb.StartsAt, sa.TerminatedAt)
	}
	c := batchBody("later")
	c["startsAt"] = time.Now().Add(300 * time.Millisecond).UTC().Format(time.RFC3339Nano)
	cid := fx.alice.post("/session", c).json(t)["sessionId"].(string)
	time.Sleep(150 * time.Millisecond)
	if si, _ := fx.d.Session(cid); si.Status != "PENDING" && si.Status != "DEPRIORITIZING" {
		t.Fatalf("started before starts_at: %s", si.Status)
	}
	si, err := fx.d.WaitStatus(cid, "RUNNING", 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if si.Priority >= 10 {
		// failed passes while waiting deprioritize it (max_retry_count 5)
		t.Logf("priority %d", si.Priority)
	}
	// batch_timeout
	tb := batchBody("timeout")
	tb["batchTimeout"] = 1
	fx2 := newFixture(t, Options{})
	tid := fx2.alice.post("/session", tb).json(t)["sessionId"].(string)
	si, err = fx2.d.WaitStatus(tid, "TERMINATED", 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if si.Result != "FAILURE" || *si.StatusInfo != "task-timeout" {
		t.Fatalf("%+v", si)
	}
}

func TestDeprioritize(t *testing.T) {
	fx := newFixture(t, Options{MaxRetries: 2})
	b := batchBody("huge")
	b["config"] = map[string]any{"resources": map[string]any{"cpu": 64}}
	id := fx.alice.post("/session", b).json(t)["sessionId"].(string)
	end := time.Now().Add(5 * time.Second)
	for time.Now().Before(end) {
		si, _ := fx.d.Session(id)
		if si.Priority == 0 && slices.Contains(si.History, "DEPRIORITIZING") {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	si, _ := fx.d.Session(id)
	t.Fatalf("not deprioritized: %+v", si)
}

func TestMultiNode(t *testing.T) {
	fx := newFixture(t, Options{})
	fx.d.AddAgent(Agent{ID: "i-ag2", Slots: map[string]string{"cpu": "4", "mem": "16g"}})
	b := batchBody("mpi")
	b["clusterMode"] = "multi-node"
	b["clusterSize"] = 2
	b["config"] = map[string]any{"resources": map[string]any{"cpu": 3, "mem": "4g"}}
	id := fx.alice.post("/session", b).json(t)["sessionId"].(string)
	si, err := fx.d.WaitStatus(id, "RUNNING", 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if len(si.Agents) != 2 || len(si.KernelStatuses) != 2 {
		t.Fatalf("%+v", si)
	}
	data := fx.admin.gqlData(`query($id: UUID!) { compute_session(id: $id) { cluster_size requested_slots containers { cluster_role cluster_idx cluster_hostname local_rank } } }`, map[string]any{"id": id})
	cs := data["compute_session"].(map[string]any)
	if cs["requested_slots"] != `{"cpu": "6", "mem": "8589934592"}` {
		t.Fatalf("%v", cs)
	}
	hosts := []string{}
	for _, k := range cs["containers"].([]any) {
		hosts = append(hosts, k.(map[string]any)["cluster_hostname"].(string))
	}
	if !slices.Equal(hosts, []string{"main1", "sub1"}) {
		t.Fatalf("%v", hosts)
	}
	// interactive session stays RUNNING until destroyed
	fx.alice.delete("/session/" + id)
	if _, err := fx.d.WaitStatus(id, "TERMINATED", 5*time.Second); err != nil {
		t.Fatal(err)
	}
}

func TestAgentLost(t *testing.T) {
	fx := newFixture(t, Options{StaleKernelAfter: 50 * time.Millisecond})
	b := batchBody("lost")
	id := fx.alice.post("/session", b).json(t)["sessionId"].(string)
	if _, err := fx.d.WaitStatus(id, "RUNNING", 5*time.Second); err != nil {
		t.Fatal(err)
	}
	fx.d.MarkAgentLost("i-ag1")
	si, err := fx.d.WaitStatus(id, "TERMINATED", 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if si.Result != "UNDEFINED" || si.KernelStatuses[0] != "TERMINATED" {
		t.Fatalf("%+v", si)
	}
	data := fx.admin.gqlData(`{ agents { id status lost_at } }`, nil)
	if data["agents"].([]any)[0].(map[string]any)["status"] != "LOST" {
		t.Fatalf("%v", data)
	}
}

func TestOutage(t *testing.T) {
	fx := newFixture(t, Options{})
	fx.d.Outage(200 * time.Millisecond)
	if _, err := fx.alice.hc.Get(fx.d.URL() + "/"); err == nil {
		t.Fatal("reachable during the outage")
	}
	time.Sleep(400 * time.Millisecond)
	if r := fx.alice.get("/config/resource-slots"); r.status != 200 {
		t.Fatalf("%d", r.status)
	}
}

func TestDestroyRecursiveForced(t *testing.T) {
	fx := newFixture(t, Options{})
	a := fx.alice.post("/session", batchBody("root")).json(t)["sessionId"].(string)
	if _, err := fx.d.WaitStatus(a, "RUNNING", 5*time.Second); err != nil {
		t.Fatal(err)
	}
	b := batchBody("child")
	b["dependencies"] = []string{a}
	bid := fx.alice.post("/session", b).json(t)["sessionId"].(string)
	r := fx.alice.delete("/session/root?forced=true&recursive=true")
	if r.status != 200 || string(r.body) != `{"stats": {"status": "cancelled"}}` {
		t.Fatalf("%d %s", r.status, r.body)
	}
	sa, _ := fx.d.Session(a)
	sb, _ := fx.d.Session(bid)
	if sa.Status != "TERMINATED" || *sa.StatusInfo != "force-terminated" || sb.Status != "CANCELLED" || *sb.StatusInfo != "force-terminated" {
		t.Fatalf("%+v %+v", sa, sb)
	}
	if !slices.Equal(sa.History[len(sa.History)-2:], []string{"TERMINATING", "TERMINATED"}) {
		t.Fatalf("%v", sa.History)
	}
	fx.alice.delete("/session/root?forced=maybe").problem(t, 400, "generic-bad-request", "api_parsing_invalid-parameters")
}
