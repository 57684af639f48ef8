package ctld

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"os"
	"os/exec"
	"regexp"
	"testing"

	"github.com/lablup/slurm-frontend/codec"
	"github.com/lablup/slurm-frontend/state"
	"github.com/lablup/slurm-frontend/translate/conf"
	"github.com/lablup/slurm-frontend/translate/local"
)

// inventoryReleases are the releases whose stock clients the server
// serves.
var inventoryReleases = []uint16{codec.V22_05, codec.V24_11, codec.V26_05}

func inventoryController(t *testing.T) *Controller {
	t.Helper()
	cfg := fakeCluster(t, "slurm-24.11")
	store, err := state.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	c, err := New(context.Background(), Options{
		Conf: cfg, Store: store, Backend: local.New(cfg), Stats: state.NewRPCStats(),
		ClusterName: "refcluster", ServerHost: "slurm-frontend", ServerAddr: "127.0.0.1", Port: testPort,
		SlurmUser: "root", SlurmUID: 0,
		// Reconfigure and shutdown are served when the server has them.
		Reload:   func() (*conf.Config, error) { return cfg, nil },
		Shutdown: func() {},
	})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// servedBy names what answers type t in version v ("" when nothing does):
// read from the dispatch tables themselves.
func servedBy(c *Controller, t, v uint16) string {
	if t == codec.REQUEST_PING {
		return "Fast"
	}
	if _, ok := slowHandlers[t]; ok {
		return "slowHandlers"
	}
	if _, ok := c.fastInfo(c.Snapshot(), &Request{Version: v, MsgType: t}, true); ok {
		return "fastInfo"
	}
	return ""
}

// replyRC is the return code of an RC reply, ok=false for other replies.
func replyRC(rep Reply) (uint32, bool) {
	t, body := rep.MsgType, rep.Body
	if rep.Frame != nil {
		var f codec.Frame
		if err := codec.DecodeFrame(rep.Frame, &f); err != nil {
			return 0, false
		}
		t, body = f.MsgType, f.Body
	}
	if t != codec.RESPONSE_SLURM_RC || len(body) < 4 {
		return 0, false
	}
	return binary.BigEndian.Uint32(body), true
}

// TestInventoryAnswers: every inventoried type, in every release that has
// it, sent with an empty body by an administrator and by a user, is
// answered (never dropped) and never with EINVAL; a type a handler
// serves reaches it (not ESLURM_NOT_SUPPORTED), any other gets the
// inventory's code.
func TestInventoryAnswers(t *testing.T) {
	c := inventoryController(t)
	served, refused := 0, map[string]int{}
	for i := range inventory {
		e := &inventory[i]
		name := codec.MsgTypeName(e.Type)
		if name == "UNKNOWN" {
			t.Errorf("type %d has no name in codec.MsgTypeName", e.Type)
		}
		by := servedBy(c, e.Type, codec.V24_11)
		if by == "" && e.Code == 0 {
			t.Errorf("%s: no refusal code, and no handler serves it", name)
		}
		if e.Code != 0 && codec.ErrorText(e.Code) == "" {
			t.Errorf("%s: refusal code %d has no text in codec.ErrorText (what would the client print?)", name, e.Code)
		}
		if by == "" && e.Why == "" {
			t.Errorf("%s: refused without a reason", name)
		}
		if by != "" {
			served++
		} else {
			refused[codec.ErrorName(e.Code)]++
		}
		for _, v := range inventoryReleases {
			if !e.has(v) {
				continue
			}
			for _, uid := range []uint32{0, 1000} {
				rep := serve(c, &Request{Version: v, MsgType: e.Type, UID: uid, GID: uid})
				if rep.Drop {
					t.Errorf("%s %s uid %d: connection dropped", codec.VersionName(v), name, uid)
					continue
				}
				rc, isRC := replyRC(rep)
				if !isRC {
					continue // an answer proper
				}
				switch {
				case rc == codec.EINVAL:
					t.Errorf("%s %s uid %d: EINVAL", codec.VersionName(v), name, uid)
				case uid != 0:
				case by != "" && rc == codec.ESLURM_NOT_SUPPORTED:
					t.Errorf("%s %s: served by %s, yet answered ESLURM_NOT_SUPPORTED", codec.VersionName(v), name, by)
				case by == "" && rc != e.Code:
					t.Errorf("%s %s: answered %d (%s), inventory says %d (%s)", codec.VersionName(v), name,
						rc, codec.ErrorName(rc), e.Code, codec.ErrorName(e.Code))
				}
			}
		}
	}
	t.Logf("%d types: %d served, refused %v", len(inventory), served, refused)
}

// TestInventoryCoversHandlers: every type a dispatch table knows is in
// the inventory, so the inventory cannot fall behind a new handler.
func TestInventoryCoversHandlers(t *testing.T) {
	c := inventoryController(t)
	seen := map[uint16]bool{}
	for i := range inventory {
		if seen[inventory[i].Type] {
			t.Errorf("%s listed twice", codec.MsgTypeName(inventory[i].Type))
		}
		seen[inventory[i].Type] = true
	}
	check := func(what string, typ uint16) {
		if !seen[typ] {
			t.Errorf("%s: %s (%d) is not in the inventory", what, codec.MsgTypeName(typ), typ)
		}
	}
	for typ := range slowHandlers {
		check("slowHandlers", typ)
	}
	for typ := range knownUnsupported {
		check("knownUnsupported", typ)
	}
	for typ := range adminOnly {
		check("adminOnly", typ)
	}
	for _, v := range inventoryReleases {
		for typ := 0; typ <= 0xffff; typ++ {
			if _, ok := c.fastInfo(c.Snapshot(), &Request{Version: v, MsgType: uint16(typ)}, true); ok {
				check("fastInfo", uint16(typ))
			}
		}
	}
}

// TestInventoryMatchesSlurm: the inventory holds every type slurmctld's
// RPC table (proc_req.c slurmctld_rpcs) has in each release, and says
// which releases have it; read from Slurm's source when its mirror is
// at hand.
func TestInventoryMatchesSlurm(t *testing.T) {
	repo := "/work/.mirror/SchedMD+slurm/repo"
	if _, err := os.Stat(repo); err != nil {
		t.Skip("no Slurm source mirror")
	}
	byName := map[string]*invEntry{}
	for i := range inventory {
		byName[codec.MsgTypeName(inventory[i].Type)] = &inventory[i]
	}
	tags := map[uint16]string{codec.V22_05: "slurm-22-05-8-1", codec.V24_11: "slurm-24-11-5-1", codec.V26_05: "slurm-26-05-3-1"}
	// Not sent to the controller: slurmctld sends it to slurmds, and
	// answers EINVAL itself when it comes back ("talking with itself").
	skip := map[string]bool{"REQUEST_NODE_REGISTRATION_STATUS": true}
	re := regexp.MustCompile(`^\s*\.msg_type = ([A-Z][A-Z0-9_]+),`)
	for _, v := range inventoryReleases {
		out, err := exec.Command("git", "-C", repo, "show", tags[v]+":src/slurmctld/proc_req.c").Output()
		if err != nil {
			t.Skipf("%s: %v", tags[v], err)
		}
		in, table := map[string]bool{}, false
		sc := bufio.NewScanner(bytes.NewReader(out))
		for sc.Scan() {
			line := sc.Text()
			if regexp.MustCompile(`slurmctld_rpcs\[\] =`).MatchString(line) {
				table = true
			} else if table && line == "};" {
				break
			}
			if m := re.FindStringSubmatch(line); table && m != nil {
				in[m[1]] = true
			}
		}
		if len(in) < 50 {
			t.Fatalf("%s: read only %d types from slurmctld's table", tags[v], len(in))
		}
		for name := range in {
			if skip[name] {
				continue
			}
			e := byName[name]
			if e == nil {
				t.Errorf("%s: slurmctld answers %s, the inventory does not list it", tags[v], name)
			} else if !e.has(v) {
				t.Errorf("%s: slurmctld answers %s, the inventory says the release does not have it", tags[v], name)
			}
		}
		for name, e := range byName {
			if e.has(v) && !in[name] {
				t.Errorf("%s: the inventory says %s is in the release, slurmctld's table does not have it", tags[v], name)
			}
		}
	}
}
