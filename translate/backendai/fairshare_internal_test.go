package backendai

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"testing"

	"github.com/lablup/slurm-frontend/translate"
)

// A manager older than 26.3 has no /fair-share: aiohttp's 404.
func TestFairSharesNotSupported(t *testing.T) {
	s, c := newStub(t, func(w http.ResponseWriter, r *http.Request) {
		problem(w, 404, "url-not-found", "Unknown URL path.", "api_read_not-found", "", nil)
	})
	_, err := c.UserFairShares(context.Background())
	if !IsNoFairShare(err) {
		t.Fatalf("client: %v", err)
	}
	e := &Engine{c: c, cfg: EngineConfig{Domain: "default"}}
	if _, err := e.FairShares(context.Background()); !errors.Is(err, translate.ErrNotSupported) {
		t.Fatalf("engine: %v", err)
	}
	reqs := s.requests()
	if len(reqs) != 2 || reqs[0].Method != "POST" || reqs[0].URI != "/fair-share/users/search" || reqs[0].ContentType != "application/json" {
		t.Fatalf("requests %+v", reqs)
	}
	var body map[string]any
	if err := json.Unmarshal(reqs[1].Body, &body); err != nil {
		t.Fatal(err)
	}
	f, _ := body["filter"].(map[string]any)
	if dn, _ := f["domain_name"].(map[string]any); dn["equals"] != "default" || body["limit"] != float64(1000) || body["offset"] != float64(0) {
		t.Fatalf("body %s", reqs[1].Body)
	}
	// an object-not-found 404 is not "no API"
	if IsNoFairShare(&APIError{Status: 404, Type: ProbObjectNotFound}) {
		t.Fatal("object-not-found taken for a missing API")
	}
}

// Decimals arrive as strings (pydantic), in any Decimal form, or as numbers.
func TestFairShareDecimals(t *testing.T) {
	var x struct{ A, B, C, D decimalJSON }
	if err := json.Unmarshal([]byte(`{"A":"0.982145","B":"1.2E+3","C":0.5,"D":null}`), &x); err != nil {
		t.Fatal(err)
	}
	if x.A != 0.982145 || x.B != 1200 || x.C != 0.5 || x.D != 0 {
		t.Fatalf("%+v", x)
	}
	if err := json.Unmarshal([]byte(`{"A":"x"}`), &x); err == nil {
		t.Fatal("accepted a non-number")
	}
}
