package main

import (
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	osuser "os/user"
	"sort"
	"strconv"

	"github.com/VictoriaMetrics/metrics"

	"github.com/lablup/slurm-frontend/codec"
	"github.com/lablup/slurm-frontend/edge"
	"github.com/lablup/slurm-frontend/state"
	"github.com/lablup/slurm-frontend/translate/node"
)

// serveMetrics answers Prometheus scrapes on addr (--metrics-listen): the
// controller port's load per source host, and srun's task I/O per step.
// It returns once the listener is bound, so a bad address fails the start.
func serveMetrics(addr string, srv *edge.Server, nodes *node.Service, stats *state.RPCStats, logger *log.Logger) (io.Closer, error) {
	set := metrics.NewSet()
	set.RegisterMetricsWriter(func(w io.Writer) {
		if stats != nil {
			writeRPCMetrics(w, stats)
		}
		writeSourceMetrics(w, srv)
		if nodes != nil {
			writeStepIOMetrics(w, nodes)
		}
	})
	mux := http.NewServeMux()
	mux.HandleFunc("/metrics", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; version=0.0.4")
		set.WritePrometheus(w)
		metrics.WriteProcessMetrics(w)
	})
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("metrics listener: %w", err)
	}
	hs := &http.Server{Handler: mux}
	go func() {
		if err := hs.Serve(ln); err != nil && err != http.ErrServerClosed {
			logger.Printf("metrics listener %s: %v", addr, err)
		}
	}()
	logger.Printf("metrics on http://%s/metrics", ln.Addr())
	return hs, nil
}

// writeRPCMetrics: sdiag's RPC tables (by message type and by user), the
// same counters sdiag reads, so the two agree; sdiag -r resets both.
func writeRPCMetrics(w io.Writer, stats *state.RPCStats) {
	for _, r := range stats.ByType() {
		name := codec.MsgTypeName(uint16(r.ID))
		metrics.WriteCounterUint64(w, fmt.Sprintf(`slurm_frontend_rpc_requests_total{type=%q}`, name), uint64(r.Count))
		metrics.WriteCounterFloat64(w, fmt.Sprintf(`slurm_frontend_rpc_seconds_total{type=%q}`, name), float64(r.Usec)/1e6)
	}
	for _, r := range stats.ByUser() {
		user := strconv.FormatUint(uint64(r.ID), 10)
		if u, err := osuser.LookupId(user); err == nil {
			user = u.Username
		}
		metrics.WriteCounterUint64(w, fmt.Sprintf(`slurm_frontend_rpc_user_requests_total{user=%q}`, user), uint64(r.Count))
		metrics.WriteCounterFloat64(w, fmt.Sprintf(`slurm_frontend_rpc_user_seconds_total{user=%q}`, user), float64(r.Usec)/1e6)
	}
}

func writeSourceMetrics(w io.Writer, srv *edge.Server) {
	snap, kind := srv.Sources()
	hosts := make([]string, 0, len(snap))
	byHost := map[string][2]uint64{}
	for a, c := range snap {
		h := a.String()
		hosts = append(hosts, h)
		byHost[h] = [2]uint64{c.Packets, c.Bytes}
	}
	sort.Strings(hosts)
	for _, h := range hosts {
		c := byHost[h]
		metrics.WriteCounterUint64(w, fmt.Sprintf(`slurm_frontend_source_packets_total{host=%q,counter=%q}`, h, kind), c[0])
		metrics.WriteCounterUint64(w, fmt.Sprintf(`slurm_frontend_source_bytes_total{host=%q,counter=%q}`, h, kind), c[1])
	}
}

// writeStepIOMetrics: every step's task I/O (the bytes of its connections
// to srun, framing included), in all and for each running step on each
// node, by who counted it (the kernel's eBPF program, or the relay).
func writeStepIOMetrics(w io.Writer, nodes *node.Service) {
	tot := nodes.StepIOTotals()
	for _, c := range []string{"ebpf", "userspace"} {
		t := tot[c]
		metrics.WriteCounterUint64(w, fmt.Sprintf(`slurm_frontend_step_io_bytes_total{direction="to_srun",counter=%q}`, c), t.Out)
		metrics.WriteCounterUint64(w, fmt.Sprintf(`slurm_frontend_step_io_bytes_total{direction="from_srun",counter=%q}`, c), t.In)
	}
	live := nodes.RunningStepIO()
	metrics.WriteGaugeUint64(w, "slurm_frontend_step_io_connections", uint64(len(live)))
	for _, f := range live {
		l := fmt.Sprintf(`job_id="%d",step_id="%d",node=%q,counter=%q`, f.Job, f.Step, f.Node, f.Counter)
		metrics.WriteGaugeUint64(w, `slurm_frontend_running_step_io_bytes{`+l+`,direction="to_srun"}`, f.Out)
		metrics.WriteGaugeUint64(w, `slurm_frontend_running_step_io_bytes{`+l+`,direction="from_srun"}`, f.In)
	}
}
