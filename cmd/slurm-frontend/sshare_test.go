package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/lablup/slurm-frontend/state"
	"github.com/lablup/slurm-frontend/translate/backendai/double"
)

// shareRow is one line of sshare --parsable2 -l.
type shareRow struct {
	acct, user, rawShares         string
	rawUsage                      float64
	normShares, effUsage, fsShare string
}

// sshareRows runs sshare -P -l with args and reads its rows by column name.
func sshareRows(t *testing.T, r runner, rel string, args ...string) []shareRow {
	t.Helper()
	out := r.mustRun(rel, append([]string{"sshare", "-P", "-l"}, args...)...)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	head := strings.Split(lines[0], "|")
	col := map[string]int{}
	for i, h := range head {
		col[h] = i
	}
	for _, h := range []string{"Account", "User", "RawUsage", "NormShares", "EffectvUsage", "FairShare"} {
		if _, ok := col[h]; !ok {
			t.Fatalf("sshare %s: no column %s in %q", strings.Join(args, " "), h, lines[0])
		}
	}
	var rows []shareRow
	for _, l := range lines[1:] {
		f := strings.Split(l, "|")
		if len(f) != len(head) {
			t.Fatalf("sshare: row %q has %d fields, header %d", l, len(f), len(head))
		}
		u, _ := strconv.ParseFloat(f[col["RawUsage"]], 64)
		rows = append(rows, shareRow{acct: strings.TrimSpace(f[col["Account"]]), user: f[col["User"]], rawUsage: u, rawShares: f[col["RawShares"]],
			normShares: f[col["NormShares"]], effUsage: f[col["EffectvUsage"]], fsShare: f[col["FairShare"]]})
	}
	return rows
}

func rowKeys(rows []shareRow) []string {
	var k []string
	for _, r := range rows {
		k = append(k, r.acct+"/"+r.user)
	}
	return k
}

