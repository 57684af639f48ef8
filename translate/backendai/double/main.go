package double

import (
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Main runs the double as a standalone process:
//
//	-listen 127.0.0.1:8081 -mode scale|run -agents N -agent-slots cpu=8,mem=32g
//	-resource-group default -keypair-file FILE -cycle 2s -run-time 10s
//	-users alice:1001:1001,bob:1002:1002
//
// It writes the superadmin keypair to -keypair-file (access key on line
// 1, secret on line 2), and each -users entry's keypair to FILE.<name>.
// It serves until SIGINT or SIGTERM.
func Main(args []string) error {
	fs := flag.NewFlagSet("backendai-double", flag.ContinueOnError)
	listen := fs.String("listen", "127.0.0.1:0", "listen address (loopback)")
	mode := fs.String("mode", "scale", "scale (no processes) or run (real processes)")
	nAgents := fs.Int("agents", 1, "number of agents")
	slots := fs.String("agent-slots", "cpu=8,mem=32g", "slots of each agent")
	rg := fs.String("resource-group", "default", "resource group of the agents")
	kpFile := fs.String("keypair-file", "", "write the superadmin access key and secret here")
	cycle := fs.Duration("cycle", 2*time.Second, "scheduler cycle")
	longCycle := fs.Duration("long-cycle", 60*time.Second, "retry interval of unplaced sessions")
	runTime := fs.Duration("run-time", 0, "scale mode: how long a batch task runs (0 = until destroyed)")
	users := fs.String("users", "", "comma list of name:uid:gid users to create (project default)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	d, err := New(Options{Mode: Mode(*mode), Listen: *listen, Cycle: *cycle, LongCycle: *longCycle, RunTime: *runTime})
	if err != nil {
		return err
	}
	defer d.Close()
	if *rg != "default" {
		if err := d.AddResourceGroup(ResourceGroup{Name: *rg}); err != nil {
			return err
		}
	}
	sm := map[string]string{}
	for _, kv := range strings.Split(*slots, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(kv), "=")
		if ok {
			sm[k] = v
		}
	}
	var as []Agent
	for i := 0; i < *nAgents; i++ {
		as = append(as, Agent{ID: fmt.Sprintf("i-agent%04d", i), ResourceGroup: *rg, Slots: sm})
	}
	if err := d.AddAgents(as); err != nil {
		return err
	}
	ak, sk := d.AdminKeys()
	if *kpFile != "" {
		if err := os.WriteFile(*kpFile, []byte(ak+"\n"+sk+"\n"), 0o600); err != nil {
			return err
		}
	}
	if *users != "" {
		for _, spec := range strings.Split(*users, ",") {
			parts := strings.Split(spec, ":")
			name := parts[0]
			u := User{Username: name, Email: name + "@example.com", Projects: []string{"default"}}
			if len(parts) >= 3 {
				uid, err1 := strconv.Atoi(parts[1])
				gid, err2 := strconv.Atoi(parts[2])
				if err1 != nil || err2 != nil {
					return fmt.Errorf("bad -users entry %q", spec)
				}
				u.ContainerUID, u.ContainerMainGID = &uid, &gid
			}
			if _, err := d.AddUser(u); err != nil {
				return err
			}
			kp, err := d.AddKeyPair(KeyPair{UserEmail: u.Email})
			if err != nil {
				return err
			}
			if *kpFile != "" {
				if err := os.WriteFile(*kpFile+"."+name, []byte(kp.AccessKey+"\n"+kp.SecretKey+"\n"), 0o600); err != nil {
					return err
				}
			}
		}
	}
	fmt.Fprintf(os.Stderr, "backendai-double %s listening on %s (mode %s)\n", ManagerVersion, d.URL(), *mode)
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGINT, syscall.SIGTERM)
	<-sig
	return nil
}
