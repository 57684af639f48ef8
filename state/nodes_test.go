package state

import (
	"reflect"
	"testing"
)

// The administrators' node states survive a restart, as slurmctld's node
// state file keeps a drained node's reason, user and time.
func TestNodeAdminDurable(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := s.NodeAdmins(); err != nil || len(got) != 0 {
		t.Fatalf("empty store: %v %v", got, err)
	}
	want := map[string]NodeAdmin{
		"n1": {Name: "n1", Drain: true, Reason: "disk replacement", ReasonUID: 0, ReasonTime: 1796542102},
		"n2": {Name: "n2", Down: true, Reason: "maint", ReasonUID: 1000, ReasonTime: 1796542103},
	}
	if err := s.PutNodeAdmin(want); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s, err = Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	got, err := s.NodeAdmins()
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("after a restart: %+v %v, want %+v", got, err, want)
	}
	if !got["n1"].Unavailable() || (NodeAdmin{Reason: "x"}).Unavailable() {
		t.Fatal("Unavailable")
	}
}
