package munge

import (
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

const hostSocket = "/run/munge/munge.socket.2"

// unmungeCred runs `unmunge -N` on cred and returns munged's status (the
// munge_err_t unmunge exits with, 0 for success), the metadata it printed
// and the payload.
func unmungeCred(t *testing.T, cred []byte) (status int, meta map[string]string, payload []byte) {
	t.Helper()
	dir := t.TempDir()
	cmd := exec.Command("unmunge", "-N", "-m", filepath.Join(dir, "meta"), "-o", filepath.Join(dir, "payload"))
	cmd.Stdin = bytes.NewReader(cred)
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee):
		status = ee.ExitCode()
	default:
		t.Fatalf("unmunge: %v: %s", err, out)
	}
	meta = map[string]string{}
	m, _ := os.ReadFile(filepath.Join(dir, "meta"))
	for _, line := range strings.Split(string(m), "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok {
			meta[k] = strings.TrimSpace(v)
		}
	}
	payload, _ = os.ReadFile(filepath.Join(dir, "payload"))
	return status, meta, payload
}

func metaUint(t *testing.T, meta map[string]string, key string) uint32 {
	t.Helper()
	n, err := strconv.ParseUint(meta[key], 10, 32)
	if err != nil {
		t.Fatalf("unmunge metadata %s: %q: %v (%v)", key, meta[key], err, meta)
	}
	return uint32(n)
}

