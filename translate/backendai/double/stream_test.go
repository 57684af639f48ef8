package double

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
)

// dialExec opens GET /stream/session/{ref}/execute signed as c (the
// request has no body: content type application/octet-stream, as
// aiohttp sees it).
func (c *client) dialExec(ref string, hdr map[string]string) (*websocket.Conn, *http.Response, error) {
	path := "/stream/session/" + url.PathEscape(ref) + "/execute"
	now := time.Now().UTC()
	date := isoformat(now)
	h := http.Header{}
	h.Set("Date", date)
	h.Set("X-BackendAI-Version", c.version)
	sig := Sign("GET", path, date, now, c.host, "application/octet-stream", c.version, c.sk)
	h.Set("Authorization", "BackendAI signMethod=HMAC-SHA256, credential="+c.ak+":"+sig)
	for k, v := range hdr {
		if v == "" {
			h.Del(k)
		} else {
			h.Set(k, v)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, resp, err := websocket.Dial(ctx, "ws://"+c.host+path, &websocket.DialOptions{HTTPHeader: h})
	if conn != nil {
		conn.SetReadLimit(-1)
	}
	return conn, resp, err
}

type wsMsg struct {
	at  time.Time
	raw string
	m   map[string]any
}

// execStream is a connected execute.
type execStream struct {
	t    *testing.T
	conn *websocket.Conn
	msgs chan wsMsg
	end  chan error // the read error that ended the stream
}

func (c *client) execute(t *testing.T, ref string, first string) *execStream {
	t.Helper()
	conn, resp, err := c.dialExec(ref, nil)
	if err != nil {
		var b []byte
		if resp != nil {
			b, _ = io.ReadAll(resp.Body)
		}
		t.Fatalf("dial %s: %v %s", ref, err, b)
	}
	if err := conn.Write(context.Background(), websocket.MessageText, []byte(first)); err != nil {
		t.Fatal(err)
	}
	return readStream(t, conn)
}

func readStream(t *testing.T, conn *websocket.Conn) *execStream {
	s := &execStream{t: t, conn: conn, msgs: make(chan wsMsg, 1<<16), end: make(chan error, 1)}
	t.Cleanup(func() { conn.CloseNow() })
	go func() {
		for {
			typ, b, err := conn.Read(context.Background())
			if err != nil {
				close(s.msgs)
				s.end <- err
				return
			}
			m := map[string]any{}
			if typ != websocket.MessageText || json.Unmarshal(b, &m) != nil {
				m = map[string]any{"status": "<not JSON text>"}
			}
			s.msgs <- wsMsg{time.Now(), string(b), m}
		}
	}()
	return s
}

// all reads until the server closes, failing unless it closes normally.
func (s *execStream) all(timeout time.Duration) []wsMsg {
	s.t.Helper()
	var out []wsMsg
	tm := time.After(timeout)
	for {
		select {
		case m, ok := <-s.msgs:
			if !ok {
				err := <-s.end
				if websocket.CloseStatus(err) != websocket.StatusNormalClosure {
					s.t.Fatalf("stream ended by %v after %d messages", err, len(out))
				}
				return out
			}
			out = append(out, m)
		case <-tm:
			s.t.Fatalf("stream not ended within %v (%d messages)", timeout, len(out))
		}
	}
}

// until reads until a message's console has text.
func (s *execStream) until(text string, timeout time.Duration) []wsMsg {
	s.t.Helper()
	var out []wsMsg
	var got strings.Builder
	tm := time.After(timeout)
	for {
		select {
		case m, ok := <-s.msgs:
			if !ok {
				s.t.Fatalf("stream ended before %q: %v", text, <-s.end)
			}
			out = append(out, m)
			so, se := console(m)
			got.WriteString(so + se)
			if strings.Contains(got.String(), text) {
				return out
			}
		case <-tm:
			s.t.Fatalf("no %q within %v", text, timeout)
		}
	}
}

func console(m wsMsg) (stdout, stderr string) {
	items, _ := m.m["console"].([]any)
	for _, it := range items {
		p := it.([]any)
		switch p[0] {
		case "stdout":
			stdout += p[1].(string)
		case "stderr":
			stderr += p[1].(string)
		}
	}
	return
}

func outputs(ms []wsMsg) (stdout, stderr string) {
	var o, e strings.Builder
	for _, m := range ms {
		a, b := console(m)
		o.WriteString(a)
		e.WriteString(b)
	}
	return o.String(), e.String()
}

func statuses(ms []wsMsg) []string {
	var out []string
	for _, m := range ms {
		s := fmt.Sprint(m.m["status"])
		if s == "continued" && len(out) > 0 && out[len(out)-1] == "continued*" {
			continue
		}
		if s == "continued" {
			s = "continued*"
		}
		out = append(out, s)
	}
	return out
}

func batchMsg(cmd string) string {
	b, _ := json.Marshal(map[string]any{"mode": "batch", "options": map[string]any{"exec": cmd}})
	return string(b)
}

// streamFixture: run mode, a user "slurm" (uid/gid 64030) with its own
// keypair and client.
type streamFixture struct {
	*fixture
	user     *client
	userAK   string
	userUUID string
}

func newStreamFixture(t *testing.T) *streamFixture {
	requireRunner(t)
	if _, err := exec.LookPath("nsenter"); err != nil {
		t.Skip("no nsenter")
	}
	fx := newFixture(t, Options{Mode: ModeRun, KillGrace: 300 * time.Millisecond})
	uid, gid := 64030, 64030
	id, err := fx.d.AddUser(User{Username: "slurm", Email: "slurm@example.com", Projects: []string{"default"},
		ContainerUID: &uid, ContainerMainGID: &gid})
	if err != nil {
		t.Fatal(err)
	}
	kp, _ := fx.d.AddKeyPair(KeyPair{UserEmail: "slurm@example.com"})
	return &streamFixture{fixture: fx, user: newClient(t, fx.d, kp.AccessKey, kp.SecretKey), userAK: kp.AccessKey, userUUID: id}
}

func (fx *streamFixture) interactive(t *testing.T, name string) string {
	t.Helper()
	b := batchBody(name)
	b["type"] = "interactive"
	delete(b, "startupCommand")
	r := fx.user.post("/session", b)
	if r.status != 201 {
		t.Fatalf("%d %s", r.status, r.body)
	}
	id := r.json(t)["sessionId"].(string)
	if _, err := fx.d.WaitStatus(id, "RUNNING", 30*time.Second); err != nil {
		t.Fatal(err)
	}
	return id
}

func (fx *streamFixture) workDir(id string) string {
	fx.d.mu.Lock()
	defer fx.d.mu.Unlock()
	return fx.d.sessions[id].main().workDir
}

// An execute in a RUNNING interactive session runs inside its container
// as the session's uid in its work directory, with the kernel's
// environment; stdout and stderr are streamed apart, in order, UTF-8
// decoded across chunks; the exit code (negative for a signal) ends it.
// The interactive session stays RUNNING; its destroy ends it as usual.
func TestStreamExecuteInteractive(t *testing.T) {
	fx := newStreamFixture(t)
	id := fx.interactive(t, "inter-1")
	s := fx.user.execute(t, "inter-1", batchMsg(`echo "uid=$(id -u) gid=$(id -g) pwd=$PWD batch=$_BACKEND_BATCH_MODE name=$BACKENDAI_SESSION_NAME"; echo oops >&2; printf 'caf\303'; sleep 0.3; printf '\251\n'; exit 7`))
	ms := s.all(20 * time.Second)
	if ms[0].raw != `{"status": "clean-finished", "console": [], "exitCode": 0, "options": null, "files": []}` {
		t.Fatalf("first message %s", ms[0].raw)
	}
	st := statuses(ms)
	if strings.Join(st, " ") != "clean-finished build-finished continued* finished" {
		t.Fatalf("statuses %v", st)
	}
	last := ms[len(ms)-1]
	if last.m["exitCode"] != float64(7) {
		t.Fatalf("last %s", last.raw)
	}
	out, errOut := outputs(ms)
	want := fmt.Sprintf("uid=64030 gid=64030 pwd=%s batch=1 name=inter-1\ncafé\n", fx.workDir(id))
	if out != want || errOut != "oops\n" {
		t.Fatalf("stdout %q (want %q) stderr %q", out, want, errOut)
	}
	// non-ASCII is escaped as json.dumps does
	if !strings.Contains(strings.Join(rawAll(ms), ""), `\u00e9`) {
		t.Fatalf("not ASCII-escaped: %v", rawAll(ms))
	}
	// the runner's copy of the output is the container log
	logs := fx.user.get("/session/" + id + "/logs").json(t)["result"].(map[string]any)["logs"].(string)
	if !strings.Contains(logs, "uid=64030") || !strings.Contains(logs, "oops") {
		t.Fatalf("logs %q", logs)
	}
	// a shell killed by a signal: asyncio's negative returncode
	ms = fx.user.execute(t, id, batchMsg(`kill -TERM $$`)).all(20 * time.Second)
	if last := ms[len(ms)-1]; last.m["status"] != "finished" || last.m["exitCode"] != float64(-15) {
		t.Fatalf("%s", last.raw)
	}
	// clean and build steps run too, build's failure skips exec (127)
	b, _ := json.Marshal(map[string]any{"mode": "batch", "options": map[string]any{"clean": "echo cleaning", "build": "exit 3", "exec": "echo never"}})
	ms = fx.user.execute(t, id, string(b)).all(20 * time.Second)
	if st := statuses(ms); strings.Join(st, " ") != "clean-finished build-finished finished" {
		t.Fatalf("%v", st)
	}
	if o, _ := console(ms[0]); o != "cleaning\n" || ms[1].m["exitCode"] != float64(3) || ms[2].m["exitCode"] != float64(127) {
		t.Fatalf("%v", rawAll(ms))
	}
	// query mode: the base kernel runner has no REPL (exit code 127)
	ms = fx.user.execute(t, id, `{"mode": "query", "code": "print(1)"}`).all(20 * time.Second)
	if len(ms) != 1 || ms[0].raw != `{"status": "finished", "console": [], "exitCode": 127, "options": null, "files": []}` {
		t.Fatalf("%v", rawAll(ms))
	}
	time.Sleep(300 * time.Millisecond)
	if si, _ := fx.d.Session(id); si.Status != "RUNNING" {
		t.Fatalf("interactive session %s", si.Status)
	}
	if r := fx.user.delete("/session/" + id); r.status != 200 {
		t.Fatalf("%d %s", r.status, r.body)
	}
	si, err := fx.d.WaitStatus(id, "TERMINATED", 15*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if *si.StatusInfo != "user-requested" {
		t.Fatalf("%+v", si)
	}
}

func rawAll(ms []wsMsg) []string {
	var out []string
	for _, m := range ms {
		out = append(out, m.raw)
	}
	return out
}

// Tens of MB come through complete and in order, in bounded pieces.
func TestStreamExecuteLargeOutput(t *testing.T) {
	fx := newStreamFixture(t)
	fx.interactive(t, "big")
	const n = 2500000
	ms := fx.user.execute(t, "big", batchMsg(fmt.Sprintf("seq 1 %d; echo end >&2", n))).all(120 * time.Second)
	var want bytes.Buffer
	for i := 1; i <= n; i++ {
		want.WriteString(strconv.Itoa(i))
		want.WriteByte('\n')
	}
	out, errOut := outputs(ms)
	if out != want.String() || errOut != "end\n" {
		t.Fatalf("stdout %d bytes (want %d), stderr %q", len(out), want.Len(), errOut)
	}
	for _, m := range ms {
		if len(m.raw) > 10<<20 {
			t.Fatalf("a message of %d bytes", len(m.raw))
		}
	}
}

// The kernel runner runs one task at a time: a second execute on the
// kernel starts only once the first has finished.
func TestStreamExecuteSerialized(t *testing.T) {
	fx := newStreamFixture(t)
	fx.interactive(t, "ser")
	a := fx.user.execute(t, "ser", batchMsg(`echo A-start; sleep 1; echo A-end`))
	a.until("A-start", 10*time.Second)
	b := fx.user.execute(t, "ser", batchMsg(`echo B`))
	am := a.all(20 * time.Second)
	bm := b.all(20 * time.Second)
	aEnd := am[len(am)-1]
	if aEnd.m["status"] != "finished" {
		t.Fatalf("%v", rawAll(am))
	}
	if bm[0].at.Before(aEnd.at) {
		t.Fatalf("second execute answered at %v, before the first finished at %v", bm[0].at, aEnd.at)
	}
	if o, _ := outputs(bm); o != "B\n" {
		t.Fatalf("%v", rawAll(bm))
	}
}

// On a batch session an execute waits behind the startup command (the
// batch job holds the output queue); when the command ends the session
// terminates and the next action finds no RUNNING session.
func TestStreamExecuteBatchSessionWaits(t *testing.T) {
	fx := newStreamFixture(t)
	b := batchBody("bat")
	b["startupCommand"] = "sleep 1.5; echo done"
	r := fx.user.post("/session", b)
	if r.status != 201 {
		t.Fatalf("%d %s", r.status, r.body)
	}
	id := r.json(t)["sessionId"].(string)
	if _, err := fx.d.WaitStatus(id, "RUNNING", 30*time.Second); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	s := fx.user.execute(t, "bat", batchMsg(`touch ran-marker`))
	ms := s.all(20 * time.Second)
	si, err := fx.d.WaitStatus(id, "TERMINATED", 15*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if *si.StatusInfo != "task-finished" {
		t.Fatalf("%+v", si)
	}
	if waited := ms[0].at.Sub(start); waited < time.Second {
		t.Fatalf("answered after %v, while the startup command ran", waited)
	}
	last := ms[len(ms)-1]
	if last.raw != `{"status": "error", "msg": "BackendError: <SessionNotFound(404): No such session. (Session (name=bat) does not exist.)>"}` {
		t.Fatalf("%v", rawAll(ms))
	}
	if _, err := os.Stat(filepath.Join(fx.workDir(id), "ran-marker")); err == nil {
		t.Fatal("the execute ran")
	}
}

// Refused before the upgrade as the manager refuses: authentication,
// then the session (a UUID becomes its name; name + current user +
// RUNNING), then the WebSocket handshake.
func TestStreamExecuteRefused(t *testing.T) {
	fx := newStreamFixture(t)
	id := fx.interactive(t, "ref")
	refused := func(c *client, ref string, hdr map[string]string, status int, typ, msg string) {
		t.Helper()
		conn, resp, err := c.dialExec(ref, hdr)
		if err == nil {
			conn.CloseNow()
			t.Fatalf("%s: upgraded", ref)
		}
		if resp == nil || resp.StatusCode != status {
			t.Fatalf("%s: %v %v", ref, err, resp)
		}
		body, _ := io.ReadAll(resp.Body)
		var m map[string]any
		json.Unmarshal(body, &m)
		if m["type"] != "https://api.backend.ai/probs/"+typ || (msg != "" && m["msg"] != msg) {
			t.Fatalf("%s: %s", ref, body)
		}
	}
	refused(fx.user, "nope", nil, 404, "object-not-found", "Session (name=nope) does not exist.")
	refused(fx.user, "00000000-0000-4000-8000-000000000001", nil, 404, "object-not-found", "Session with id 00000000-0000-4000-8000-000000000001 not found")
	// the superadmin is not the owner; with Act-As it is
	refused(fx.admin, "ref", nil, 404, "object-not-found", "Session (name=ref) does not exist.")
	refused(fx.admin, id, nil, 404, "object-not-found", "Session (name=ref) does not exist.")
	conn, _, err := fx.admin.dialExec(strings.ToUpper(strings.ReplaceAll(id, "-", "")), map[string]string{"X-BackendAI-Act-As": fx.userUUID})
	if err != nil {
		t.Fatal(err)
	}
	conn.Write(context.Background(), websocket.MessageText, []byte(batchMsg("id -u")))
	if o, _ := outputs(readStream(t, conn).all(20 * time.Second)); o != "64030\n" {
		t.Fatalf("act-as: %q", o)
	}
	// authentication
	refused(fx.user, "ref", map[string]string{"Authorization": ""}, 401, "auth-failed", "Unauthorized access")
	bad := *fx.user
	bad.sk = "wrong"
	refused(&bad, "ref", nil, 401, "auth-failed", "HMAC signature mismatch")
	refused(fx.user, "ref", map[string]string{"X-BackendAI-Act-As": fx.userUUID}, 403, "insufficient-privilege", "")
	// not RUNNING: a pending one, a terminated one
	p := batchBody("later")
	p["type"] = "interactive"
	p["config"] = map[string]any{"resources": map[string]any{"cpu": 64, "mem": "2g"}}
	if r := fx.user.post("/session", p); r.status != 201 {
		t.Fatalf("%d %s", r.status, r.body)
	}
	refused(fx.user, "later", nil, 404, "object-not-found", "Session (name=later) does not exist.")
	fx.user.delete("/session/ref")
	if _, err := fx.d.WaitStatus(id, "TERMINATED", 15*time.Second); err != nil {
		t.Fatal(err)
	}
	refused(fx.user, id, nil, 404, "object-not-found", "Session (name=ref) does not exist.")
	// a plain GET to a running session: the handshake fails
	fx.interactive(t, "plain")
	r := fx.user.get("/stream/session/plain/execute")
	r.problem(t, 400, "generic-bad-request", "backendai_generic_bad-request")
}

// Bad first messages are answered as handler.py answers them, or the
// socket just closes where the handler's exception is swallowed.
func TestStreamExecuteBadFirstMessage(t *testing.T) {
	fx := newStreamFixture(t)
	fx.interactive(t, "bad")
	for _, c := range []struct{ in, want string }{
		{`not json`, `{"status": "error", "msg": "Invalid API parameters: JSONDecodeError('Expecting value: line 1 column 1 (char 0)')"}`},
		{`{"mode": "batch",}`, `{"status": "error", "msg": "Invalid API parameters: JSONDecodeError('Illegal trailing comma before end of object: line 1 column 17 (char 16)')"}`},
		{"{\n\"mode\" 1}", `{"status": "error", "msg": "Invalid API parameters: JSONDecodeError(\"Expecting ':' delimiter: line 2 column 8 (char 9)\")"}`},
		{`{"code": "x"}`, `{"status": "error", "msg": "BackendError: <InvalidStreamMode(400): Invalid or missing stream mode parameter. (mode is missing or empty!)>"}`},
		{`{"mode": ""}`, `{"status": "error", "msg": "BackendError: <InvalidStreamMode(400): Invalid or missing stream mode parameter. (mode is missing or empty!)>"}`},
		{`{"mode": "shell"}`, `{"status": "error", "msg": "BackendError: <InvalidStreamMode(400): Invalid or missing stream mode parameter. (mode has an invalid value.)>"}`},
		{`{"mode": 1}`, `{"status": "error", "msg": "BackendError: <InvalidStreamMode(400): Invalid or missing stream mode parameter. (mode has an invalid value.)>"}`},
		{`[1]`, ``},
		{`{"mode": ["batch"]}`, ``},
	} {
		ms := fx.user.execute(t, "bad", c.in).all(10 * time.Second)
		if strings.Join(rawAll(ms), "\n") != c.want {
			t.Fatalf("%s: %v", c.in, rawAll(ms))
		}
	}
	// agent-side errors (an RPCUserError nobody converts): closed
	// without a word; before the run attaches (code[:20] in the agent's
	// log line) the kernel stays usable
	for _, in := range []string{`{"mode": "batch", "code": 5}`, `{"mode": "batch", "code": null}`} {
		if ms := fx.user.execute(t, "bad", in).all(10 * time.Second); len(ms) != 0 {
			t.Fatalf("%s: %v", in, rawAll(ms))
		}
	}
	// a binary first message: closed without a word
	conn, _, err := fx.user.dialExec("bad", nil)
	if err != nil {
		t.Fatal(err)
	}
	conn.Write(context.Background(), websocket.MessageBinary, []byte(batchMsg("true")))
	if ms := readStream(t, conn).all(10 * time.Second); len(ms) != 0 {
		t.Fatalf("%v", rawAll(ms))
	}
	// none of these took the kernel's output queue
	ms := fx.user.execute(t, "bad", batchMsg("echo fine")).all(10 * time.Second)
	if o, _ := outputs(ms); o != "fine\n" {
		t.Fatalf("%v", rawAll(ms))
	}
	// options the agent cannot send after it attached the run (here the
	// clean step is sent, exec is not a str): closed without a word, and
	// the run keeps the kernel's output queue
	id2 := fx.interactive(t, "bad2")
	in := `{"mode": "batch", "options": {"clean": "touch cleaned", "exec": 1}}`
	if ms := fx.user.execute(t, "bad2", in).all(10 * time.Second); len(ms) != 0 {
		t.Fatalf("%s: %v", in, rawAll(ms))
	}
	for end := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if _, err := os.Stat(filepath.Join(fx.workDir(id2), "cleaned")); err == nil {
			break
		}
		if time.Now().After(end) {
			t.Fatal("the clean step did not run")
		}
	}
	next := fx.user.execute(t, "bad2", batchMsg("echo fine"))
	select {
	case m := <-next.msgs:
		t.Fatalf("the kernel's queue was released: %s", m.raw)
	case <-time.After(time.Second):
	}
}

// Closing the socket does not interrupt (the handler never reads it): the
// command runs to its end and keeps the kernel's output queue, so a later
// execute waits for ever (until the server shuts down: "server-
// restarting"). POST /session/{name}/interrupt is what sends SIGINT to
// the running shell.
func TestStreamExecuteCloseAndInterrupt(t *testing.T) {
	fx := newStreamFixture(t)
	id := fx.interactive(t, "intr")
	work := fx.workDir(id)
	// the REST interrupt
	s := fx.user.execute(t, "intr", batchMsg(`echo started; while :; do sleep 0.1; done`))
	s.until("started", 10*time.Second)
	if r := fx.user.post("/session/intr/interrupt", nil); r.status != 204 {
		t.Fatalf("%d %s", r.status, r.body)
	}
	ms := s.all(10 * time.Second)
	if last := ms[len(ms)-1]; last.m["status"] != "finished" || last.m["exitCode"] != float64(-2) {
		t.Fatalf("%v", rawAll(ms))
	}
	// closing the socket
	s = fx.user.execute(t, "intr", batchMsg(`echo started; sleep 1; touch closed-marker`))
	s.until("started", 10*time.Second)
	s.conn.CloseNow()
	marker := filepath.Join(work, "closed-marker")
	for end := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if _, err := os.Stat(marker); err == nil {
			break
		}
		if time.Now().After(end) {
			t.Fatal("the command did not run to its end")
		}
	}
	next := fx.user.execute(t, "intr", batchMsg(`echo next`))
	select {
	case m := <-next.msgs:
		t.Fatalf("the kernel's queue was released: %s", m.raw)
	case <-time.After(1500 * time.Millisecond):
	}
	fx.d.Close()
	ms = next.all(10 * time.Second)
	if len(ms) != 1 || ms[0].raw != `{"status": "server-restarting", "msg": "The API server is going to restart for maintenance. Please connect again with the same run ID."}` {
		t.Fatalf("%v", rawAll(ms))
	}
}

// Destroying the session while an execute runs ends the execute (the
// next action finds no RUNNING session) and kills its command.
func TestStreamExecuteDestroyed(t *testing.T) {
	fx := newStreamFixture(t)
	id := fx.interactive(t, "gone")
	s := fx.user.execute(t, "gone", batchMsg(`echo started; sleep 317`))
	s.until("started", 10*time.Second)
	if r := fx.user.delete("/session/gone"); r.status != 200 {
		t.Fatalf("%d %s", r.status, r.body)
	}
	ms := s.all(10 * time.Second)
	if last := ms[len(ms)-1]; last.raw != `{"status": "error", "msg": "BackendError: <SessionNotFound(404): No such session. (Session (name=gone) does not exist.)>"}` {
		t.Fatalf("%v", rawAll(ms))
	}
	si, err := fx.d.WaitStatus(id, "TERMINATED", 15*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if *si.StatusInfo != "user-requested" {
		t.Fatalf("%+v", si)
	}
	out, _ := exec.Command("pgrep", "-u", "64030", "-f", "sleep 317").Output()
	if strings.TrimSpace(string(out)) != "" {
		t.Fatalf("still running: %s", out)
	}
}

// Python's json.loads and the agent's UTF-8 decoding, unit by unit.
func TestStreamPyHelpers(t *testing.T) {
	for in, want := range map[string]string{
		``:             "Expecting value: line 1 column 1 (char 0)",
		`{"a": }`:      "Expecting value: line 1 column 7 (char 6)",
		`{"a" 1}`:      "Expecting ':' delimiter: line 1 column 6 (char 5)",
		`{a}`:          "Expecting property name enclosed in double quotes: line 1 column 2 (char 1)",
		`[1 2]`:        "Expecting ',' delimiter: line 1 column 4 (char 3)",
		`[1,]`:         "Illegal trailing comma before end of array: line 1 column 3 (char 2)",
		`"abc`:         "Unterminated string starting at: line 1 column 1 (char 0)",
		`"a\qb"`:       `Invalid \escape: line 1 column 3 (char 2)`,
		`"\u12"`:       `Invalid \uXXXX escape: line 1 column 3 (char 2)`,
		"\"a\x01\"":    "Invalid control character at: line 1 column 3 (char 2)",
		`{} x`:         "Extra data: line 1 column 4 (char 3)",
		"é 1":          "Expecting value: line 1 column 1 (char 0)",
		`1.`:           "Extra data: line 1 column 2 (char 1)",
		"\ufeff{}":     "Unexpected UTF-8 BOM (decode using utf-8-sig): line 1 column 1 (char 0)",
		"[\"é\",\n x]": "Expecting value: line 2 column 2 (char 7)",
	} {
		_, err := pyLoads(in)
		if err == nil || err.Error() != want {
			t.Errorf("%q: %v, want %s", in, err, want)
		}
	}
	v, err := pyLoads(` {"mode": "batch", "x": [1, -0.0, 1e999, NaN, "\ud83d\ude00", null, true], "mode": "query"} `)
	if err != nil {
		t.Fatal(err)
	}
	if d := v.(pyDict); d["mode"] != "query" || d["x"].([]any)[4] != "😀" || pyTruthy(d["x"].([]any)[1]) || !pyTruthy(d["x"].([]any)[2]) {
		t.Fatalf("%#v", v)
	}
	var dec pyUTF8
	got := dec.decode([]byte("a\xe2\x82"), false) + dec.decode([]byte("\xacb\xe2\x82c\xf0\x80\xff"), false) + dec.decode([]byte("\xc3"), false)
	if got != "a€b\ufffdc\ufffd\ufffd\ufffd" || len(dec.pend) != 1 {
		t.Fatalf("%q %v", got, dec.pend)
	}
	if got := dec.decode([]byte("\xa9"), false); got != "é" {
		t.Fatalf("%q", got)
	}
	for in, want := range map[string]string{
		"{12345678-1234-5678-1234-567812345678}":      "12345678-1234-5678-1234-567812345678",
		"urn:uuid:12345678123456781234567812345678":   "12345678-1234-5678-1234-567812345678",
		"+2345678123456781234567812345678":            "02345678-1234-5678-1234-567812345678",
		"ABCDEF00-0000-0000-0000-000000000000":        "abcdef00-0000-0000-0000-000000000000",
		"my-session":                                  "",
		"1234567812345678123456781234567g":            "",
		"-0000000000000000000000000000001":            "",
		"0x_34567812345678123456781234567":            "00034567-8123-4567-8123-456781234567",
		"12345678-1234-5678-1234-56781234567":         "",
		"12345678-1234-5678-1234-5678123456789":       "",
		"  345678123456781234567812345678":            "00345678-1234-5678-1234-567812345678",
		"uuid:{12345678-1234-5678-1234-567812345678}": "12345678-1234-5678-1234-567812345678",
	} {
		got, ok := pyUUID(in)
		if got != want || ok != (want != "") {
			t.Errorf("%q: %q %v, want %q", in, got, ok, want)
		}
	}
}

// Scale mode runs no kernel runner: the agent's error for a kernel it
// does not have is swallowed by the handler, the socket just closes.
func TestStreamExecuteScaleMode(t *testing.T) {
	fx := newFixture(t, Options{})
	b := batchBody("sc")
	b["type"] = "interactive"
	delete(b, "startupCommand")
	id := fx.alice.post("/session", b).json(t)["sessionId"].(string)
	if _, err := fx.d.WaitStatus(id, "RUNNING", 10*time.Second); err != nil {
		t.Fatal(err)
	}
	if ms := fx.alice.execute(t, "sc", batchMsg("true")).all(10 * time.Second); len(ms) != 0 {
		t.Fatalf("%v", rawAll(ms))
	}
}
