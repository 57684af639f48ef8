package main

import (
	"crypto/rand"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/lablup/slurm-frontend/codec"
	"github.com/lablup/slurm-frontend/codec/munge"
)

// TestCredentials is the credential half of the hardening campaign: for
// every protocol version we speak, raw requests with credentials minted
// by the real munged (munge -c/-m/-U/-G/-u) or crafted with the site key
// (times, identities) or another key: each is answered as slurmctld of
// that release answers it (see codec/munge/doc.go and badinput_test.go:
// up to 24.05 a failed credential closes the connection, from 24.11 on
// it is answered RC 1007; a body-hash mismatch always closes), a request
// whose body claims another user than its credential is refused as
// slurmctld refuses it (2010, 2113), and every administrators' RPC from
// a user is refused with slurmctld's code. The server counts what it
// refused for its credential; the count must match.
func TestCredentials(t *testing.T) {
	if _, err := exec.LookPath("munge"); err != nil {
		t.Skip("munge not installed (make setup installs it)")
	}
	f := newFrontend(t, fakeCluster)
	key, err := munge.LoadKey("/etc/munge/munge.key")
	if err != nil {
		t.Fatal(err)
	}
	wrongKey, _ := munge.NewKey([]byte(strings.Repeat("not the site key ", 4)))
	b := &badInput{t: t, f: f, addr: fmt.Sprintf("127.0.0.1:%d", f.port), key: key}
	dir := t.TempDir()

	// real mints a credential with the real munged.
	real := func(t *testing.T, msgType uint16, body []byte, args ...string) []byte {
		t.Helper()
		p := filepath.Join(dir, "payload")
		os.WriteFile(p, munge.BodyHash(nil, munge.HashK12, msgType, body), 0o600)
		out, err := exec.Command("munge", append([]string{"-i", p}, args...)...).Output()
		if err != nil {
			t.Fatalf("munge %v: %v", args, err)
		}
		return []byte(strings.TrimSpace(string(out)))
	}
	// crafted mints one with the key and the fields given.
	crafted := func(t *testing.T, k *munge.Key, msgType uint16, body []byte, edit func(*munge.Cred)) []byte {
		t.Helper()
		c := munge.Cred{EncodeTime: uint32(time.Now().Unix()), TTL: 300, Addr: [4]byte{127, 0, 0, 1},
			AuthUID: munge.UIDAny, AuthGID: munge.GIDAny, Payload: munge.BodyHash(nil, munge.HashK12, msgType, body)}
		if edit != nil {
			edit(&c)
		}
		out, err := k.Encode(nil, &c, rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	ping := func(cred []byte, v uint16) []byte { return codec.AppendFrame(nil, v, codec.REQUEST_PING, cred, nil) }

	type credCase struct {
		name   string
		frames func(t *testing.T, v uint16) [][]byte // each on its own connection; the last one's reaction counts
		ok     bool                                  // accepted: RC 0 to the ping
		hash   bool                                  // refused for its body hash (always closed)
	}
	flip := func(cred []byte, at int) []byte {
		out := append([]byte(nil), cred...)
		i := len("MUNGE:") + at
		if out[i] == 'A' {
			out[i] = 'B'
		} else {
			out[i] = 'A'
		}
		return out
	}
	one := func(fn func(t *testing.T, v uint16) []byte) func(*testing.T, uint16) [][]byte {
		return func(t *testing.T, v uint16) [][]byte { return [][]byte{fn(t, v)} }
	}
	cases := []credCase{
		{name: "munged default (aes128, sha256)", ok: true, frames: one(func(t *testing.T, v uint16) []byte {
			return ping(real(t, codec.REQUEST_PING, nil), v)
		})},
		{name: "cipher none: munged accepts it, so does slurmctld", ok: true, frames: one(func(t *testing.T, v uint16) []byte {
			return ping(real(t, codec.REQUEST_PING, nil, "-c", "none"), v)
		})},
		{name: "aes256, sha512", ok: true, frames: one(func(t *testing.T, v uint16) []byte {
			return ping(real(t, codec.REQUEST_PING, nil, "-c", "aes256", "-m", "sha512"), v)
		})},
		{name: "aes128, md5", ok: true, frames: one(func(t *testing.T, v uint16) []byte {
			return ping(real(t, codec.REQUEST_PING, nil, "-m", "md5"), v)
		})},
		{name: "blowfish, ripemd160", ok: true, frames: one(func(t *testing.T, v uint16) []byte {
			return ping(real(t, codec.REQUEST_PING, nil, "-c", "blowfish", "-m", "ripemd160"), v)
		})},
		{name: "cast5, sha1", ok: true, frames: one(func(t *testing.T, v uint16) []byte {
			return ping(real(t, codec.REQUEST_PING, nil, "-c", "cast5", "-m", "sha1"), v)
		})},
		{name: "zlib-compressed", ok: true, frames: one(func(t *testing.T, v uint16) []byte {
			return ping(real(t, codec.REQUEST_PING, nil, "-z", "zlib"), v)
		})},
		{name: "restricted to us (uid 0)", ok: true, frames: one(func(t *testing.T, v uint16) []byte {
			return ping(real(t, codec.REQUEST_PING, nil, "-u", "0"), v)
		})},
		{name: "restricted to another uid", frames: one(func(t *testing.T, v uint16) []byte {
			return ping(real(t, codec.REQUEST_PING, nil, "-u", "64030"), v)
		})},
		{name: "restricted to another gid", frames: one(func(t *testing.T, v uint16) []byte {
			return ping(real(t, codec.REQUEST_PING, nil, "-g", "64030"), v)
		})},
		{name: "forged: MAC altered", frames: one(func(t *testing.T, v uint16) []byte {
			return ping(flip(real(t, codec.REQUEST_PING, nil), 30), v) // inside the MAC (after the 21-byte outer layer)
		})},
		{name: "forged: encrypted part altered", frames: one(func(t *testing.T, v uint16) []byte {
			c := real(t, codec.REQUEST_PING, nil)
			return ping(flip(c, len(c)-len("MUNGE:")-8), v)
		})},
		{name: "forged: outer layer altered (cipher byte)", frames: one(func(t *testing.T, v uint16) []byte {
			return ping(flip(real(t, codec.REQUEST_PING, nil), 1), v)
		})},
		{name: "truncated", frames: one(func(t *testing.T, v uint16) []byte {
			c := real(t, codec.REQUEST_PING, nil)
			return ping(append(c[:len(c)/2:len(c)/2], ':'), v)
		})},
		{name: "not a credential", frames: one(func(t *testing.T, v uint16) []byte {
			return ping([]byte("MUNGE:bm90IGEgY3JlZGVudGlhbA==:"), v)
		})},
		{name: "wrong key", frames: one(func(t *testing.T, v uint16) []byte {
			return ping(crafted(t, wrongKey, codec.REQUEST_PING, nil, nil), v)
		})},
		{name: "expired", frames: one(func(t *testing.T, v uint16) []byte {
			return ping(crafted(t, key, codec.REQUEST_PING, nil, func(c *munge.Cred) { c.EncodeTime -= 3600 }), v)
		})},
		{name: "rewound (from the future)", frames: one(func(t *testing.T, v uint16) []byte {
			return ping(crafted(t, key, codec.REQUEST_PING, nil, func(c *munge.Cred) { c.EncodeTime += 3600 }), v)
		})},
		{name: "replayed", frames: func(t *testing.T, v uint16) [][]byte {
			fr := ping(real(t, codec.REQUEST_PING, nil), v)
			return [][]byte{fr, fr}
		}},
		// auth/munge of 24.11 and later refuses uid/gid 99; 22.05's took
		// it. We refuse it in every release (stricter: no real user has
		// Slurm's "nobody" id).
		{name: "uid nobody (99)", frames: one(func(t *testing.T, v uint16) []byte {
			return ping(real(t, codec.REQUEST_PING, nil, "-U", "99"), v)
		})},
		{name: "body hash of another body", hash: true, frames: one(func(t *testing.T, v uint16) []byte {
			body := jobInfoBody()
			other := append([]byte(nil), body...)
			other[7] = 1
			return codec.AppendFrame(nil, v, codec.REQUEST_JOB_INFO, real(t, codec.REQUEST_JOB_INFO, other), body)
		})},
		{name: "body hash of another message type", hash: true, frames: one(func(t *testing.T, v uint16) []byte {
			return codec.AppendFrame(nil, v, codec.REQUEST_JOB_INFO, real(t, codec.REQUEST_PING, jobInfoBody()), jobInfoBody())
		})},
	}

	counts := map[string]int{}
	refusedCred := 0
	for _, v := range []uint16{codec.V22_05, codec.V24_11, codec.V26_05} {
		vn := codec.VersionName(v)
		authFail := expect{rc: codec.SLURM_PROTOCOL_AUTHENTICATION_ERROR, version: v}
		if v < codec.V24_11 {
			authFail = expect{close: true}
		}
		t.Run(vn, func(t *testing.T) {
			for _, c := range cases {
				t.Run(c.name, func(t *testing.T) {
					frames := c.frames(t, v)
					var r reaction
					for i, fr := range frames {
						r = b.exchange(t, [][]byte{fr}, false)
						if i < len(frames)-1 {
							b.want(t, r, expect{rc: 0, version: v}) // the first use of a replayed credential
						}
					}
					switch {
					case c.ok:
						b.want(t, r, expect{rc: 0, version: v})
					case c.hash:
						b.want(t, r, expect{close: true})
						refusedCred++
					default:
						b.want(t, r, authFail)
						refusedCred++
					}
					if !t.Failed() {
						counts[vn]++
					}
				})
			}
		})
	}

	// The body says another user than the credential.
	const nobody, slurmUID = 65534, 64030
	asUser := func(uid, gid uint32) func(*munge.Cred) {
		return func(c *munge.Cred) { c.UID, c.GID = uid, gid }
	}
	submit := func(v uint16, credUID, credGID, bodyUID, bodyGID uint32) reaction {
		d := codec.NewJobDesc()
		d.Script, d.Environment, d.WorkDir, d.Priority, d.Name = "#!/bin/sh\ntrue\n", []string{"PATH=/bin"}, "/tmp", 0, "spoof"
		d.UserID, d.GroupID = bodyUID, bodyGID
		w := codec.Writer{}
		d.Encode(&w, v)
		return b.exchange(t, [][]byte{codec.AppendFrame(nil, v, codec.REQUEST_SUBMIT_BATCH_JOB,
			crafted(t, key, codec.REQUEST_SUBMIT_BATCH_JOB, w.B, asUser(credUID, credGID)), w.B)}, false)
	}
	spoofs := 0
	for _, v := range []uint16{codec.V22_05, codec.V24_11, codec.V26_05} {
		vn := codec.VersionName(v)
		for _, c := range []struct {
			name             string
			bodyUID, bodyGID uint32
			rc               uint32
		}{
			{"body uid of another user", slurmUID, nobody, codec.ESLURM_USER_ID_MISSING},
			{"body uid root", 0, nobody, codec.ESLURM_USER_ID_MISSING},
			{"body gid of another group", nobody, slurmUID, codec.ESLURM_GROUP_ID_MISSING},
		} {
			r := submit(v, nobody, nobody, c.bodyUID, c.bodyGID)
			if !r.isRC(c.rc) {
				t.Errorf("%s: submission from uid %d whose %s: %s, want RC %d", vn, nobody, c.name, r, c.rc)
			} else {
				spoofs++
			}
		}
		// Control: the same body with the credential's own ids is taken,
		// and root may submit for anyone (as slurmctld's _valid_id).
		for _, ids := range [][4]uint32{{nobody, nobody, nobody, nobody}, {0, 0, slurmUID, slurmUID}} {
			if r := submit(v, ids[0], ids[1], ids[2], ids[3]); r.frame == nil || r.frame.MsgType != codec.RESPONSE_SUBMIT_BATCH_JOB {
				t.Errorf("%s: submission from uid %d for %d:%d: %s, want RESPONSE_SUBMIT_BATCH_JOB", vn, ids[0], ids[2], ids[3], r)
			}
		}
	}
	if out := f.mustRun("24.11", "squeue", "-h", "-o", "%u %j"); strings.Count(out, "nobody spoof") != 3 || strings.Count(out, "slurm spoof") != 3 || strings.Contains(out, "root spoof") {
		t.Errorf("after the spoofing attempts squeue lists\n%s\nwant 3 jobs of nobody and 3 of slurm (root's), none of root", out)
	}

	// Administrators' RPCs from a user (the body does not matter: they
	// are refused first), and from root for contrast (not refused so).
	admin := []struct {
		t    uint16
		rc   uint32
		from uint16 // first version that knows it (0: all)
		upto uint16 // last version that knows it (0: all)
	}{
		{codec.REQUEST_RECONFIGURE, codec.ESLURM_USER_ID_MISSING, 0, 0},
		{codec.REQUEST_SHUTDOWN, codec.ESLURM_USER_ID_MISSING, 0, 0},
		{codec.REQUEST_CONTROL, codec.ESLURM_USER_ID_MISSING, 0, 0},
		{codec.REQUEST_TAKEOVER, codec.ESLURM_USER_ID_MISSING, 0, 0},
		{codec.REQUEST_UPDATE_NODE, codec.ESLURM_USER_ID_MISSING, 0, 0},
		{codec.REQUEST_CREATE_PARTITION, codec.ESLURM_USER_ID_MISSING, 0, 0},
		{codec.REQUEST_UPDATE_PARTITION, codec.ESLURM_USER_ID_MISSING, 0, 0},
		{codec.REQUEST_DELETE_PARTITION, codec.ESLURM_USER_ID_MISSING, 0, 0},
		{codec.REQUEST_CREATE_RESERVATION, codec.ESLURM_USER_ID_MISSING, 0, 0},
		{codec.REQUEST_UPDATE_RESERVATION, codec.ESLURM_USER_ID_MISSING, 0, 0},
		{codec.REQUEST_DELETE_RESERVATION, codec.ESLURM_USER_ID_MISSING, 0, 0},
		{codec.REQUEST_CREATE_NODE, codec.ESLURM_USER_ID_MISSING, 0, 0},
		{codec.REQUEST_DELETE_NODE, codec.ESLURM_USER_ID_MISSING, 0, 0},
		{codec.REQUEST_UPDATE_FRONT_END, codec.ESLURM_USER_ID_MISSING, 0, codec.V25_11},
		{codec.REQUEST_SET_DEBUG_LEVEL, codec.EACCES, 0, 0},
		{codec.REQUEST_SET_DEBUG_FLAGS, codec.EACCES, 0, 0},
		{codec.REQUEST_SET_SCHEDLOG_LEVEL, codec.EACCES, 0, 0},
		{codec.REQUEST_REBOOT_NODES, codec.EACCES, 0, 0},
		{codec.REQUEST_SET_FS_DAMPENING_FACTOR, codec.EACCES, 0, 0},
		{codec.REQUEST_SET_SUSPEND_EXC_NODES, codec.EACCES, codec.V24_11, 0},
		{codec.REQUEST_SET_SUSPEND_EXC_PARTS, codec.EACCES, codec.V24_11, 0},
		{codec.REQUEST_SET_SUSPEND_EXC_STATES, codec.EACCES, codec.V24_11, 0},
		{codec.REQUEST_TOP_JOB, codec.ESLURM_ACCESS_DENIED, 0, 0},
	}
	adminRefused, adminTotal := 0, 0
	for _, v := range []uint16{codec.V22_05, codec.V24_11, codec.V26_05} {
		for _, a := range admin {
			body := []byte{0, 0, 0, 0}
			if a.t == codec.REQUEST_SET_DEBUG_LEVEL {
				body = []byte{0, 0, 0, 3} // info: root's would otherwise make the log quiet
			}
			if a.t == codec.REQUEST_TOP_JOB {
				w := codec.Writer{}
				(&codec.TopJobRequest{JobIDStr: "1"}).Encode(&w, v)
				body = w.B
			}
			known := (a.from == 0 || v >= a.from) && (a.upto == 0 || v <= a.upto)
			adminTotal++
			r := b.exchange(t, [][]byte{codec.AppendFrame(nil, v, a.t, crafted(t, key, a.t, body, asUser(nobody, nobody)), body)}, false)
			want := expect{rc: a.rc, version: v}
			if !known {
				want = expect{close: true} // an unknown type in that release: slurmctld closes
			}
			if !want.match(b, r) {
				t.Errorf("%s: %s from uid %d: %s, want %s", codec.VersionName(v), codec.MsgTypeName(a.t), nobody, r, want)
				continue
			}
			adminRefused++
			if known && a.t != codec.REQUEST_TOP_JOB {
				if r := b.exchange(t, [][]byte{codec.AppendFrame(nil, v, a.t, crafted(t, key, a.t, body, nil), body)}, false); r.isRC(a.rc) {
					t.Errorf("%s: %s from root refused like a user's (%s)", codec.VersionName(v), codec.MsgTypeName(a.t), r)
				}
			}
		}
	}
	// sdiag -r (STATS_INFO reset) from a user.
	for _, v := range []uint16{codec.V22_05, codec.V24_11, codec.V26_05} {
		w := codec.Writer{}
		w.U16(codec.StatCommandReset)
		adminTotal++
		r := b.exchange(t, [][]byte{codec.AppendFrame(nil, v, codec.REQUEST_STATS_INFO, crafted(t, key, codec.REQUEST_STATS_INFO, w.B, asUser(nobody, nobody)), w.B)}, false)
		if r.isRC(codec.ESLURM_ACCESS_DENIED) {
			adminRefused++
		} else {
			t.Errorf("%s: sdiag reset from uid %d: %s, want RC 2002", codec.VersionName(v), nobody, r)
		}
	}

	if !f.alive() {
		t.Fatalf("server died:\n%s", f.Logs())
	}
	// What the server counted.
	f.stop()
	m := regexp.MustCompile(`requests refused for their credential since start: ([^"\n]*)`).FindStringSubmatch(f.Logs())
	total := 0
	if m != nil {
		for _, kv := range strings.Split(m[1], ", ") {
			var n int
			if i := strings.LastIndexByte(kv, ' '); i > 0 {
				fmt.Sscan(kv[i+1:], &n)
			}
			total += n
		}
	}
	if total != refusedCred {
		t.Errorf("the server counted %d requests refused for their credential (%q), the test sent %d\n%s", total, m, refusedCred, lastLines(f.Logs(), 10))
	}
	vs := make([]string, 0, len(counts))
	for k, n := range counts {
		vs = append(vs, fmt.Sprintf("%s %d/%d", k, n, len(cases)))
	}
	sort.Strings(vs)
	t.Logf("RESULT credentials: %d credential cases per version as slurmctld answers them (%s); %d refused and counted by the server (%s); "+
		"%d of %d body/credential uid or gid mismatches refused (2010/2113); %d of %d administrators' RPCs from a user refused",
		len(cases), strings.Join(vs, ", "), refusedCred, m[1], spoofs, 9, adminRefused, adminTotal)
}
