package codec

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/lablup/slurm-frontend/codec/capture"
)

// goldenFrames returns every frame of message type msgType found in the
// capture testdata/<rel> (e.g. "slurm-24.11/sinfo-24.11.pcap"), decoded.
// Each Frame's views point into its own copy of the bytes.
func goldenFrames(t testing.TB, rel string, msgType uint16) []Frame {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", rel))
	if err != nil {
		t.Fatalf("read capture: %v", err)
	}
	conns, err := capture.Parse(b)
	if err != nil {
		t.Fatalf("parse capture %s: %v", rel, err)
	}
	var out []Frame
	for _, c := range conns {
		for _, list := range [][][]byte{c.Requests, c.Replies} {
			for _, raw := range list {
				var f Frame
				if err := DecodeFrame(raw, &f); err != nil {
					continue // e.g. slurmdbd traffic in a ctld helper
				}
				if f.MsgType == msgType {
					out = append(out, f)
				}
			}
		}
	}
	if len(out) == 0 {
		t.Fatalf("no message %d in %s", msgType, rel)
	}
	return out
}

// goldenCaptures lists capture files matching a glob under testdata.
func goldenCaptures(t testing.TB, glob string) []string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join("testdata", glob))
	if err != nil || len(m) == 0 {
		t.Fatalf("no captures match %s", glob)
	}
	for i := range m {
		m[i], _ = filepath.Rel("testdata", m[i])
	}
	return m
}
