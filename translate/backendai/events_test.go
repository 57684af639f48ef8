package backendai

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// frame renders one message as aiohttp-sse's EventSourceResponse.send
// writes it (CRLF separators; "event: " then "data: " lines).
func frame(event, data string) string {
	return "event: " + event + "\r\ndata: " + data + "\r\n\r\n"
}

// Data as SessionEventPropagator.propagate_event builds it
// (dump_json_str of reason, sessionName, ownerAccessKey, sessionId,
// exitCode — always null, the exit_Code typo — plus kernelId,
// clusterRole, clusterIdx only when truthy).
func sessionData(reason, name, ak, id string) string {
	return fmt.Sprintf(`{"reason":%q,"sessionName":%q,"ownerAccessKey":%q,"sessionId":%q,"exitCode":null}`, reason, name, ak, id)
}

func kernelData(reason, name, ak, id, kid, role string, idx int) string {
	s := strings.TrimSuffix(sessionData(reason, name, ak, id), "}")
	s += fmt.Sprintf(`,"kernelId":%q`, kid)
	if role != "" {
		s += fmt.Sprintf(`,"clusterRole":%q`, role)
	}
	if idx != 0 {
		s += fmt.Sprintf(`,"clusterIdx":%d`, idx)
	}
	return s + "}"
}

const sid = "9d9d9d9d-0000-4000-8000-000000000001"

func TestSSEParsing(t *testing.T) {
	stream := ": ping\r\n\r\n" +
		// SchedulingBroadcastEvent from scheduling_controller enqueue
		frame("session_pending", sessionData("Session enqueued", "slurm-42", "AKUSER", sid)) +
		frame("session_scheduled", sessionData("triggered-by-scheduler", "slurm-42", "AKUSER", sid)) +
		// status RUNNING is named "started"
		frame("session_started", sessionData("triggered-by-scheduler", "slurm-42", "AKUSER", sid)) +
		frame("kernel_started", kernelData("", "slurm-42", "AKUSER", sid, "7e7e7e7e-0000-4000-8000-000000000002", "main", 1)) +
		frame("kernel_terminated", kernelData("task-finished", "slurm-42", "AKUSER", sid, "7e7e7e7e-0000-4000-8000-000000000003", "sub", 0)) +
		// SessionSuccessBroadcastEvent from the agent (reason is a KernelLifecycleEventReason value)
		frame("session_success", sessionData("task-finished", "slurm-42", "AKUSER", sid)) +
		frame("session_terminated", sessionData("task-finished", "slurm-42", "AKUSER", sid)) +
		// LF-only and CR-only line ends, a comment, multi-line data, a retry field
		"event: session_cancelled\ndata: {\"reason\":\"user-requested\",\ndata: \"sessionId\":\"" + sid + "\",\"exitCode\":7}\nretry: 2500\n\n" +
		"event: session_preempted\rdata: " + sessionData("PREEMPTED_BY_SCHEDULER", "slurm-42", "AKUSER", sid) + "\r\r" +
		"event: no_data_here\r\n\r\n"
	sr := newSSEReader(strings.NewReader(stream))
	var evs []Event
	for {
		m, err := sr.next(nil)
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		ev, err := ParseEvent(m.event, []byte(m.data))
		if err != nil {
			t.Fatal(err)
		}
		evs = append(evs, ev)
	}
	if sr.retry != 2500*time.Millisecond {
		t.Errorf("retry %v", sr.retry)
	}
	want := []struct{ name, status, result, reason string }{
		{"session_pending", "PENDING", "", "Session enqueued"},
		{"session_scheduled", "SCHEDULED", "", "triggered-by-scheduler"},
		{"session_started", "RUNNING", "", "triggered-by-scheduler"},
		{"kernel_started", "RUNNING", "", ""},
		{"kernel_terminated", "TERMINATED", "", "task-finished"},
		{"session_success", "", "SUCCESS", "task-finished"},
		{"session_terminated", "TERMINATED", "", "task-finished"},
		{"session_cancelled", "CANCELLED", "", "user-requested"},
		{"session_preempted", "PREEMPTED", "", "PREEMPTED_BY_SCHEDULER"},
	}
	if len(evs) != len(want) {
		t.Fatalf("%d events: %+v", len(evs), evs)
	}
	for i, w := range want {
		e := evs[i]
		if e.Name != w.name || e.Status() != w.status || e.Result() != w.result || e.Reason != w.reason || e.SessionID != sid {
			t.Errorf("event %d: %+v (status %q result %q)", i, e, e.Status(), e.Result())
		}
	}
	if evs[0].ExitCode != nil || evs[0].SessionName != "slurm-42" || evs[0].OwnerAccessKey != "AKUSER" || evs[0].IsKernelEvent() {
		t.Errorf("session event %+v", evs[0])
	}
	k := evs[3]
	if !k.IsKernelEvent() || k.KernelID != "7e7e7e7e-0000-4000-8000-000000000002" || k.ClusterRole != "main" || k.ClusterIdx == nil || *k.ClusterIdx != 1 {
		t.Errorf("kernel event %+v", k)
	}
	if evs[4].ClusterIdx != nil {
		t.Errorf("clusterIdx 0 is omitted by the server: %+v", evs[4])
	}
	if evs[7].ExitCode == nil || *evs[7].ExitCode != 7 {
		t.Errorf("exitCode, if a fixed manager sends one: %+v", evs[7])
	}
}

