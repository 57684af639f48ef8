package backendai

import "testing"

// Metrics name manager requests without their ids, so that a series
// stands for an operation, not for one session.
func TestRequestOp(t *testing.T) {
	for _, c := range []struct {
		r    Request
		want string
	}{
		{Request{Method: "POST", Path: "/session"}, "POST /session"},
		{Request{Method: "DELETE", Path: "/session/slurm-42"}, "DELETE /session/:id"},
		{Request{Method: "GET", Path: "/session/3f2a7c1e-0b3c-4d5e-8f90-123456789abc/logs"}, "GET /session/:id/logs"},
		{Request{Method: "GET", Path: "/folders/home-alice"}, "GET /folders/:id"},
		{Request{Method: "GET", Path: "/agents/12345"}, "GET /agents/:id"},
		{Request{Method: "GET", Path: "/config/resource-slots"}, "GET /config/resource-slots"},
		{Request{Method: "POST", Path: "/admin/gql", Op: "gql agents"}, "gql agents"},
	} {
		if got := c.r.op(); got != c.want {
			t.Errorf("%s %s: %q, want %q", c.r.Method, c.r.Path, got, c.want)
		}
	}
	for doc, want := range map[string]string{
		"query($a: String) { compute_session_nodes(filter: $a) { items { id } } }": "compute_session_nodes",
		"{agents{id}}": "agents",
		"query":        "?",
	} {
		if got := gqlField(doc); got != want {
			t.Errorf("gqlField(%q) = %q, want %q", doc, got, want)
		}
	}
}