// sshare with the stock clients of each release: the association tree
// the jobs have used (accounts under root, each user in the accounts it
// ran in), usage from the history (CPU-seconds allocated), Fair Tree's
// fair share, the filters sshare sends, and PrivateData=usage.
func TestSshare(t *testing.T) {
	f := newFrontend(t, batchCluster)
	_, ru := slurmDir(t, f, "sshare-")
	ru.mustRun("24.11", "sbatch", "-A", "physics", "-n", "2", "-o", "/dev/null", "--wrap", "sleep 3")
	ru.mustRun("24.11", "sbatch", "-o", "/dev/null", "--wrap", "sleep 2")
	f.mustRun("24.11", "srun", "-A", "chem", "true")
	for end := time.Now().Add(60 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		if out := f.mustRun("24.11", "squeue", "-h"); out == "" {
			break
		}
		if time.Now().After(end) {
			t.Fatal("the jobs did not finish")
		}
	}
	// One pending job of a user who has none in the history: its row is
	// there at once, as slurmdbd's association would be.
	nobody := f.as(t).in(f.dir).user("nobody")
	nobody.mustRun("24.11", "sbatch", "--hold", "-A", "bio", "-o", "/dev/null", "--wrap", "true")
	// Usage reaches the figures once the records are in (a few seconds).
	time.Sleep(6 * time.Second)

	for _, rel := range releases {
		t.Run(rel, func(t *testing.T) {
			all := sshareRows(t, f.as(t), rel, "-a")
			if testing.Verbose() {
				t.Log(f.mustRun(rel, "sshare", "-a", "-l"))
			}
			want := []string{"root/", "root/root", "root/slurm", "bio/", "bio/nobody", "chem/", "chem/root", "physics/", "physics/slurm"}
			if got := rowKeys(all); strings.Join(got, " ") != strings.Join(want, " ") {
				t.Fatalf("sshare -a rows %v, want %v", got, want)
			}
			by := map[string]shareRow{}
			for _, r := range all {
				by[r.acct+"/"+r.user] = r
			}
			// physics ran 2 CPUs × ≥3 s, root's slurm 1 × ≥1 s.
			if u := by["physics/slurm"].rawUsage; u < 5 || u > 30 {
				t.Errorf("physics/slurm RawUsage %v, want about 6", u)
			}
			if u := by["root/slurm"].rawUsage; u < 1 || u > 15 {
				t.Errorf("root/slurm RawUsage %v, want about 1", u)
			}
			total := by["root/"].rawUsage
			if sum := by["physics/"].rawUsage + by["chem/"].rawUsage + by["root/slurm"].rawUsage + by["root/root"].rawUsage + by["bio/"].rawUsage; total < sum-2 || total > sum+2 {
				t.Errorf("root RawUsage %v, its children %v", total, sum)
			}
			if by["bio/nobody"].rawUsage != 0 || by["bio/nobody"].fsShare != "1.000000" {
				t.Errorf("a user with no usage yet: %+v", by["bio/nobody"])
			}
			// Fair Tree: the heavier user of physics ranks below the
			// ones who used nothing.
			if by["physics/slurm"].fsShare >= by["bio/nobody"].fsShare {
				t.Errorf("FairShare physics/slurm %s not below bio/nobody %s", by["physics/slurm"].fsShare, by["bio/nobody"].fsShare)
			}
			if by["physics/"].normShares != "0.200000" { // root's 5 children, one share each
				t.Errorf("physics NormShares %s", by["physics/"].normShares)
			}
			// Plain sshare as slurm: every account, only slurm's user rows.
			mine := rowKeys(sshareRows(t, ru, rel))
			if strings.Join(mine, " ") != "root/ root/slurm bio/ chem/ physics/ physics/slurm" {
				t.Errorf("sshare as slurm: %v", mine)
			}
			if got := rowKeys(sshareRows(t, ru, rel, "-a", "-A", "physics")); strings.Join(got, " ") != "physics/ physics/slurm" {
				t.Errorf("sshare -a -A physics: %v", got)
			}
			if got := rowKeys(sshareRows(t, ru, rel, "-u", "nobody")); strings.Join(got, " ") != "root/ bio/ bio/nobody chem/ physics/" {
				t.Errorf("sshare -u nobody: %v", got)
			}
		})
	}
	// sprio: the frontend runs priority/basic, where slurmctld has no
	// factors to give; a client configured for multifactor asks anyway
	// and gets the empty list (its header, nothing else).
	mf := filepath.Join(f.dir, "multifactor.conf")
	b, err := os.ReadFile(f.clientConf)
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(mf, []byte(strings.ReplaceAll(string(b), "priority/basic", "priority/multifactor")+"\nPriorityType=priority/multifactor\n"), 0o644)
	for _, rel := range releases {
		r := f.as(t)
		r.conf = mf
		if out := r.mustRun(rel, "sprio", "-h"); strings.TrimSpace(out) != "" {
			t.Errorf("%s sprio -h: %q", rel, out)
		}
	}

	// sreport reports whole hours before now: two runs put in the
	// history of an hour ago (the server stopped, as import-slurmdbd
	// does), 4 CPUs for 30 minutes in physics and 2 for 15 in chem.
	f.stop()
	st, err := state.Open(f.stateDir)
	if err != nil {
		t.Fatal(err)
	}
	h := time.Now().Add(-2 * time.Hour).Truncate(time.Hour)
	run := func(id, uid uint32, user, acct string, cpus int, secs int64) state.HistJob {
		s := h.Unix() + 600
		return state.HistJob{Job: state.Job{ID: id, Name: "past", UserID: uid, GroupID: uid, UserName: user, Account: acct,
			Partition: "cpu", SubmitTime: s - 60, EligibleTime: s - 60, StartTime: s, EndTime: s + secs, State: 3,
			MinCPUs: uint32(cpus), ArrayTaskID: 0xfffffffe, Nodes: "n1", Origin: state.OriginSlurmdbd},
			ReqUID: 0xfffffffe, TresAllocIDs: fmt.Sprintf("1=%d,2=1000,4=1", cpus)}
	}
	if _, _, err := st.ImportHistory([]state.HistJob{run(900001, 64030, "slurm", "physics", 4, 1800), run(900002, 0, "root", "chem", 2, 900)}); err != nil {
		t.Fatal(err)
	}
	st.Close()
	f.start()
	window := []string{"-t", "seconds", "start=" + h.Format("2006-01-02T15:04:05"), "end=" + h.Add(time.Hour).Format("2006-01-02T15:04:05")}
	for _, rel := range releases {
		out := f.mustRun(rel, append([]string{"sreport", "-n", "-P", "cluster", "utilization"}, window...)...)
		// Allocated, Down, PLND Down, Idle, Planned, Reported: 640 CPUs
		// for an hour.
		if want := fmt.Sprintf("refcluster|9000|0|0|%d|0|%d\n", 640*3600-9000, 640*3600); out != want {
			t.Errorf("%s sreport cluster utilization: %q, want %q", rel, out, want)
		}
		out = f.mustRun(rel, append([]string{"sreport", "-n", "-P", "user", "topusage"}, window...)...)
		// (Proper Name: the passwd entry's, read by sreport itself.)
		if want := "refcluster|slurm||physics|7200|0\nrefcluster|root|root|chem|1800|0\n"; out != want {
			t.Errorf("%s sreport user topusage: %q, want %q", rel, out, want)
		}
		out = f.mustRun(rel, append([]string{"sreport", "-n", "-P", "cluster", "accountutilizationbyuser"}, window...)...)
		for _, l := range []string{"refcluster|root|||9000|0\n", "refcluster|physics|||7200|0\n", "refcluster|physics|slurm||7200|0\n", "refcluster|chem|root|root|1800|0\n"} {
			if !strings.Contains(out, l) {
				t.Errorf("%s sreport cluster accountutilizationbyuser: no %q in\n%s", rel, l, out)
			}
		}
	}
	// PrivateData=usage,users,accounts: a user sees only its own rows,
	// its own user and the accounts it is in.
	f.stop()
	b, _ = os.ReadFile(f.configPath)
	os.WriteFile(f.configPath, append(b, "PrivateData=usage,users,accounts\n"...), 0o644)
	f.start()
	if got := ru.mustRun("24.11", "sacctmgr", "-n", "-P", "show", "user", "format=user"); got != "slurm\n" {
		t.Errorf("PrivateData=users: sacctmgr show user as slurm: %q", got)
	}
	if got := ru.mustRun("24.11", "sacctmgr", "-n", "-P", "show", "account", "format=account"); got != "physics\nroot\n" {
		t.Errorf("PrivateData=accounts: sacctmgr show account as slurm: %q", got)
	}
	if got := f.mustRun("24.11", "sacctmgr", "-n", "-P", "show", "user", "format=user"); got != "nobody\nroot\nslurm\n" {
		t.Errorf("PrivateData=users: sacctmgr show user as root: %q", got)
	}
	if got := rowKeys(sshareRows(t, ru, "24.11", "-a")); strings.Join(got, " ") != "root/slurm physics/slurm" {
		t.Errorf("PrivateData=usage: sshare -a as slurm: %v", got)
	}
	if got := rowKeys(sshareRows(t, f.as(t), "24.11", "-a")); len(got) != 9 {
		t.Errorf("PrivateData=usage: sshare -a as root: %v", got)
	}
}

