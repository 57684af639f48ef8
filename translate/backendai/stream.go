package backendai

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"

	"github.com/coder/websocket"
)

// The streaming execute API, GET /stream/session/{id}/execute (26.8.1
// api/rest/stream/handler.py stream_execute): a WebSocket on which the
// client sends one JSON request ({"mode","code","options"}) and the
// manager answers with result messages until "finished". In batch mode
// options.exec is a shell command the kernel runner runs with its own
// environment (run_subproc: /bin/sh -c, stdin none, stdout and stderr
// piped); the manager sends what it printed every flush (0.2 s) as
// console items. Closing the socket does not stop the command (the
// handler never reads the socket again, so it does not see the close;
// the command runs to its end). It reaches the session's main kernel
// only, and the kernel runner runs one command at a time.

// ExecRequest is the first message of a streaming execute.
type ExecRequest struct {
	Mode    string         `json:"mode"` // "batch" or "query"
	Code    string         `json:"code"`
	Options map[string]any `json:"options,omitempty"` // batch: {"exec": COMMAND}
}

// ExecResult is one message of the manager during a streaming execute.
type ExecResult struct {
	// Status: "continued" (more to come), "finished", "waiting-input",
	// "exec-timeout", "error" (Msg says why), "server-restarting".
	Status   string            `json:"status"`
	Console  []json.RawMessage `json:"console"`
	ExitCode *int              `json:"exitCode"`
	Msg      string            `json:"msg"`
}

// Output is each stdout and stderr console item of r, in order.
func (r *ExecResult) Output(fn func(stream, text string)) {
	for _, raw := range r.Console {
		var item []json.RawMessage
		if json.Unmarshal(raw, &item) != nil || len(item) != 2 {
			continue
		}
		var kind, text string
		if json.Unmarshal(item[0], &kind) != nil || (kind != "stdout" && kind != "stderr") {
			continue // media, html, ...: not a terminal's output
		}
		if json.Unmarshal(item[1], &text) == nil {
			fn(kind, text)
		}
	}
}

// ExecStream is an open streaming execute.
type ExecStream struct {
	ws *websocket.Conn
}

// maxExecMessage bounds one manager message (the manager's own
// max_wsmsg_size defaults to 16 MiB).
const maxExecMessage = 64 << 20

// StreamExecute opens a streaming execute in session (UUID or name) as
// the user actAs (a user UUID: the manager resolves the session by name
// and that user, RUNNING only) and sends req.
func (c *Client) StreamExecute(ctx context.Context, session, actAs string, req ExecRequest) (*ExecStream, error) {
	r := Request{Method: http.MethodGet, Path: "/stream/session/" + url.PathEscape(session) + "/execute", ActAs: actAs}
	if actAs != "" && !isUUID(actAs) {
		return nil, fmt.Errorf("%w: ActAs %q is not a user UUID", ErrInvalidRequest, actAs)
	}
	hr, err := c.newHTTPRequest(ctx, r, nil, "text/plain")
	if err != nil {
		return nil, err
	}
	ws, resp, err := websocket.Dial(ctx, hr.URL.String(), &websocket.DialOptions{HTTPClient: c.hc, HTTPHeader: hr.Header})
	if err != nil {
		if resp != nil && (resp.StatusCode < 200 || resp.StatusCode > 299) {
			var data []byte
			if resp.Body != nil {
				data, _ = io.ReadAll(io.LimitReader(resp.Body, 1<<20))
				resp.Body.Close()
			}
			e := decodeError(resp, data, r.Method, r.Path)
			c.logf("%s %s: %v", r.Method, r.Path, e)
			return nil, e
		}
		return nil, c.transportErr(ctx, r, err)
	}
	ws.SetReadLimit(maxExecMessage)
	b, err := json.Marshal(req)
	if err == nil {
		err = ws.Write(ctx, websocket.MessageText, b)
	}
	if err != nil {
		ws.CloseNow()
		return nil, c.transportErr(ctx, r, err)
	}
	return &ExecStream{ws: ws}, nil
}

// Next reads the manager's next message; io.EOF once the manager closed
// the stream.
func (s *ExecStream) Next(ctx context.Context) (*ExecResult, error) {
	_, b, err := s.ws.Read(ctx)
	if err != nil {
		var ce websocket.CloseError
		if errors.As(err, &ce) {
			return nil, io.EOF
		}
		return nil, err
	}
	var res ExecResult
	if err := json.Unmarshal(b, &res); err != nil {
		return nil, fmt.Errorf("backendai: execute stream: undecodable message: %w", err)
	}
	return &res, nil
}

// Close ends the stream (a command still running goes on).
func (s *ExecStream) Close() error { return s.ws.Close(websocket.StatusNormalClosure, "") }

// CloseNow drops the connection without the closing handshake.
func (s *ExecStream) CloseNow() error { return s.ws.CloseNow() }
