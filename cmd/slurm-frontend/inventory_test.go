package main

import (
	"regexp"
	"slices"
	"strings"
	"testing"
)

// invProbe is a command whose request the server refuses with the code
// of its inventory (translate/ctld/inventory.go) or answers as a real
// slurmctld with the feature unconfigured does.
type invProbe struct {
	args []string
	rels []string // only these releases (nil: all)
	// same: the real slurmctld of the release prints the same (the
	// feature is merely unconfigured or unused there too); else want
	// is what ours prints, with a non-zero exit.
	same bool
	want string
}

const notSupported = "Requested operation not supported on this system"

var invProbes = []invProbe{
	{args: []string{"scontrol", "show", "reservation"}, same: true},
	{args: []string{"scontrol", "create", "reservation", "starttime=now", "duration=60", "users=root", "nodes=n1"},
		want: "Error creating the reservation: " + notSupported},
	{args: []string{"scontrol", "delete", "reservation", "nosuch"}, same: true},
	{args: []string{"scontrol", "update", "reservationname=nosuch", "duration=10"}, same: true},
	{args: []string{"scontrol", "show", "burstbuffer"}, want: "slurm_load_burst_buffer_info error: " + notSupported},
	{args: []string{"scontrol", "reboot", "n1"}, same: true}, // scontrol's own check: no RebootProgram
	{args: []string{"scontrol", "notify", "99999", "hi"}, same: true},
	{args: []string{"scontrol", "suspend", "99999"}, want: notSupported + " for job 99999"},
	{args: []string{"strigger", "--get"}, want: "slurm_get_triggers: Requested operation is presently disabled"},
	{args: []string{"strigger", "--set", "--node", "--down", "--program=/bin/true"},
		want: "slurm_set_trigger: Requested operation is presently disabled"},
	{args: []string{"scrontab", "-l"}, rels: []string{"24.11", "26.05"}, same: true}, // scrontab's own check
	// 26.05's sbcast looks the job up first.
	{args: []string{"sbcast", "-j", "99999", "/etc/hostname", "/tmp/x"}, rels: []string{"22.05", "24.11"},
		want: "sbcast: error: Slurm job 99999 lookup error: " + notSupported},
	{args: []string{"scontrol", "show", "licenses"}, same: true},
	{args: []string{"scontrol", "show", "frontend"}, rels: []string{"22.05", "24.11"}, want: "slurm_load_front_end error: " + notSupported},
	{args: []string{"scontrol", "update", "frontendname=f1", "state=drain", "reason=x"}, rels: []string{"22.05", "24.11"}, same: true},
	{args: []string{"scontrol", "show", "assoc_mgr"}, want: "slurm_load_assoc_mgr_info error: " + notSupported},
	{args: []string{"scontrol", "top", "99999"}, same: true},
	{args: []string{"scontrol", "token"}, want: "slurm_fetch_token: error with request: " + notSupported},
	{args: []string{"sdiag", "-r"}, same: true},
	{args: []string{"scontrol", "setdebugflags", "+backfill"}, want: notSupported}, // 26.05 prints no space after "error:",
	{args: []string{"scontrol", "update", "partitionname=debug", "state=down"}, want: "slurm_update error: " + notSupported},
	{args: []string{"scontrol", "create", "partitionname=x", "nodes=n1"}, want: "Error creating the partition: " + notSupported},
	{args: []string{"scontrol", "delete", "partitionname=debug"}, want: "delete_partition partitionname=debug: " + notSupported},
	{args: []string{"scontrol", "delete", "nodename=n1"}, want: "delete_node nodename=n1: " + notSupported},
	{args: []string{"scontrol", "update", "suspendexcnodes=n1"}, rels: []string{"24.11", "26.05"}, want: "slurm_update error: " + notSupported},
	{args: []string{"scontrol", "update", "stepid=99999.0", "timelimit=10"}, want: "slurm_update error: " + notSupported},
	{args: []string{"sattach", "99999.0"}, want: "sattach: error: Could not get job step info: " + notSupported},
}

// TestInventoryRefusals: what a user can ask for that belongs to a Slurm
// feature the server does not have gets a message that says so, with the
// stock clients of every release, never "Invalid argument" nor a
// connection error; where the real slurmctld prints the same (the
// feature merely unconfigured there too) it is compared with it.
func TestInventoryRefusals(t *testing.T) {
	needRealCtld(t)
	for _, rel := range releases {
		t.Run(rel, func(t *testing.T) {
			real := startRealCtld(t, rel)
			f := newFrontend(t, fakeCluster)
			work := workDir(t, "inventory-"+rel+"-")
			for _, p := range invProbes {
				if p.rels != nil && !slices.Contains(p.rels, rel) {
					continue
				}
				cmd := strings.Join(p.args, " ")
				out, errs, code := f.as(t).in(work).run(rel, p.args...)
				got := out + errs
				if regexp.MustCompile(`Invalid argument|Unable to contact|Zero Bytes were transmitted|Socket timed out|Connection (refused|reset)`).MatchString(got) {
					t.Errorf("%s: %s\n%s\ncontroller log:\n%s", rel, cmd, got, f.Logs())
					continue
				}
				if p.same {
					rout, rerrs, rcode := real.as(t).in(work).run(rel, p.args...)
					if got != rout+rerrs || code != rcode {
						t.Errorf("%s: %s\nours (exit %d):\n%s\nreal slurmctld (exit %d):\n%s", rel, cmd, code, got, rcode, rout+rerrs)
					}
					continue
				}
				if code == 0 || !strings.Contains(got, p.want) {
					t.Errorf("%s: %s: exit %d\n%s\nwant a failure saying %q", rel, cmd, code, got, p.want)
				}
			}
		})
	}
}