func TestStreamReconnects(t *testing.T) {
	var conns atomic.Int32
	var mu sync.Mutex
	var queries []string
	_, c := newStub(t, func(w http.ResponseWriter, r *http.Request) {
		n := conns.Add(1)
		mu.Lock()
		queries = append(queries, r.URL.RawQuery)
		mu.Unlock()
		if r.Header.Get("Accept") != "text/event-stream" {
			t.Errorf("Accept %q", r.Header.Get("Accept"))
		}
		switch n {
		case 1: // one event, then the connection drops
			w.Header().Set("Content-Type", "text/event-stream")
			w.WriteHeader(200)
			fmt.Fprint(w, frame("session_pending", sessionData("Session enqueued", "a", "AK", sid)))
		case 2: // a restarting manager
			problem(w, 503, "service-unavailable", "Serivce unavailable.", "backendai_generic_unavailable", "", nil)
		case 3: // an event of another session (filtered), then ours
			w.Header().Set("Content-Type", "text/event-stream")
			w.WriteHeader(200)
			fmt.Fprint(w, ": ping\r\n\r\n")
			fmt.Fprint(w, frame("session_started", sessionData("", "b", "AK", "00000000-0000-4000-8000-000000000009")))
			fmt.Fprint(w, frame("session_started", sessionData("", "a", "AK", sid)))
		default:
			problem(w, 401, "auth-failed", "Credential/signature mismatch.", "user_auth_unauthorized", "", nil)
		}
	})
	var got []string
	connects, disconnects := 0, 0
	err := c.StreamSessionEvents(context.Background(), EventStreamOptions{
		Scope:        ScopeSession,
		SessionID:    sid,
		MinBackoff:   time.Millisecond,
		MaxBackoff:   5 * time.Millisecond,
		OnConnect:    func() { connects++ },
		OnDisconnect: func(error) { disconnects++ },
	}, func(e Event) error {
		got = append(got, e.Name)
		return nil
	})
	if !IsAuthFailed(err) {
		t.Fatalf("err %v", err)
	}
	if strings.Join(got, ",") != "session_pending,session_started" || connects != 2 || disconnects != 3 || conns.Load() != 4 {
		t.Errorf("got %v connects %d disconnects %d conns %d", got, connects, disconnects, conns.Load())
	}
	if queries[0] != "scope=session" {
		t.Errorf("query %q", queries[0])
	}
}

func TestStreamIdleTimeoutAndStop(t *testing.T) {
	var conns atomic.Int32
	_, c := newStub(t, func(w http.ResponseWriter, r *http.Request) {
		n := conns.Add(1)
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(200)
		w.(http.Flusher).Flush()
		if n == 1 {
			<-r.Context().Done() // silent: no ping, no event
			return
		}
		fmt.Fprint(w, frame("session_terminated", sessionData("user-requested", "a", "AK", sid)))
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	})
	stop := errors.New("done")
	err := c.StreamSessionEvents(context.Background(), EventStreamOptions{
		SessionName: "a", OwnerAccessKey: "AK",
		IdleTimeout: 100 * time.Millisecond, MinBackoff: time.Millisecond,
	}, func(e Event) error { return stop })
	if !errors.Is(err, stop) || conns.Load() != 2 {
		t.Fatalf("err %v conns %d", err, conns.Load())
	}

	// The caller's context ends the stream.
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	conns.Store(0)
	err = c.StreamSessionEvents(ctx, EventStreamOptions{IdleTimeout: time.Minute}, func(Event) error { return nil })
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err %v", err)
	}
}
