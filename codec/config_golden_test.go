package codec

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/lablup/slurm-frontend/codec/capture"
)

// Configless captures (testdata/configless/README.md): a client's
// REQUEST_CONFIG (SLURM_CONF_SERVER) against a real slurmctld of each
// release with enable_configless, and the real sackd's against 24.11 and
// 26.05 with its push (REQUEST_RECONFIGURE_SACKD). Each body decodes to
// what the controller sent and encodes back to the same bytes.

// configGolden decodes the one message of msgType in the capture (as a
// ConfigRequest or a ConfigResponse) and checks it encodes back to its
// bytes.
func configGolden(t *testing.T, file string, msgType uint16, m miscCodec) Frame {
	t.Helper()
	frames := goldenFrames(t, "configless/"+file, msgType)
	if len(frames) != 1 {
		t.Fatalf("%s: %d messages %d", file, len(frames), msgType)
	}
	f := frames[0]
	r := NewReader(f.Body)
	if err := m.Decode(&r, f.Version); err != nil {
		t.Fatalf("%s: %s: %v", file, MsgTypeName(msgType), err)
	}
	var w Writer
	m.Encode(&w, f.Version)
	if string(w.B) != string(f.Body) {
		t.Errorf("%s: %s re-encodes to\n%x\nnot\n%x", file, MsgTypeName(msgType), w.B, f.Body)
	}
	return f
}

func configNames(files []ConfigFile) (names, present []string) {
	for _, f := range files {
		names = append(names, f.Name)
		if f.Exists {
			present = append(present, f.Name)
		}
		if f.Execute {
			present = append(present, f.Name+"(execute)")
		}
	}
	return names, present
}

func TestConfigClientGolden(t *testing.T) {
	for _, c := range []struct {
		rel   string
		v     uint16
		names []string
	}{
		{"22.05", V22_05, []string{"slurm.conf", "cli_filter.lua", "plugstack.conf", "topology.conf"}},
		{"24.11", V24_11, []string{"slurm.conf", "cli_filter.lua", "plugstack.conf", "topology.conf", "oci.conf", "scrun.lua"}},
		{"26.05", V26_05, []string{"cli_filter.lua", "oci.conf", "plugstack.conf", "scrun.lua", "slurm.conf", "topology.conf", "topology.yaml"}},
	} {
		t.Run(c.rel, func(t *testing.T) {
			file := "configless-client-" + c.rel + ".pcap"
			var req ConfigRequest
			if f := configGolden(t, file, REQUEST_CONFIG, &req); f.Version != c.v || req != (ConfigRequest{Flags: ConfigRequestSlurmConf}) {
				t.Errorf("request %#x %+v", f.Version, req)
			}
			var resp ConfigResponse
			configGolden(t, file, RESPONSE_CONFIG, &resp)
			names, present := configNames(resp.Files)
			// Only slurm.conf is beside that slurmctld's config (and
			// cgroup.conf, which is slurmd's).
			if !reflect.DeepEqual(names, c.names) || !reflect.DeepEqual(present, []string{"slurm.conf"}) || resp.SlurmdSpoolDir != "" {
				t.Errorf("files %v, present %v, spool dir %q", names, present, resp.SlurmdSpoolDir)
			}
			for _, f := range resp.Files {
				if f.Name == "slurm.conf" && !strings.Contains(f.Content, "\nSlurmctldParameters=enable_configless\n") {
					t.Errorf("slurm.conf:\n%s", f.Content)
				}
				if !f.Exists && f.Content != "" {
					t.Errorf("%s: absent with content %q", f.Name, f.Content)
				}
			}
		})
	}
}

func TestConfigSackdGolden(t *testing.T) {
	for _, c := range []struct {
		rel   string
		v     uint16
		names []string
	}{
		{"24.11", V24_11, []string{"slurm.conf", "cli_filter.lua", "plugstack.conf", "topology.conf", "oci.conf", "scrun.lua"}},
		{"26.05", V26_05, []string{"cli_filter.lua", "oci.conf", "plugstack.conf", "scrun.lua", "slurm.conf", "topology.conf", "topology.yaml"}},
	} {
		t.Run(c.rel, func(t *testing.T) {
			file := "configless-sackd-" + c.rel + ".pcap"
			// Where the push went: the sackd's port.
			b, err := os.ReadFile(filepath.Join("testdata", "configless", file))
			if err != nil {
				t.Fatal(err)
			}
			conns, err := capture.Parse(b)
			if err != nil {
				t.Fatal(err)
			}
			var pushPort uint16
			for _, conn := range conns {
				for _, raw := range conn.Requests {
					var f Frame
					if DecodeFrame(raw, &f) == nil && f.MsgType == REQUEST_RECONFIGURE_SACKD {
						pushPort = conn.ServerPort
					}
				}
			}
			var req ConfigRequest
			f := configGolden(t, file, REQUEST_CONFIG, &req)
			want := ConfigRequest{Flags: ConfigRequestSackd}
			if c.v >= V25_05 {
				want.Port = pushPort // sackd --port
			}
			if f.Version != c.v || req != want || pushPort == 0 {
				t.Errorf("request %#x %+v, want %+v (pushed to port %d)", f.Version, req, want, pushPort)
			}
			for _, typ := range []uint16{RESPONSE_CONFIG, REQUEST_RECONFIGURE_SACKD} {
				var resp ConfigResponse
				configGolden(t, file, typ, &resp)
				names, present := configNames(resp.Files)
				if !reflect.DeepEqual(names, c.names) || resp.SlurmdSpoolDir != "" {
					t.Errorf("%s: files %v, spool dir %q", MsgTypeName(typ), names, resp.SlurmdSpoolDir)
				}
				if len(present) != 3 {
					t.Errorf("%s: present %v, want slurm.conf, cli_filter.lua, plugstack.conf", MsgTypeName(typ), present)
				}
				// The push carries the cli_filter.lua changed since.
				name := `"filtered"`
				if typ == REQUEST_RECONFIGURE_SACKD {
					name = `"refiltered"`
				}
				for _, f := range resp.Files {
					if f.Name == "cli_filter.lua" && !strings.Contains(f.Content, `options["job-name"] = `+name) {
						t.Errorf("%s: cli_filter.lua:\n%s", MsgTypeName(typ), f.Content)
					}
				}
			}
		})
	}
}
