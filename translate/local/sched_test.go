package local

import (
	"slices"
	"testing"

	"github.com/lablup/slurm-frontend/translate"
	"github.com/lablup/slurm-frontend/translate/conf"
)

// Placement alone (no processes, no root needed).
func TestPlacer(t *testing.T) {
	cfg := testConfig(testNode("a1", 4, 1000, ""), testNode("a2", 4, 1000, "gpu:2"), testNode("a3", 4, 1000, ""))
	cfg.Nodes[2].Weight = 0 // lightest: picked first
	cfg.Partitions = append(cfg.Partitions,
		conf.Partition{Name: "gpu", Nodes: []string{"a2"}, State: "UP"},
		conf.Partition{Name: "off", Nodes: []string{"a1"}, State: "DOWN"})
	p := newPlacer(cfg)
	place := func(s translate.SessionSpec, blocked map[string]bool) ([]allocNode, fit, []string) {
		a, f, w, _ := p.place(&s, blocked)
		return a, f, w
	}
	spec := func(nodes, cpus uint32) translate.SessionSpec {
		return translate.SessionSpec{ResourceGroup: "p", Nodes: nodes, CPUsPerNode: cpus}
	}

	a, f, _ := place(spec(1, 2), nil)
	if f != fitNow || len(a) != 1 || a[0].Name != "a3" {
		t.Fatalf("weight: %v %+v", f, a)
	}
	p.reserve(a)
	a2, f, _ := place(spec(3, 3), nil)
	if f != fitLater {
		t.Fatalf("3 nodes × 3 CPUs with a3 half used: %v %+v", f, a2)
	}
	a3, f, _ := place(spec(2, 3), nil)
	if f != fitNow || !slices.Equal(allocNames(a3), []string{"a1", "a2"}) {
		t.Fatalf("2 × 3: %v %+v", f, a3)
	}
	p.release(a3)
	// Blocked nodes are not used by lower-priority sessions.
	if _, f, _ := place(spec(1, 1), map[string]bool{"a1": true, "a2": true, "a3": true}); f != fitLater {
		t.Fatalf("blocked: %v", f)
	}
	// Never: too many CPUs, too many nodes, unknown partition, bad required node.
	for _, s := range []translate.SessionSpec{spec(1, 5), spec(4, 1), {ResourceGroup: "nosuch"},
		{ResourceGroup: "gpu", ReqNodes: []string{"a1"}}, {ResourceGroup: "p", GPUsPerNode: 3}} {
		if _, f, _ := place(s, nil); f != fitNever {
			t.Fatalf("%+v: %v, want never", s, f)
		}
	}
	// A down partition waits and blocks nobody.
	if _, f, w := place(translate.SessionSpec{ResourceGroup: "off"}, nil); f != fitWait || w != nil {
		t.Fatalf("down partition: %v %v", f, w)
	}
	// GPUs by index; a node in two partitions is one node.
	g1, f, _ := place(translate.SessionSpec{ResourceGroup: "gpu", GPUsPerNode: 1}, nil)
	p.reserve(g1)
	g2, f2, _ := place(translate.SessionSpec{ResourceGroup: "p", GPUsPerNode: 1}, nil)
	p.reserve(g2)
	_, f3, w3 := place(translate.SessionSpec{ResourceGroup: "p", GPUsPerNode: 1}, nil)
	if f != fitNow || f2 != fitNow || !slices.Equal(g1[0].GPUs, []int{0}) || !slices.Equal(g2[0].GPUs, []int{1}) ||
		f3 != fitLater || !slices.Equal(w3, []string{"a2"}) {
		t.Fatalf("gpus: %+v %+v %v %v", g1, g2, f3, w3)
	}
	// Exclusive needs idle nodes and takes them whole; ExcNodes avoided.
	ex, f, _ := place(translate.SessionSpec{ResourceGroup: "p", Nodes: 1, Exclusive: true, ExcNodes: []string{"a3"}}, nil)
	if f != fitNow || ex[0].Name != "a1" || ex[0].CPUs != 4 || ex[0].MemMB != 1000 || !ex[0].Exclusive {
		t.Fatalf("exclusive: %v %+v", f, ex)
	}
	p.reserve(ex)
	if _, f, _ := place(translate.SessionSpec{ResourceGroup: "p", ReqNodes: []string{"a1"}}, nil); f != fitLater {
		t.Fatalf("node held exclusively: %v", f)
	}
	if got := cpusPerNode([]allocNode{{CPUs: 2}, {CPUs: 2}, {CPUs: 4}}); got != "2(x2),4" {
		t.Fatalf("cpus per node %q", got)
	}
	env := placementEnv(translate.SessionSpec{GPUsPerNode: 1, Env: []string{"A=1", "SLURM_JOB_NODELIST=x", "SLURMD_NODENAME=x"}},
		[]allocNode{{Name: "a2", CPUs: 1, GPUs: []int{1}}, {Name: "a3", CPUs: 1}})
	if want := []string{"A=1", "SLURM_JOB_NODELIST=a[2-3]", "SLURMD_NODENAME=a2", "CUDA_VISIBLE_DEVICES=1", "GPU_DEVICE_ORDINAL=1", "SLURM_JOB_GPUS=1"}; !slices.Equal(env, want) {
		t.Fatalf("env %q", env)
	}
}
