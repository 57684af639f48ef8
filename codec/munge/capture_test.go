package munge

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lablup/slurm-frontend/codec"
	"github.com/lablup/slurm-frontend/codec/capture"
)

// capturedCred is one MUNGE credential found in a capture.
type capturedCred struct {
	file    string // e.g. slurm-24.11/sinfo-24.11.pcap
	reply   bool
	version uint16
	msgType uint16
	cred    []byte // armored, no NUL
	body    []byte
}

func testKey(t testing.TB) *Key {
	t.Helper()
	k, err := LoadKey(filepath.Join("..", "testdata", "slurm-24.11", "munge.key"))
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// capturedCreds returns every MUNGE credential in every capture under
// codec/testdata/slurm-*/, requests and replies.
func capturedCreds(t testing.TB) []capturedCred {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("..", "testdata", "slurm-*", "*.pcap"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no captures: %v", err)
	}
	var out []capturedCred
	for _, path := range files {
		if strings.HasSuffix(filepath.Dir(path), "-steps") {
			continue // signed with their own throwaway key (their README)
		}
		raw, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		conns, err := capture.Parse(raw)
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		rel := filepath.ToSlash(strings.TrimPrefix(path, filepath.Join("..", "testdata")+string(filepath.Separator)))
		for _, c := range conns {
			for dir, list := range [][][]byte{c.Requests, c.Replies} {
				for _, fr := range list {
					var f codec.Frame
					if codec.DecodeFrame(fr, &f) != nil || f.AuthPlugin != codec.AuthPluginMunge {
						continue // slurmdbd persist traffic, unsigned replies
					}
					out = append(out, capturedCred{
						file: rel, reply: dir == 1, version: f.Version, msgType: f.MsgType,
						cred: f.Cred, body: f.Body,
					})
				}
			}
		}
	}
	return out
}

// TestCapturedCredentials decodes every credential of every capture with
// the test key and checks what the Slurm source predicts for it.
func TestCapturedCredentials(t *testing.T) {
	k := testKey(t)
	creds := capturedCreds(t)
	seen := map[string]int{}
	var scratch []byte
	for _, cc := range creds {
		name := cc.file + " " + map[bool]string{false: "request", true: "reply"}[cc.reply]
		var c Cred
		if err := k.Decode(cc.cred, &c, &scratch); err != nil {
			t.Errorf("%s type %d: %v", name, cc.msgType, err)
			continue
		}
		// With a trailing NUL, as it sits on the wire, too.
		var c2 Cred
		if err := k.Decode(append(bytes.Clone(cc.cred), 0), &c2, nil); err != nil || c2.EncodeTime != c.EncodeTime {
			t.Errorf("%s: with NUL: %v", name, err)
		}
		if c.Cipher != CipherAES128 || c.MAC != MACSHA256 || c.Zip != ZipNone || len(c.Realm) != 0 {
			t.Errorf("%s: algorithms %d/%d/%d realm %q, want munged defaults", name, c.Cipher, c.MAC, c.Zip, c.Realm)
		}
		if c.UID != 0 || c.GID != 0 || c.TTL != DefaultTTL || c.Addr != [4]byte{127, 0, 0, 1} {
			t.Errorf("%s: uid %d gid %d ttl %d addr %v, want root, 300 s, 127.0.0.1", name, c.UID, c.GID, c.TTL, c.Addr)
		}
		// Restrictions (slurm_protocol_api.c, proc_req.c response_init):
		// REQUEST_PING goes through _send_message_controller and is
		// restricted to SlurmUser (root here); other requests are ANY.
		// 22.05 replies from proc_req.c's response_init are restricted to
		// the requester (root); RESPONSE_SLURM_RC goes through
		// _resp_msg_setup, which makes it ANY when the requester is
		// SlurmUser or SlurmdUser (root is both here).
		want := uint32(UIDAny)
		switch {
		case !cc.reply && cc.msgType == 1008:
			want = 0
		case cc.reply && cc.msgType != 8001:
			want = 0
		}
		if c.AuthUID != want || c.AuthGID != GIDAny {
			t.Errorf("%s type %d: auth_uid %#x auth_gid %#x, want %#x, ANY", name, cc.msgType, c.AuthUID, c.AuthGID, want)
		}
		if cc.reply && cc.version != 0x2600 {
			t.Errorf("%s: signed reply from a %#x controller", name, cc.version)
		}
		// Every version signs a K12 body hash (type 2, 33 bytes).
		if wantHash := BodyHash(nil, HashK12, cc.msgType, cc.body); !bytes.Equal(c.Payload, wantHash) {
			t.Errorf("%s type %d: payload %x, want K12 %x", name, cc.msgType, c.Payload, wantHash)
		}
		if err := CheckBodyHash(c.Payload, cc.msgType, cc.body); err != nil {
			t.Errorf("%s: CheckBodyHash: %v", name, err)
		}
		if len(cc.body) > 0 {
			bad := bytes.Clone(cc.body)
			bad[len(bad)/2] ^= 1
			if err := CheckBodyHash(c.Payload, cc.msgType, bad); err != ErrHashMismatch {
				t.Errorf("%s: tampered body: %v", name, err)
			}
		}
		if err := CheckBodyHash(c.Payload, cc.msgType+1, cc.body); err != ErrHashMismatch {
			t.Errorf("%s: wrong msg_type: %v", name, err)
		}

		// Verify as the controller (root) at the credential's encode time.
		at := time.Unix(int64(c.EncodeTime), 0)
		v := NewVerifier(k, WithClock(func() time.Time { return at }), WithIdentity(0, 0))
		var vc Cred
		if err := v.Verify(cc.cred, &vc); err != nil {
			t.Errorf("%s: Verify: %v", name, err)
		} else if !bytes.Equal(vc.Payload, c.Payload) || vc.UID != 0 {
			t.Errorf("%s: Verify filled %+v", name, vc)
		}
		if err := v.Verify(cc.cred, &vc); err != ErrReplayed {
			t.Errorf("%s: second Verify: %v, want replayed", name, err)
		}
		// A server running as uid 1000 may not decode the restricted ones.
		v = NewVerifier(k, WithClock(func() time.Time { return at }), WithIdentity(1000, 1000))
		err := v.Verify(cc.cred, &vc)
		if want == UIDAny && err != nil || want != UIDAny && err != ErrUnauthorized {
			t.Errorf("%s: Verify as uid 1000: %v", name, err)
		}
		seen[cc.file[:11]+map[bool]string{false: " req", true: " rep"}[cc.reply]]++
	}
	t.Logf("credentials checked: %v", seen)
	for _, need := range []string{"slurm-22.05 req", "slurm-22.05 rep", "slurm-24.11 req", "slurm-26.05 req"} {
		if seen[need] == 0 {
			t.Errorf("no %s credential found", need)
		}
	}
}

func TestCapturedWrongKey(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("..", "testdata", "slurm-24.11", "munge.key"))
	if err != nil {
		t.Fatal(err)
	}
	raw[0] ^= 1
	k, err := NewKey(raw)
	if err != nil {
		t.Fatal(err)
	}
	var c Cred
	var scratch []byte
	for _, cc := range capturedCreds(t) {
		if err := k.Decode(cc.cred, &c, &scratch); err != ErrInvalid || ReasonOf(err) != ReasonInvalid {
			t.Errorf("%s: %v, want invalid", cc.file, err)
		}
	}
}

