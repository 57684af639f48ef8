package munge

import (
	"bytes"
	"crypto/rand"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"
)

const hostKey = "/etc/munge/munge.key"

// realMunge skips the test unless munge, unmunge, a live munged and a
// readable host key are all there, and returns that key.
func realMunge(t *testing.T) *Key {
	t.Helper()
	for _, tool := range []string{"munge", "unmunge"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s not installed (tools/install.sh installs MUNGE): %v", tool, err)
		}
	}
	out, err := exec.Command("sh", "-c", "munge -n | unmunge").CombinedOutput()
	if err != nil || !bytes.Contains(out, []byte("STATUS:          Success (0)")) {
		t.Skipf("munged is not answering (munge -n | unmunge: %v: %s)", err, bytes.TrimSpace(out))
	}
	k, err := LoadKey(hostKey)
	if err != nil {
		t.Skipf("host key unreadable (run as root or the munge user): %v", err)
	}
	return k
}

// mungeCred runs munge with args and stdin, returning the credential.
func mungeCred(t *testing.T, stdin string, args ...string) []byte {
	t.Helper()
	cmd := exec.Command("munge", args...)
	cmd.Stdin = strings.NewReader(stdin)
	var errb bytes.Buffer
	cmd.Stderr = &errb
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("munge %v: %v: %s", args, err, errb.String())
	}
	return bytes.TrimSpace(out)
}

func TestMungedToVerifier(t *testing.T) {
	k := realMunge(t)
	uid, gid := uint32(os.Getuid()), uint32(os.Getgid())
	big := strings.Repeat("slurm ", 200) // compressible, so -z really compresses
	for _, tc := range []struct {
		name    string
		stdin   string
		args    []string
		payload string
		check   func(*Cred) bool
	}{
		{"-n", "", []string{"-n"}, "", func(c *Cred) bool { return c.Cipher == CipherAES128 && c.MAC == MACSHA256 && c.TTL == DefaultTTL }},
		{"-s", "", []string{"-s", "hello"}, "hello", nil},
		{"stdin payload", "payload from stdin\x00\x01", nil, "payload from stdin\x00\x01", nil},
		{"restricted to us", "", []string{"-s", "r", "-u", itoa(uid), "-g", itoa(gid)}, "r", func(c *Cred) bool { return c.AuthUID == uid && c.AuthGID == gid }},
		{"ttl 60", "", []string{"-n", "-t", "60"}, "", func(c *Cred) bool { return c.TTL == 60 }},
		{"ttl max", "", []string{"-n", "-t", "-1"}, "", func(c *Cred) bool { return c.TTL == MaxTTL }},
		{"aes256 sha512", "", []string{"-s", "x", "-c", "aes256", "-m", "sha512"}, "x", func(c *Cred) bool { return c.Cipher == CipherAES256 && c.MAC == MACSHA512 }},
		{"aes128 md5", "", []string{"-s", "x", "-c", "aes128", "-m", "md5"}, "x", func(c *Cred) bool { return c.MAC == MACMD5 }},
		{"sha1", "", []string{"-s", "x", "-m", "sha1"}, "x", func(c *Cred) bool { return c.MAC == MACSHA1 }},
		{"no cipher", "", []string{"-s", "x", "-c", "none"}, "x", func(c *Cred) bool { return c.Cipher == CipherNone }},
		{"blowfish", "", []string{"-n", "-c", "blowfish"}, "", func(c *Cred) bool { return c.Cipher == CipherBlowfish }},
		{"cast5", "", []string{"-n", "-c", "cast5"}, "", func(c *Cred) bool { return c.Cipher == CipherCAST5 }},
		{"ripemd160", "", []string{"-n", "-m", "ripemd160"}, "", func(c *Cred) bool { return c.MAC == MACRIPEMD160 }},
		{"zlib", big, []string{"-z", "zlib"}, big, func(c *Cred) bool { return c.Zip == ZipZlib }},
		{"bzlib", big, []string{"-z", "bzlib"}, big, func(c *Cred) bool { return c.Zip == ZipBzlib }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cred := mungeCred(t, tc.stdin, tc.args...)
			v := NewVerifier(k, WithIdentity(uid, gid))
			var c Cred
			if err := v.Verify(cred, &c); err != nil {
				t.Fatalf("Verify(%s): %v", cred, err)
			}
			if c.UID != uid || c.GID != gid || string(c.Payload) != tc.payload {
				t.Fatalf("uid %d gid %d payload %q", c.UID, c.GID, c.Payload)
			}
			if d := time.Since(time.Unix(int64(c.EncodeTime), 0)); d < -5*time.Second || d > time.Minute {
				t.Fatalf("encode time %d is %v away", c.EncodeTime, d)
			}
			if tc.check != nil && !tc.check(&c) {
				t.Fatalf("unexpected fields %+v", c)
			}
			if err := v.Verify(cred, &c); err != ErrReplayed {
				t.Fatalf("replay: %v", err)
			}
		})
	}
	// munged's refusals, reproduced.
	other := uid + 1000
	var c Cred
	if err := NewVerifier(k, WithIdentity(uid, gid)).Verify(mungeCred(t, "", "-n", "-u", itoa(other)), &c); err != ErrUnauthorized {
		t.Fatalf("restricted to %d: %v", other, err)
	}
	if os.Getuid() == 0 {
		if err := NewVerifier(k, WithIdentity(uid, gid)).Verify(mungeCred(t, "", "-n", "-U", "99"), &c); err != ErrNobody {
			t.Fatalf("uid 99: %v", err)
		}
	}
}