// sshare on Backend.AI: the accounts are the manager's projects and the
// users their members (those who never ran a job too), a job that names
// no account counts in the default project it ran in, and its usage
// comes from the history as on the embedded engine.
func TestBackendAISshare(t *testing.T) {
	d, f := baiFrontend(t, func(d *double.Double) {
		if _, err := d.AddProject(double.Project{Name: "physics"}); err != nil {
			t.Fatal(err)
		}
		uid := 1234
		if _, err := d.AddUser(double.User{Username: "alice", Email: "alice@example.com", Projects: []string{"physics"},
			ContainerUID: &uid, ContainerMainGID: &uid}); err != nil {
			t.Fatal(err)
		}
	}, "")
	dir, r := slurmDir(t, f, "bai-sshare-")
	id := sbatchID(t, r, "24.11", "-J", "baishare", "-n", "2", "--mem=2G", "-o", "/dev/null", "--wrap", "sleep 3")
	waitRows(t, f, dir, 90*time.Second, func(rows map[int]jobRow) bool { return rows[id].state == "COMPLETED" })
	// The manager's fair share (26.3+): an hour of 2 CPUs booked for
	// slurm earlier today, its weight 2; its observer recalculates.
	if err := d.AddFairShareUsage(double.FairShareUsage{User: "slurm", Slots: map[string]string{"cpu": "2"}, Duration: time.Hour}); err != nil {
		t.Fatal(err)
	}
	if err := d.SetUserFairShareWeight("default", "default", "slurm", 2); err != nil {
		t.Fatal(err)
	}
	d.ObserveFairShare()
	for _, rel := range releases {
		rows := sshareRows(t, f.as(t), rel, "-a")
		// (admin: the double's superadmin, a member of default.)
		want := "root/ root/root default/ default/admin default/root default/slurm physics/ physics/alice"
		if got := strings.Join(rowKeys(rows), " "); got != want {
			t.Errorf("%s sshare -a on Backend.AI: %s\nwant %s\n%s", rel, got, want, lastLines(f.Logs(), 5))
			continue
		}
		// slurm's row is the manager's: its decayed core-seconds (the
		// hour booked, and the job's if the observer saw it), its
		// weight as RawShares, its factor below 1.
		if u := rows[5].rawUsage; u < 7200 || u > 7300 {
			t.Errorf("%s default/slurm RawUsage %v, want about 7200 (2 CPUs for an hour)", rel, u)
		}
		if rows[5].rawShares != "2" {
			t.Errorf("%s default/slurm RawShares %q, want the manager's weight 2", rel, rows[5].rawShares)
		}
		if fs, _ := strconv.ParseFloat(rows[5].fsShare, 64); fs <= 0 || fs >= 1 {
			t.Errorf("%s default/slurm FairShare %s, want the manager's factor in (0, 1)", rel, rows[5].fsShare)
		}
		if rows[7].rawUsage != 0 || rows[7].fsShare != "1.000000" {
			t.Errorf("%s physics/alice: %+v", rel, rows[7])
		}
	}
}
