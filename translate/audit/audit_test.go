package audit

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lablup/slurm-frontend/codec"
	"github.com/lablup/slurm-frontend/state"
	"github.com/lablup/slurm-frontend/translate/conf"
	"github.com/lablup/slurm-frontend/translate/ctld"
	"github.com/lablup/slurm-frontend/translate/local"
)

// testChecker is the server's checks on testdata/frontend.conf and the
// embedded engine, as `slurm-frontend audit --config` builds them.
func testChecker(t testing.TB) *ctld.Controller {
	t.Helper()
	cfg, err := conf.ParseFile(filepath.Join("testdata", "frontend.conf"))
	require.NoError(t, err)
	store, err := state.Open(t.TempDir())
	require.NoError(t, err)
	t.Cleanup(func() { store.Close() })
	engine := local.New(cfg)
	t.Cleanup(func() { engine.Close() })
	c, err := ctld.New(context.Background(), ctld.Options{Conf: cfg, Store: store, Backend: engine, Exec: engine,
		Stats: state.NewRPCStats(), ClusterName: "auditcluster", SlurmUser: "root"})
	require.NoError(t, err)
	return c
}

func testAuditor(t testing.TB) *Auditor {
	nobody := uint32(65534)
	return &Auditor{Check: testChecker(t), Version: codec.V24_11, UID: &nobody, GID: &nobody, GresTypes: []string{"gpu"},
		Now: time.Date(2026, 12, 6, 12, 0, 0, 0, time.UTC)}
}

// expectation is one line of testdata/corpus.expect.
type expectation struct {
	where, client, verdict, err string
	options, unresolved         []string
}

func readExpect(t *testing.T) map[string]expectation {
	f, err := os.Open(filepath.Join("testdata", "corpus.expect"))
	require.NoError(t, err)
	defer f.Close()
	out := map[string]expectation{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fs := strings.Fields(sc.Text())
		if len(fs) == 0 || strings.HasPrefix(fs[0], "#") {
			continue
		}
		require.GreaterOrEqual(t, len(fs), 3, sc.Text())
		e := expectation{where: fs[0], client: fs[1], verdict: fs[2]}
		for _, x := range fs[3:] {
			switch {
			case strings.HasPrefix(x, "unresolved="):
				e.unresolved = strings.Split(strings.TrimPrefix(x, "unresolved="), ",")
			case strings.HasPrefix(x, "-"):
				e.options = strings.Split(x, ",")
			default:
				e.err = x
			}
		}
		out[e.where] = e
	}
	return out
}

var verdictWord = map[Verdict]string{Unchanged: "unchanged", Difference: "difference", Refused: "refused"}

// TestAuditCorpus classifies every job of the hand-written corpus (arrays,
// dependencies, GPUs, MPI, containers, interactive wrappers, templates,
// options the frontend refuses) and checks each verdict, the error, the
// option found to cause it, and the values left to run time.
func TestAuditCorpus(t *testing.T) {
	a := testAuditor(t)
	r, err := a.Scripts([]string{filepath.Join("testdata", "corpus")})
	require.NoError(t, err)
	want := readExpect(t)
	got := map[string]bool{}
	for _, j := range r.Jobs {
		where := filepath.Base(j.File)
		if j.Line > 0 {
			where = fmt.Sprintf("%s:%d", where, j.Line)
		}
		got[where] = true
		e, ok := want[where]
		if !assert.True(t, ok, "unexpected job %s: %+v", where, j) {
			continue
		}
		assert.Equal(t, e.client, j.Client, where)
		assert.Equal(t, e.verdict, verdictWord[j.Verdict], "%s: findings %+v", where, j.Findings)
		var errs, opts []string
		for _, f := range j.Findings {
			switch {
			case f.Verdict == Refused && f.SlurmError == "":
				errs = append(errs, "client")
			case f.SlurmError != "":
				errs = append(errs, f.SlurmError)
			}
			if f.Option != "" {
				opts = append(opts, f.Option)
			}
		}
		if e.err != "" {
			assert.Equal(t, []string{e.err}, errs, "%s: findings %+v", where, j.Findings)
		} else {
			assert.Empty(t, errs, where)
		}
		sort.Strings(opts)
		sort.Strings(e.options)
		assert.Equal(t, e.options, opts, "%s: findings %+v", where, j.Findings)
		var un []string // "--x11: why" is matched by its option
		for _, u := range j.Unresolved {
			o, _, _ := strings.Cut(u, ":")
			un = append(un, o)
		}
		assert.ElementsMatch(t, e.unresolved, un, where)
		if j.Verdict == Refused {
			assert.NotEmpty(t, j.Findings[0].Message, "%s: a refusal says what the user would read", where)
		}
	}
	for where := range want {
		assert.True(t, got[where], "%s: not found by the audit", where)
	}
	assert.Equal(t, []Skipped{{File: filepath.Join("testdata", "corpus", "submit.py"), Reason: "not a shell script: the sbatch calls it makes are not followed"}}, r.Skipped)
	assert.Equal(t, len(want), r.Summary.Jobs)
}

// TestAuditHistory reads sacct --parsable2 output and counts, per user
// and per option, the past jobs that would now be refused.
func TestAuditHistory(t *testing.T) {
	a := testAuditor(t)
	f, err := os.Open(filepath.Join("testdata", "sacct-24.11.txt"))
	require.NoError(t, err)
	defer f.Close()
	h, err := a.History(f, "sacct-24.11.txt")
	require.NoError(t, err)
	// Steps are skipped and an array counts once: 7 jobs.
	assert.Equal(t, 7, h.Jobs)
	assert.Equal(t, 3, h.Refused, "the reservation, the unknown partition, the license")
	assert.Equal(t, 2, h.Difference, "GPUs on the embedded engine, --cpu-freq")
	assert.Equal(t, 2, h.Unchanged)
	byUser := map[string]UserCount{}
	for _, u := range h.ByUser {
		byUser[u.User] = u
	}
	assert.Equal(t, UserCount{User: "bob", Jobs: 3, Refused: 3, ByOption: map[string]int{"--reservation": 1, "--partition": 1, "--licenses": 1}}, byUser["bob"])
	assert.Equal(t, UserCount{User: "alice", Jobs: 3, Different: 2}, byUser["alice"])
	assert.Equal(t, UserCount{User: "carol", Jobs: 1}, byUser["carol"])
	assert.Equal(t, "bob", h.ByUser[0].User, "the users with most refusals first")
}

func TestAuditHistoryNeedsHeader(t *testing.T) {
	a := testAuditor(t)
	_, err := a.History(strings.NewReader("101|alice|cpu\n"), "x")
	assert.ErrorContains(t, err, "no JobID column")
}
