package backendai_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/lablup/slurm-frontend/translate"
	"github.com/lablup/slurm-frontend/translate/backendai"
	"github.com/lablup/slurm-frontend/translate/backendai/double"
)

// fsDouble is a scale-mode double whose observer runs only when told,
// with one 8-core agent in "default".
func fsDouble(t *testing.T) (*double.Double, *backendai.Client) {
	t.Helper()
	d, err := double.New(double.Options{Cycle: 20 * time.Millisecond, LongCycle: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	if err := d.AddAgent(double.Agent{ID: "i-ag1", Slots: map[string]string{"cpu": "8", "mem": "32g"}}); err != nil {
		t.Fatal(err)
	}
	ak, sk := d.AdminKeys()
	c, err := backendai.New(backendai.Config{Endpoint: d.URL(), AccessKey: ak, SecretKey: sk})
	if err != nil {
		t.Fatal(err)
	}
	return d, c
}

func TestUserFairSharesPages(t *testing.T) {
	d, c := fsDouble(t)
	ctx := context.Background()
	const n = 1100 // more than one page of 1000
	ids := map[string]string{}
	for i := 0; i < n; i++ {
		name := fmt.Sprintf("u%04d", i)
		id, err := d.AddUser(double.User{Username: name, Email: name + "@example.com", Projects: []string{"default"}})
		if err != nil {
			t.Fatal(err)
		}
		ids[name] = id
		if err := d.AddFairShareUsage(double.FairShareUsage{User: id, Slots: map[string]string{"cpu": "1"}, Duration: time.Duration(i+1) * time.Hour}); err != nil {
			t.Fatal(err)
		}
	}
	if fs, err := c.UserFairShares(ctx); err != nil || len(fs) != 0 {
		t.Fatalf("before the observer: %v %v", fs, err)
	}
	d.ObserveFairShare()
	fs, err := c.UserFairShares(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(fs) != n {
		t.Fatalf("%d records, want %d", len(fs), n)
	}
	seen := map[string]bool{}
	for _, f := range fs {
		seen[f.UserUUID] = true
	}
	if len(seen) != n {
		t.Fatalf("%d distinct users", len(seen))
	}

	one, err := c.UserFairShares(ctx, backendai.UserFairShareFilter{ResourceGroup: "default"}, backendai.UserFairShareFilter{UserUUID: ids["u0009"]})
	if err != nil || len(one) != 1 {
		t.Fatalf("filtered: %v %v", one, err)
	}
	f := one[0]
	// ten core-hours of an 8-core group over 28 days, today (no decay)
	norm := 36000.0 / (8 * 28 * 86400)
	if f.ResourceGroup != "default" || f.DomainName != "default" || f.Weight != 1 || f.HalfLifeDays != 7 || f.LookbackDays != 28 ||
		f.TotalDecayedUsage["cpu"] != 36000 || math.Abs(f.NormalizedUsage-norm) > 1e-6 || math.Abs(f.Factor-math.Pow(2, -norm)) > 1e-6 {
		t.Fatalf("record %+v", f)
	}
	if f.LastCalculatedAt.IsZero() || time.Since(f.LastCalculatedAt) > time.Minute || f.LookbackEnd.Sub(f.LookbackStart) != 28*24*time.Hour {
		t.Fatalf("times %+v", f)
	}
	if f.ResourceWeights["cpu"] != 1 || f.ResourceWeights["mem"] != 1 {
		t.Fatalf("resource weights %v", f.ResourceWeights)
	}
	if none, err := c.UserFairShares(ctx, backendai.UserFairShareFilter{ResourceGroup: "nope"}); err != nil || len(none) != 0 {
		t.Fatalf("other group: %v %v", none, err)
	}
	if _, err := c.UserFairShares(ctx, backendai.UserFairShareFilter{ProjectID: "x"}); !errors.Is(err, backendai.ErrInvalidRequest) {
		t.Fatalf("bad uuid: %v", err)
	}

	// one record by GET; a member without one gets the defaults
	projects, err := c.Projects(ctx, "default", false)
	if err != nil || len(projects) != 1 {
		t.Fatal(projects, err)
	}
	g, err := c.UserFairShare(ctx, "default", projects[0].ID, ids["u0009"])
	if err != nil || g.Factor != f.Factor || g.ID != f.ID {
		t.Fatalf("get: %+v %v", g, err)
	}
	admin, err := c.UserByUsername(ctx, "admin", "default")
	if err != nil {
		t.Fatal(err)
	}
	g, err = c.UserFairShare(ctx, "default", projects[0].ID, admin.UUID)
	if err != nil || g.Factor != 1 || g.NormalizedUsage != 0 || g.TotalDecayedUsage["cpu"] != 0 {
		t.Fatalf("default: %+v %v", g, err)
	}
	if _, err := c.UserFairShare(ctx, "nope", projects[0].ID, admin.UUID); !backendai.IsNotFound(err) {
		t.Fatalf("unknown group: %v", err)
	}
}

func TestUserFairSharesSuperadminOnly(t *testing.T) {
	d, _ := fsDouble(t)
	if _, err := d.AddUser(double.User{Username: "dadmin", Email: "dadmin@example.com", Role: "admin", Projects: []string{"default"}}); err != nil {
		t.Fatal(err)
	}
	kp, err := d.AddKeyPair(double.KeyPair{UserEmail: "dadmin@example.com", IsAdmin: true})
	if err != nil {
		t.Fatal(err)
	}
	c, err := backendai.New(backendai.Config{Endpoint: d.URL(), AccessKey: kp.AccessKey, SecretKey: kp.SecretKey})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.UserFairShares(context.Background()); !backendai.IsForbidden(err) || backendai.IsNoFairShare(err) {
		t.Fatalf("domain admin: %v", err)
	}
}

func TestEngineFairShares(t *testing.T) {
	d, c := fsDouble(t)
	ctx := context.Background()
	if _, err := d.AddProject(double.Project{Name: "physics"}); err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"alice", "bob"} {
		if _, err := d.AddUser(double.User{Username: n, Email: n + "@example.com", Projects: []string{"default", "physics"}}); err != nil {
			t.Fatal(err)
		}
	}
	if err := d.SetUserFairShareWeight("default", "physics", "bob", 4); err != nil {
		t.Fatal(err)
	}
	day := 24 * time.Hour
	d.AddFairShareUsage(double.FairShareUsage{User: "alice", Slots: map[string]string{"cpu": "8"}, Duration: 2 * day})
	d.AddFairShareUsage(double.FairShareUsage{User: "bob", Project: "physics", Slots: map[string]string{"cpu": "8"}, Duration: 2 * day,
		Day: time.Now().AddDate(0, 0, -14)})
	d.ObserveFairShare()

	e, err := backendai.NewEngine(backendai.EngineConfig{Client: c, Cluster: "test", Image: "python"})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	var src translate.FairShareSource = e
	fs, err := src.FairShares(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(fs) != 2 {
		t.Fatalf("%+v", fs)
	}
	a, b := fs[0], fs[1] // sorted by group, project, user
	normA := 2.0 / 28
	if a.ResourceGroup != "default" || a.Project != "default" || a.User != "alice" || a.Weight != 1 ||
		a.DecayedUsage != 8*2*86400 || math.Abs(a.NormalizedUsage-normA) > 1e-6 || math.Abs(a.Factor-math.Pow(2, -normA)) > 1e-6 {
		t.Fatalf("alice %+v", a)
	}
	normB := normA / 4 // two half-lives ago
	if b.Project != "physics" || b.User != "bob" || b.Weight != 4 || b.DecayedUsage != 8*2*86400/4 ||
		math.Abs(b.NormalizedUsage-normB) > 1e-6 || math.Abs(b.Factor-math.Pow(2, -normB/4)) > 1e-6 {
		t.Fatalf("bob %+v", b)
	}
	if !(b.Factor > a.Factor) {
		t.Fatal("less (and older) usage and a higher weight must give the higher factor")
	}
	// cached for a minute
	d.AddFairShareUsage(double.FairShareUsage{User: "alice", Slots: map[string]string{"cpu": "8"}, Duration: day})
	d.ObserveFairShare()
	again, err := e.FairShares(ctx)
	if err != nil || len(again) != 2 || again[0] != a {
		t.Fatalf("cache: %+v %v", again, err)
	}
}