func TestEncoderToUnmunge(t *testing.T) {
	k := realMunge(t)
	uid := uint32(os.Getuid())
	for _, payload := range []string{"", "p", strings.Repeat("0123456789", 100), "\x02" + strings.Repeat("\xff", 32)} {
		c := Cred{Addr: [4]byte{127, 0, 0, 1}, EncodeTime: uint32(time.Now().Unix()), UID: 4242, GID: 4343,
			AuthUID: uid, AuthGID: GIDAny, Payload: []byte(payload)}
		cred, err := k.Encode(nil, &c, rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		dir := t.TempDir()
		cmd := exec.Command("unmunge", "-N", "-m", dir+"/meta", "-o", dir+"/payload")
		cmd.Stdin = bytes.NewReader(cred)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("unmunge refused our credential: %v: %s", err, out)
		}
		meta, _ := os.ReadFile(dir + "/meta")
		got, _ := os.ReadFile(dir + "/payload")
		for _, want := range []string{"STATUS:          0", "UID:             4242", "GID:             4343", "TTL:             300", "CIPHER:          4", "MAC:             5", "UID_RESTRICTION: " + itoa(uid)} {
			if !bytes.Contains(meta, []byte(want)) {
				t.Errorf("unmunge metadata lacks %q:\n%s", want, meta)
			}
		}
		if string(got) != payload {
			t.Errorf("unmunge payload %q, want %q", got, payload)
		}
	}
	// And with the NUL Slurm puts after it on the wire.
	c := Cred{EncodeTime: uint32(time.Now().Unix()), AuthUID: UIDAny, AuthGID: GIDAny}
	cred, _ := k.Encode(nil, &c, rand.Reader)
	cmd := exec.Command("unmunge", "-n")
	cmd.Stdin = bytes.NewReader(append(cred, 0))
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("unmunge with NUL: %v: %s", err, out)
	}
	// A credential restricted to someone else is refused by munged too.
	c.AuthUID = uid + 1000
	cred, _ = k.Encode(nil, &c, rand.Reader)
	cmd = exec.Command("unmunge", "-n")
	cmd.Stdin = bytes.NewReader(cred)
	if out, err := cmd.CombinedOutput(); err == nil || !bytes.Contains(out, []byte("Unauthorized")) {
		t.Fatalf("unmunge accepted a credential restricted to another uid: %v: %s", err, out)
	}
}

func itoa(u uint32) string { return strconv.FormatUint(uint64(u), 10) }
