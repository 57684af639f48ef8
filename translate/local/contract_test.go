package local

import (
	"log"
	"os"
	"path/filepath"
	"testing"

	"github.com/lablup/slurm-frontend/translate"
	"github.com/lablup/slurm-frontend/translate/enginetest"
)

// The embedded engine keeps the engine contract.
func TestEngineContract(t *testing.T) {
	requireRunner(t)
	enginetest.Run(t, func(t *testing.T) *enginetest.Harness {
		cfg := testConfig(testNode("n1", 4, 4096, "gpu:1"), testNode("n2", 4, 4096, ""))
		e := New(cfg, WithSpoolDir(filepath.Join(t.TempDir(), "spool")), WithLogger(log.New(testWriter{t}, "", log.Lmicroseconds)))
		if err := e.Err(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { e.Close() })
		out, err := os.MkdirTemp("", "slurmfe-contract-")
		if err != nil {
			t.Fatal(err)
		}
		os.Chmod(out, 0o777)
		t.Cleanup(func() { os.RemoveAll(out) })
		h := &harness{t: t, e: e, out: out}
		return &enginetest.Harness{
			Engine: e,
			Spec: func(job uint32, script string) translate.SessionSpec {
				s := h.spec(job, script)
				s.UID, s.GID, s.UserName = 65534, 65534, "nobody"
				return s
			},
			Output: func(_ translate.SessionID, spec translate.SessionSpec) string {
				b, _ := os.ReadFile(spec.StdOut)
				return string(b)
			},
		}
	})
}