// TestCapturedBitFlips flips every bit of a captured credential: each
// variant must be refused, except flips of the spare low bits of the
// last base64 character, which munged ignores too and which decode to
// the very same credential.
func TestCapturedBitFlips(t *testing.T) {
	k := testKey(t)
	cc := capturedCreds(t)[0]
	var orig Cred
	var scratch []byte
	if err := k.Decode(cc.cred, &orig, &scratch); err != nil {
		t.Fatal(err)
	}
	origPayload := bytes.Clone(orig.Payload)
	accepted := 0
	for i := range cc.cred {
		for bit := 0; bit < 8; bit++ {
			b := bytes.Clone(cc.cred)
			b[i] ^= 1 << bit
			var c Cred
			err := k.Decode(b, &c, &scratch)
			if err == nil {
				accepted++
				if c.EncodeTime != orig.EncodeTime || c.AuthUID != orig.AuthUID || !bytes.Equal(c.Payload, origPayload) {
					t.Errorf("flip byte %d bit %d: accepted a different credential", i, bit)
				}
				if strings.IndexByte(string(cc.cred[i+1:]), '=') != 0 && i != len(cc.cred)-2 {
					t.Errorf("flip byte %d bit %d (%q): accepted outside the last base64 character", i, bit, cc.cred[i])
				}
				continue
			}
			if e, ok := err.(*codec.Error); !ok || e.Code != codec.SLURM_PROTOCOL_AUTHENTICATION_ERROR {
				t.Errorf("flip byte %d bit %d: error %v is not an auth *codec.Error", i, bit, err)
			}
		}
	}
	t.Logf("%d bytes x 8 flips, %d decoded to the same credential (spare base64 bits)", len(cc.cred), accepted)
}