// TestMungedAlgorithmMatrix has the host's munged make a credential with
// every cipher x MAC x compression it accepts (`munge -c -m -z`), and
// checks that the Verifier decodes each to exactly what unmunge prints
// for it; that munged refuses the combinations Decode refuses (a MAC
// shorter than the cipher key); and that bytes flipped all over each
// credential are refused by both with the same error (ErrInvalid once
// past the outer header).
func TestMungedAlgorithmMatrix(t *testing.T) {
	if _, err := os.Stat(hostSocket); err != nil {
		t.Skipf("no munged socket %s (bash tools/munged.sh start): %v", hostSocket, err)
	}
	k := realMunge(t)
	uid, gid := uint32(os.Getuid()), uint32(os.Getgid())
	var idArgs []string
	if uid == 0 {
		uid, gid = 4242, 4343 // munge -U/-G: root may encode as anyone
		idArgs = []string{"-U", itoa(uid), "-G", itoa(gid)}
	}
	// Compressible (so -z really compresses: munged drops compression
	// that does not shrink the inner layer) and binary.
	payload := strings.Repeat("slurm body hash ", 30) + "\x00\x01\x02\xfe\xff"
	ciphers := []struct {
		name string
		id   uint8
	}{{"none", CipherNone}, {"blowfish", CipherBlowfish}, {"cast5", CipherCAST5}, {"aes128", CipherAES128}, {"aes256", CipherAES256}}
	macs := []struct {
		name string
		id   uint8
	}{{"md5", MACMD5}, {"sha1", MACSHA1}, {"ripemd160", MACRIPEMD160}, {"sha256", MACSHA256}, {"sha512", MACSHA512}}
	zips := []struct {
		name string
		id   uint8
	}{{"none", ZipNone}, {"zlib", ZipZlib}, {"bzlib", ZipBzlib}}
	made, refused, flips := 0, 0, 0
	for _, ci := range ciphers {
		for _, m := range macs {
			for zi, z := range zips {
				ttl := 60 + 100*zi + 7*int(m.id)
				t.Run(ci.name+"/"+m.name+"/"+z.name, func(t *testing.T) {
					args := append([]string{"-c", ci.name, "-m", m.name, "-z", z.name, "-t", strconv.Itoa(ttl)}, idArgs...)
					cmd := exec.Command("munge", args...)
					cmd.Stdin = strings.NewReader(payload)
					var errb bytes.Buffer
					cmd.Stderr = &errb
					out, err := cmd.Output()
					if keyLen, _ := cipherSizes(ci.id); macSize(m.id) < keyLen {
						// munged (enc.c) refuses to make it, as dec.c
						// refuses to read it: EMUNGE_BAD_MAC.
						if err == nil || !strings.Contains(errb.String(), fmt.Sprintf("Invalid MAC type %d with cipher type %d", m.id, ci.id)) {
							t.Fatalf("munge %v: %v %q, want a refusal", args, err, errb.String())
						}
						var c Cred
						wantErr(t, "Decode", k.Decode(seal(t, k, ci.id, m.id, z.id, nil, innerBytes(nil, 4)), &c, nil), ErrMACTooShort, ReasonBadMAC)
						refused++
						return
					}
					if err != nil {
						t.Fatalf("munge %v: %v: %s", args, err, errb.String())
					}
					cred := bytes.TrimSpace(out)
					st, meta, got := unmungeCred(t, cred)
					if st != 0 {
						t.Fatalf("unmunge refused munge %v: status %d", args, st)
					}
					if metaUint(t, meta, "CIPHER") != uint32(ci.id) || metaUint(t, meta, "MAC") != uint32(m.id) || metaUint(t, meta, "ZIP") != uint32(z.id) {
						t.Fatalf("munge %v made cipher %s mac %s zip %s", args, meta["CIPHER"], meta["MAC"], meta["ZIP"])
					}
					if string(got) != payload || metaUint(t, meta, "TTL") != uint32(ttl) || metaUint(t, meta, "UID") != uid || metaUint(t, meta, "GID") != gid {
						t.Fatalf("unmunge printed %v, payload %q", meta, got)
					}

					v := NewVerifier(k, WithIdentity(uint32(os.Getuid()), uint32(os.Getgid())))
					var c Cred
					if err := v.Verify(cred, &c); err != nil {
						t.Fatalf("Verify: %v (unmunge: success)", err)
					}
					addr := netip.AddrFrom4(c.Addr).String()
					if c.UID != metaUint(t, meta, "UID") || c.GID != metaUint(t, meta, "GID") || c.TTL != metaUint(t, meta, "TTL") ||
						c.EncodeTime != metaUint(t, meta, "ENCODE_TIME") || string(c.Payload) != string(got) ||
						c.Cipher != ci.id || c.MAC != m.id || c.Zip != z.id || addr != meta["ENCODE_HOST"] ||
						c.AuthUID != UIDAny || c.AuthGID != GIDAny {
						t.Fatalf("Verify gave %+v (addr %s), unmunge printed %v", c, addr, meta)
					}
					made++

					// Flip bytes of the outer header, the IV, the MAC and
					// the inner layer; munged's status and ours must agree.
					raw, err := base64.StdEncoding.DecodeString(string(cred[len(armorPrefix) : len(cred)-1]))
					if err != nil {
						t.Fatal(err)
					}
					_, ivLen := cipherSizes(ci.id)
					macAt := 5 + ivLen
					innerAt := macAt + macSize(m.id)
					pos := []int{0, 1, 2, 3, 4, macAt, innerAt - 1, innerAt, (innerAt + len(raw)) / 2, len(raw) - 1}
					if ivLen > 0 {
						pos = append(pos, 5, macAt-1)
					}
					for _, i := range pos {
						for _, mask := range []byte{0x01, 0x80} {
							raw[i] ^= mask
							bad := []byte(armorPrefix + base64.StdEncoding.EncodeToString(raw) + ":")
							raw[i] ^= mask
							st, _, _ := unmungeCred(t, bad)
							err := NewVerifier(k, WithIdentity(uint32(os.Getuid()), uint32(os.Getgid()))).Verify(bad, &c)
							if st == 0 || err == nil || int(ReasonOf(err)) != st {
								t.Errorf("byte %d ^ %#x: Verify %v (reason %d), unmunge status %d", i, mask, err, ReasonOf(err), st)
							}
							if i >= 5 && err != ErrInvalid {
								t.Errorf("byte %d ^ %#x (past the outer header): %v, want %v", i, mask, err, ErrInvalid)
							}
							flips++
						}
					}
				})
			}
		}
	}
	t.Logf("%d credentials made by munged and verified, %d combinations refused by munged and Decode alike, %d flipped credentials refused alike", made, refused, flips)
}
