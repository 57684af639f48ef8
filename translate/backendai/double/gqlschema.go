package double

import (
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"
)

var (
	schemaOnce sync.Once
	schemaVal  map[string]*gType
)

func gqlSchema() map[string]*gType {
	schemaOnce.Do(func() { schemaVal = buildSchema() })
	return schemaVal
}

type fmap map[string]*gField

func f(typ string, res func(x *gqlExec, p any, a map[string]any) (any, error), args ...gArg) *gField {
	return &gField{typ: typ, res: res, args: args}
}

func arg(name, typ string) gArg { return gArg{name: name, typ: typ} }

func argDef(name, typ string, def any) gArg {
	return gArg{name: name, typ: typ, def: def, hasDef: true}
}

// v wraps a plain getter.
func v[T any](get func(T) any) func(x *gqlExec, p any, a map[string]any) (any, error) {
	return func(x *gqlExec, p any, a map[string]any) (any, error) { return get(p.(T)), nil }
}

func strOrNil(p *string) any {
	if p == nil {
		return nil
	}
	return *p
}

func timeOrNil(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return t
}

// gqlForbidden is str(GenericForbidden(...)): "Forbidden operation. (msg)".
func gqlForbidden(msg string) error {
	if msg == "" {
		return errors.New("Forbidden operation.")
	}
	return errors.New("Forbidden operation. (" + msg + ")")
}

func argStr(a map[string]any, k string) (string, bool) {
	s, ok := a[k].(string)
	return s, ok
}

func argInt(a map[string]any, k string) int {
	n, _ := a[k].(int)
	return n
}

func buildSchema() map[string]*gType {
	sess := fmap{
		"id":               f("ID", v(func(s *session) any { return s.id })),
		"session_id":       f("UUID", v(func(s *session) any { return s.id })),
		"main_kernel_id":   f("UUID", v(func(s *session) any { return s.main().id })),
		"tag":              f("String", v(func(s *session) any { return strOrNil(s.tag) })),
		"name":             f("String", v(func(s *session) any { return s.name })),
		"type":             f("String", v(func(s *session) any { return s.typ })),
		"main_kernel_role": f("String", v(func(s *session) any { return s.typ })),
		"priority":         f("Int", v(func(s *session) any { return s.priority })),
		"image":            f("String", v(func(s *session) any { return s.image.name })),
		"architecture":     f("String", v(func(s *session) any { return s.image.arch })),
		"registry":         f("String", v(func(s *session) any { return s.image.registry })),
		"cluster_template": f("String", v(func(s *session) any { return nil })),
		"cluster_mode":     f("String", v(func(s *session) any { return s.clusterMode })),
		"cluster_size":     f("Int", v(func(s *session) any { return s.clusterSize })),
		"domain_name":      f("String", v(func(s *session) any { return s.domain })),
		"group_name":       f("String", v(func(s *session) any { return s.project.name })),
		"group_id":         f("UUID", v(func(s *session) any { return s.project.id })),
		"user_email":       f("String", v(func(s *session) any { return s.owner.email })),
		"full_name": f("String", v(func(s *session) any {
			return s.owner.fullName
		})),
		"user_id":            f("UUID", v(func(s *session) any { return s.owner.uuid })),
		"access_key":         f("String", v(func(s *session) any { return s.accessKey })),
		"created_user_email": f("String", v(func(s *session) any { return nil })),
		"created_user_id":    f("UUID", v(func(s *session) any { return nil })),
		"status":             f("String", v(func(s *session) any { return s.status.String() })),
		"status_changed": f("DateTime", v(func(s *session) any {
			// SessionRow.status_changed = status_history[current status]
			if t, ok := s.hist.get(s.status); ok {
				return t
			}
			return nil
		})),
		"status_info": f("String", v(func(s *session) any { return strOrNil(s.statusInfo) })),
		"status_data": f("JSONString", v(func(s *session) any {
			if s.statusData == nil {
				return nil
			}
			return jsonString{s.statusData}
		})),
		"status_history": f("JSONString", v(func(s *session) any { return jsonString{s.hist.toObj()} })),
		"created_at":     f("DateTime", v(func(s *session) any { return s.createdAt })),
		"terminated_at":  f("DateTime", v(func(s *session) any { return timeOrNil(s.termAt) })),
		"starts_at":      f("DateTime", v(func(s *session) any { return timeOrNil(s.startsAt) })),
		"scheduled_at": f("DateTime", v(func(s *session) any {
			if t, ok := s.hist.get(StScheduled); ok {
				return t
			}
			return nil
		})),
		"startup_command": f("String", v(func(s *session) any { return strOrNil(s.startupCommand) })),
		"result":          f("String", v(func(s *session) any { return s.result.String() })),
		"commit_status":   f("String", v(func(s *session) any { return "ready" })),
		"abusing_reports": f("[JSONString]", v(func(s *session) any {
			out := make([]any, len(s.kernels))
			return out
		})),
		"idle_checks": f("JSONString", v(func(s *session) any { return jsonString{obj{}} })),
		"agent_ids":   f("[String]", v(func(s *session) any { return strList(s.agentIDs) })),
		"agents":      f("[String]", v(func(s *session) any { return strList(s.agentIDs) })),
		"resource_opts": f("JSONString", v(func(s *session) any {
			o := obj{}
			for _, k := range s.kernels {
				o = append(o, kv{k.hostname, k.resourceOpts})
			}
			return jsonString{o}
		})),
		"scaling_group": f("String", v(func(s *session) any { return s.rg.name })),
		"service_ports": f("JSONString", v(func(s *session) any {
			if s.main().status == StRunning || s.main().status == StTerminating || s.main().status == StTerminated {
				return jsonString{[]any{}}
			}
			return nil
		})),
		"mounts":         f("[String]", v(func(s *session) any { return []any{} })),
		"vfolder_mounts": f("[String]", v(func(s *session) any { return []any{} })),
		"occupying_slots": f("JSONString", func(x *gqlExec, p any, a map[string]any) (any, error) {
			return jsonString{x.d.occupied(p.(*session)).toJSON(x.d.slotTypes)}, nil
		}),
		"occupied_slots": f("JSONString", func(x *gqlExec, p any, a map[string]any) (any, error) {
			return jsonString{x.d.occupied(p.(*session)).toJSON(x.d.slotTypes)}, nil
		}),
		"requested_slots": f("JSONString", func(x *gqlExec, p any, a map[string]any) (any, error) {
			return jsonString{p.(*session).requested.toJSON(x.d.slotTypes)}, nil
		}),
		"num_queries": f("BigInt", v(func(s *session) any { return s.numQueries })),
		"containers": f("[ComputeContainer]", v(func(s *session) any {
			out := make([]any, len(s.kernels))
			for i, k := range s.kernels {
				out[i] = k
			}
			return out
		})),
		"dependencies": f("[ComputeSession]", func(x *gqlExec, p any, a map[string]any) (any, error) {
			s := p.(*session)
			if len(s.deps) == 0 {
				return []any{}, nil
			}
			// batch_load_by_dependency keys its result by the
			// dependency's id instead of the dependent's: KeyError
			// (source bug, 26.8.1).
			return nil, fmt.Errorf("UUID(%s)", pyStrRepr(s.deps[0]))
		}),
		"inference_metrics": f("JSONString", v(func(s *session) any { return nil })),
	}
	kern := fmap{
		"id":               f("ID", v(func(k *kernel) any { return k.id })),
		"idx":              f("Int", v(func(k *kernel) any { return k.idx })),
		"role":             f("String", v(func(k *kernel) any { return k.role })),
		"hostname":         f("String", v(func(k *kernel) any { return k.hostname })),
		"kernel_id":        f("UUID", v(func(k *kernel) any { return k.id })),
		"cluster_idx":      f("Int", v(func(k *kernel) any { return k.idx })),
		"local_rank":       f("Int", v(func(k *kernel) any { return k.rank })),
		"cluster_role":     f("String", v(func(k *kernel) any { return k.role })),
		"cluster_hostname": f("String", v(func(k *kernel) any { return k.hostname })),
		"session_id":       f("UUID", v(func(k *kernel) any { return k.sess.id })),
		"image":            f("String", v(func(k *kernel) any { return k.sess.image.name })),
		"architecture":     f("String", v(func(k *kernel) any { return k.sess.image.arch })),
		"registry":         f("String", v(func(k *kernel) any { return k.sess.image.registry })),
		"status":           f("String", v(func(k *kernel) any { return k.status.String() })),
		"status_changed":   f("DateTime", v(func(k *kernel) any { return timeOrNil(k.statusChanged) })),
		"status_info":      f("String", v(func(k *kernel) any { return strOrNil(k.statusInfo) })),
		"status_data": f("JSONString", v(func(k *kernel) any {
			if k.statusData == nil {
				return nil
			}
			return jsonString{k.statusData}
		})),
		"created_at":    f("DateTime", v(func(k *kernel) any { return k.createdAt })),
		"terminated_at": f("DateTime", v(func(k *kernel) any { return timeOrNil(k.terminatedAt) })),
		"starts_at":     f("DateTime", v(func(k *kernel) any { return nil })),
		// ComputeContainer.scheduled_at is the raw status_history string,
		// which graphene's DateTime refuses to serialize (source quirk).
		"scheduled_at": f("DateTime", v(func(k *kernel) any {
			if t, ok := k.hist.get(StScheduled); ok {
				return isoformat(t)
			}
			return nil
		})),
		"abusing_report": f("JSONString", v(func(k *kernel) any { return nil })),
		"agent": f("String", func(x *gqlExec, p any, a map[string]any) (any, error) {
			k := p.(*kernel)
			if k.agent == nil || x.hideAgents() {
				return nil, nil
			}
			return k.agent.id, nil
		}),
		"agent_addr": f("String", func(x *gqlExec, p any, a map[string]any) (any, error) {
			k := p.(*kernel)
			if k.agent == nil || x.hideAgents() {
				return nil, nil
			}
			return k.agent.addr, nil
		}),
		"container_id": f("String", func(x *gqlExec, p any, a map[string]any) (any, error) {
			k := p.(*kernel)
			if k.containerID == "" || x.hideAgents() {
				return nil, nil
			}
			return k.containerID, nil
		}),
		"resource_opts": f("JSONString", v(func(k *kernel) any { return jsonString{k.resourceOpts} })),
		"occupied_slots": f("JSONString", func(x *gqlExec, p any, a map[string]any) (any, error) {
			k := p.(*kernel)
			if k.startsAt.IsZero() {
				return jsonString{obj{}}, nil
			}
			return jsonString{k.requested.toJSON(x.d.slotTypes)}, nil
		}),
		"live_stat": f("JSONString", v(func(k *kernel) any { return nil })),
		"last_stat": f("JSONString", v(func(k *kernel) any {
			if k.lastStat == nil {
				return nil
			}
			return jsonString{k.lastStat}
		})),
		"preopen_ports": f("[Int]", v(func(k *kernel) any { return intList(k.preopen) })),
	}
	agentF := fmap{
		"id":             f("ID", v(func(a *agent) any { return a.id })),
		"status":         f("String", v(func(a *agent) any { return a.status })),
		"status_changed": f("DateTime", v(func(a *agent) any { return a.statusChanged })),
		"region":         f("String", v(func(a *agent) any { return a.region })),
		"scaling_group":  f("String", v(func(a *agent) any { return a.rg.name })),
		"schedulable":    f("Boolean", v(func(a *agent) any { return a.schedulable })),
		"available_slots": f("JSONString", func(x *gqlExec, p any, _ map[string]any) (any, error) {
			return jsonString{p.(*agent).capacity.toJSON(x.d.slotTypes)}, nil
		}),
		"occupied_slots": f("JSONString", func(x *gqlExec, p any, _ map[string]any) (any, error) {
			return jsonString{agentOccupied(p.(*agent)).toJSON(x.d.slotTypes)}, nil
		}),
		"addr":                          f("String", v(func(a *agent) any { return a.addr })),
		"architecture":                  f("String", v(func(a *agent) any { return a.arch })),
		"first_contact":                 f("DateTime", v(func(a *agent) any { return a.firstContact })),
		"lost_at":                       f("DateTime", v(func(a *agent) any { return timeOrNil(a.lostAt) })),
		"live_stat":                     f("JSONString", v(func(a *agent) any { return nil })),
		"version":                       f("String", v(func(a *agent) any { return a.version })),
		"compute_plugins":               f("JSONString", v(func(a *agent) any { return jsonString{a.computePlugins} })),
		"auto_terminate_abusing_kernel": f("Boolean", v(func(a *agent) any { return false })),
		"hardware_metadata": f("JSONString", v(func(a *agent) any {
			if a.status != "ALIVE" {
				return nil
			}
			return jsonString{obj{}}
		})),
		"local_config":    f("JSONString", v(func(a *agent) any { return jsonString{obj{{"agent", obj{{"auto_terminate_abusing_kernel", false}}}}} })),
		"container_count": f("Int", v(func(a *agent) any { return a.containers })),
		"gpu_alloc_map":   f("UUIDFloatMap", v(func(a *agent) any { return obj{} })),
		"mem_slots":       f("Int", v(func(a *agent) any { return int(a.capacity.get("mem") >> 20) })),
		"cpu_slots":       f("Float", v(func(a *agent) any { return float64(a.capacity.get("cpu")) / 1000 })),
		"gpu_slots":       f("Float", v(func(a *agent) any { return float64(a.capacity.get("cuda.device")) / 1000 })),
		"tpu_slots":       f("Float", v(func(a *agent) any { return float64(a.capacity.get("tpu.device")) / 1000 })),
		"used_mem_slots":  f("Int", v(func(a *agent) any { return int(a.used["mem"] >> 20) })),
		"used_cpu_slots":  f("Float", v(func(a *agent) any { return float64(a.used["cpu"]) / 1000 })),
		"used_gpu_slots":  f("Float", v(func(a *agent) any { return float64(a.used["cuda.device"]) / 1000 })),
		"used_tpu_slots":  f("Float", v(func(a *agent) any { return float64(a.used["tpu.device"]) / 1000 })),
		"cpu_cur_pct":     f("Float", v(func(a *agent) any { return nil })),
		"mem_cur_bytes":   f("Float", v(func(a *agent) any { return nil })),
		"compute_containers": f("[ComputeContainer]", func(x *gqlExec, p any, args map[string]any) (any, error) {
			a := p.(*agent)
			var want *Status
			if s, ok := argStr(args, "status"); ok {
				st, okS := parseStatusKey(s, true)
				if !okS {
					return nil, fmt.Errorf("%s", pyStrRepr(s))
				}
				want = &st
			}
			out := []any{}
			for _, k := range x.d.kernelsSorted() {
				if k.agent == a && (want == nil || k.status == *want) {
					out = append(out, k)
				}
			}
			return out, nil
		}, arg("status", "String")),
	}
	sg := fmap{
		"name":              f("String", v(func(r *rgroup) any { return r.name })),
		"description":       f("String", v(func(r *rgroup) any { return r.description })),
		"is_active":         f("Boolean", v(func(r *rgroup) any { return r.active })),
		"is_public":         f("Boolean", v(func(r *rgroup) any { return r.public })),
		"created_at":        f("DateTime", v(func(r *rgroup) any { return r.createdAt })),
		"wsproxy_addr":      f("String", v(func(r *rgroup) any { return r.wsproxyAddr })),
		"wsproxy_api_token": f("String", v(func(r *rgroup) any { return nil })),
		"driver":            f("String", v(func(r *rgroup) any { return "static" })),
		"driver_opts":       f("JSONString", v(func(r *rgroup) any { return jsonString{obj{}} })),
		"scheduler":         f("String", v(func(r *rgroup) any { return r.scheduler })),
		"scheduler_opts":    f("JSONString", v(func(r *rgroup) any { return jsonString{r.schedulerOpts()} })),
		"use_host_network":  f("Boolean", v(func(r *rgroup) any { return r.useHostNetwork })),
		"accelerator_quantum_size": f("Float", v(func(r *rgroup) any {
			return 1.0
		})),
		"agent_count_by_status": f("Int", func(x *gqlExec, p any, a map[string]any) (any, error) {
			st, _ := argStr(a, "status")
			n := 0
			for _, ag := range p.(*rgroup).agents {
				if ag.status == st {
					n++
				}
			}
			return n, nil
		}, argDef("status", "String", "ALIVE")),
		"agent_total_resource_slots_by_status": f("JSONString", func(x *gqlExec, p any, a map[string]any) (any, error) {
			st, _ := argStr(a, "status")
			var occ, avail slotList
			for _, ag := range p.(*rgroup).agents {
				if ag.status == st {
					occ = occ.sum(agentOccupied(ag))
					avail = avail.sum(ag.capacity)
				}
			}
			return jsonString{obj{{"occupied_slots", occ.toJSON(x.d.slotTypes)}, {"available_slots", avail.toJSON(x.d.slotTypes)}}}, nil
		}, argDef("status", "String", "ALIVE")),
		"resource_allocation_limit_for_sessions": f("JSONString", v(func(r *rgroup) any { return jsonString{obj{}} })),
		"own_session_occupied_resource_slots": f("JSONString", func(x *gqlExec, p any, a map[string]any) (any, error) {
			var l slotList
			for _, s := range x.d.sessSeq {
				if s.rg == p.(*rgroup) && s.owner == x.au.user && s.status.occupying() {
					l = l.sum(x.d.occupied(s))
				}
			}
			return jsonString{l.toJSON(x.d.slotTypes)}, nil
		}),
	}
	usr := fmap{
		"id":                   f("ID", v(func(u *user) any { return u.uuid })),
		"uuid":                 f("UUID", v(func(u *user) any { return u.uuid })),
		"username":             f("String", v(func(u *user) any { return u.username })),
		"email":                f("String", v(func(u *user) any { return u.email })),
		"need_password_change": f("Boolean", v(func(u *user) any { return false })),
		"full_name":            f("String", v(func(u *user) any { return u.fullName })),
		"description":          f("String", v(func(u *user) any { return "" })),
		"is_active":            f("Boolean", v(func(u *user) any { return u.status == "active" })),
		"status":               f("String", v(func(u *user) any { return u.status })),
		"status_info":          f("String", v(func(u *user) any { return nil })),
		"created_at":           f("DateTime", v(func(u *user) any { return u.createdAt })),
		"modified_at":          f("DateTime", v(func(u *user) any { return u.createdAt })),
		"domain_name":          f("String", v(func(u *user) any { return u.domain })),
		"role":                 f("String", v(func(u *user) any { return u.role })),
		"resource_policy":      f("String", v(func(u *user) any { return "default" })),
		"allowed_client_ip":    f("[String]", v(func(u *user) any { return nil })),
		"totp_activated":       f("Boolean", v(func(u *user) any { return false })),
		"totp_activated_at":    f("DateTime", v(func(u *user) any { return nil })),
		"sudo_session_enabled": f("Boolean", v(func(u *user) any { return u.sudo })),
		"main_access_key": f("String", v(func(u *user) any {
			if u.mainAccessKey == "" {
				return nil
			}
			return u.mainAccessKey
		})),
		"container_uid":      f("Int", v(func(u *user) any { return intPtr(u.containerUID) })),
		"container_main_gid": f("Int", v(func(u *user) any { return intPtr(u.containerMainGID) })),
		"container_gids": f("[Int]", v(func(u *user) any {
			if u.containerGIDs == nil {
				return nil
			}
			return intList(u.containerGIDs)
		})),
		"groups": f("[UserGroup]", v(func(u *user) any {
			out := []any{}
			for _, p := range u.projects {
				out = append(out, p)
			}
			return out
		})),
	}
	ug := fmap{
		"id":   f("UUID", v(func(p *project) any { return p.id })),
		"name": f("String", v(func(p *project) any { return p.name })),
	}
	kpF := fmap{
		"id":              f("ID", v(func(k *keypair) any { return k.accessKey })),
		"user_id":         f("String", v(func(k *keypair) any { return k.user.email })),
		"full_name":       f("String", v(func(k *keypair) any { return k.user.fullName })),
		"access_key":      f("String", v(func(k *keypair) any { return k.accessKey })),
		"secret_key":      f("String", v(func(k *keypair) any { return k.secretKey })),
		"is_active":       f("Boolean", v(func(k *keypair) any { return k.isActive })),
		"is_admin":        f("Boolean", v(func(k *keypair) any { return k.isAdmin })),
		"resource_policy": f("String", v(func(k *keypair) any { return k.resourcePolicy })),
		"created_at":      f("DateTime", v(func(k *keypair) any { return k.createdAt })),
		"last_used":       f("DateTime", v(func(k *keypair) any { return nil })),
		"rate_limit":      f("Int", v(func(k *keypair) any { return k.rateLimit })),
		"num_queries":     f("Int", v(func(k *keypair) any { return k.numQueries })),
		"rolling_count": f("Int", func(x *gqlExec, p any, a map[string]any) (any, error) {
			if w := x.d.rl[p.(*keypair).accessKey]; w != nil {
				return len(w.ts), nil
			}
			return 0, nil
		}),
		"user": f("UUID", v(func(k *keypair) any { return k.user.uuid })),
		"projects": f("[String]", v(func(k *keypair) any {
			out := []any{}
			for _, p := range k.user.projects {
				out = append(out, p.name)
			}
			return out
		})),
		"ssh_public_key":    f("String", v(func(k *keypair) any { return nil })),
		"concurrency_used":  f("Int", v(func(k *keypair) any { return 0 })),
		"concurrency_limit": f("Int", v(func(k *keypair) any { return 0 })),
		"compute_sessions": f("[ComputeSession]", func(x *gqlExec, p any, a map[string]any) (any, error) {
			out := []any{}
			for _, s := range x.d.sessSeq {
				if s.accessKey == p.(*keypair).accessKey && !s.status.terminal() {
					out = append(out, s)
				}
			}
			return out, nil
		}, arg("status", "String")),
	}
	list := func(item string) fmap {
		return fmap{
			"items":       f("["+item+"]!", func(x *gqlExec, p any, a map[string]any) (any, error) { return p.(*pageResult).items, nil }),
			"total_count": f("Int!", func(x *gqlExec, p any, a map[string]any) (any, error) { return p.(*pageResult).total, nil }),
		}
	}
	query := fmap{
		"compute_session_list": f("ComputeSessionList", resolveSessionList,
			arg("limit", "Int!"), arg("offset", "Int!"), arg("filter", "String"), arg("order", "String"),
			arg("domain_name", "String"), arg("group_id", "String"), arg("access_key", "String"), arg("status", "String")),
		"compute_session": f("ComputeSession", resolveSession, arg("id", "UUID!")),
		"agent_list": f("AgentList", resolveAgentList, arg("limit", "Int!"), arg("offset", "Int!"), arg("filter", "String"),
			arg("order", "String"), arg("scaling_group", "String"), arg("status", "String")),
		"agents":         f("[Agent]", resolveAgents, arg("scaling_group", "String"), arg("status", "String")),
		"agent":          f("Agent", resolveAgent, arg("agent_id", "String!")),
		"scaling_groups": f("[ScalingGroup]", resolveScalingGroups, arg("name", "String"), arg("is_active", "Boolean")),
		"scaling_group":  f("ScalingGroup", resolveScalingGroup, arg("name", "String")),
		"users": f("[User]", resolveUsers, arg("domain_name", "String"), arg("group_id", "UUID"),
			arg("is_active", "Boolean"), arg("status", "String")),
		"user_list": f("UserList", resolveUserList, arg("limit", "Int!"), arg("offset", "Int!"), arg("filter", "String"),
			arg("order", "String"), arg("domain_name", "String"), arg("group_id", "UUID"), arg("is_active", "Boolean"),
			arg("status", "String")),
		"user":     f("User", resolveUser, arg("domain_name", "String"), arg("email", "String")),
		"keypairs": f("[KeyPair]", resolveKeypairs, arg("domain_name", "String"), arg("email", "String"), arg("is_active", "Boolean")),
		"keypair":  f("KeyPair", resolveKeypair, arg("domain_name", "String"), arg("access_key", "String")),
		// image(id, reference, architecture): Image.load_item resolves the
		// reference as session creation does (canonical name, then alias).
		"image":  f("Image", resolveImageQuery, arg("id", "String"), arg("reference", "String"), argDef("architecture", "String", "x86_64")),
		"images": f("[Image]", resolveImages, arg("is_installed", "Boolean"), arg("is_operation", "Boolean")),
	}
	imgF := fmap{
		"id":           f("UUID", v(func(i *image) any { return i.id })),
		"name":         f("String", v(func(i *image) any { return imageParts(i.name)[1] })),
		"namespace":    f("String", v(func(i *image) any { return imageParts(i.name)[1] })),
		"registry":     f("String", v(func(i *image) any { return imageParts(i.name)[0] })),
		"tag":          f("String", v(func(i *image) any { return imageParts(i.name)[2] })),
		"architecture": f("String", v(func(i *image) any { return i.arch })),
		"is_local":     f("Boolean", v(func(i *image) any { return i.isLocal })),
		"aliases":      f("[String]", v(func(i *image) any { return strList(i.aliases) })),
		"status":       f("String", v(func(i *image) any { return "ALIVE" })),
		"installed":    f("Boolean", v(func(i *image) any { return true })),
		"digest":       f("String", v(func(i *image) any { return "sha256:" + strings.Repeat("0", 64) })),
		// ImageNode.resource_limits: the minimum of each slot the image
		// requires (gql_legacy/image.py: max is Infinity since 25.14).
		"resource_limits": f("[ResourceLimit]", func(x *gqlExec, p any, _ map[string]any) (any, error) {
			im := p.(*image)
			out := make([]any, 0, len(im.minSlots))
			for _, q := range im.minSlots {
				out = append(out, &resLimit{key: q.name, min: fmtQty(q.name, q.q, x.d.slotTypes), max: "Infinity"})
			}
			return out, nil
		}),
	}
	rlF := fmap{
		"key": f("String", v(func(r *resLimit) any { return r.key })),
		"min": f("String", v(func(r *resLimit) any { return r.min })),
		"max": f("String", v(func(r *resLimit) any { return r.max })),
	}
	// Group: the legacy project type (models/gql_models/group.py).
	grp := fmap{
		"id":                    f("UUID", v(func(p *project) any { return p.id })),
		"name":                  f("String", v(func(p *project) any { return p.name })),
		"description":           f("String", v(func(p *project) any { return "" })),
		"is_active":             f("Boolean", v(func(p *project) any { return p.active })),
		"created_at":            f("DateTime", v(func(p *project) any { return p.createdAt })),
		"modified_at":           f("DateTime", v(func(p *project) any { return p.createdAt })),
		"domain_name":           f("String", v(func(p *project) any { return p.domain })),
		"total_resource_slots":  f("JSONString", v(func(p *project) any { return jsonString{map[string]any{}} })),
		"allowed_vfolder_hosts": f("JSONString", v(func(p *project) any { return jsonString{map[string]any{}} })),
		"integration_id":        f("String", v(func(p *project) any { return nil })),
		"resource_policy":       f("String", v(func(p *project) any { return "default" })),
		"type":                  f("String", v(func(p *project) any { return "GENERAL" })),
		"container_registry":    f("JSONString", v(func(p *project) any { return nil })),
		"scaling_groups": f("[String]", v(func(p *project) any {
			out := []any{}
			for _, rg := range p.rgs {
				out = append(out, rg)
			}
			return out
		})),
	}
	query["groups"] = f("[Group]", resolveGroups, arg("domain_name", "String"), arg("is_active", "Boolean"), arg("type", "[String]"))
	query["groups_by_name"] = f("[Group]", resolveGroupsByName, arg("name", "String!"), arg("domain_name", "String"))
	types := map[string]fmap{"Query": query, "Group": grp, "ComputeSession": sess, "ComputeContainer": kern, "Agent": agentF,
		"ScalingGroup": sg, "User": usr, "UserGroup": ug, "KeyPair": kpF, "ComputeSessionList": list("ComputeSession"),
		"AgentList": list("Agent"), "UserList": list("User"), "Image": imgF, "ResourceLimit": rlF}
	out := map[string]*gType{}
	for n, fs := range types {
		out[n] = &gType{name: n, fields: fs}
	}
	return out
}

type pageResult struct {
	items []any
	total int
}

func strList(xs []string) any {
	if xs == nil {
		return nil
	}
	out := make([]any, len(xs))
	for i, x := range xs {
		out[i] = x
	}
	return out
}

func intList(xs []int) any {
	out := make([]any, len(xs))
	for i, x := range xs {
		out[i] = x
	}
	return out
}

func intPtr(p *int) any {
	if p == nil {
		return nil
	}
	return *p
}

func (x *gqlExec) hideAgents() bool { return x.d.opts.HideAgents && x.au.user.role != "superadmin" }

func agentOccupied(a *agent) slotList {
	var l slotList
	for _, c := range a.capacity {
		l = append(l, slotQ{c.name, a.used[c.name]})
	}
	return l
}

func (d *Double) kernelsSorted() []*kernel {
	var out []*kernel
	for _, s := range d.sessSeq {
		out = append(out, s.kernels...)
	}
	return out
}

func (r *rgroup) schedulerOpts() obj {
	types := r.allowedTypes
	if types == nil {
		types = []string{"interactive", "batch", "inference"}
	}
	return obj{{"allowed_session_types", types}, {"pending_timeout", r.pendingTimeout.Seconds()},
		{"config", obj{}}, {"agent_selection_strategy", r.selection},
		{"agent_selection_resource_priority", []string{"cuda", "rocm", "tpu", "cpu", "mem"}},
		{"enforce_spreading_endpoint_replica", false}, {"allow_fractional_resource_fragmentation", true},
		{"route_cleanup_target_statuses", []string{"unhealthy"}},
		{"preemption", obj{{"enabled", r.preempt.Enabled}, {"preemptible_priority", 5}, {"order", r.preempt.Order},
			{"mode", r.preempt.Mode}, {"preemption_min_runtime", r.preempt.MinRuntime.Seconds()},
			{"victim_scope", r.preempt.VictimScope}}}}
}

// scopedQuery is gql_legacy/base.py scoped_query.
func (x *gqlExec) scopedQuery(a map[string]any, userKey string, autofill bool) (domain *string, user *string, err error) {
	role := x.au.user.role
	var clientUser string
	switch userKey {
	case "access_key":
		clientUser = x.au.kp.accessKey
	case "email":
		clientUser = x.au.user.email
	default:
		clientUser = x.au.user.uuid
	}
	if s, ok := argStr(a, "domain_name"); ok {
		domain = &s
	}
	if s, ok := argStr(a, userKey); ok {
		user = &s
	}
	switch role {
	case "superadmin":
		if autofill && user == nil {
			user = &clientUser
		}
	case "admin":
		if domain != nil && *domain != x.au.user.domain {
			return nil, nil, gqlForbidden("")
		}
		dn := x.au.user.domain
		domain = &dn
		if autofill && user == nil {
			user = &clientUser
		}
	case "user":
		if domain != nil && *domain != x.au.user.domain {
			return nil, nil, gqlForbidden("")
		}
		dn := x.au.user.domain
		domain = &dn
		if user != nil && *user != clientUser {
			return nil, nil, gqlForbidden("")
		}
		user = &clientUser
	default:
		return nil, nil, errors.New("Missing or invalid API parameters. (Unknown client role)")
	}
	return domain, user, nil
}

func sessionFields(d *Double) map[string]*mlField {
	enumOf := func(names []string) func(string) (string, bool) {
		return func(s string) (string, bool) {
			for _, n := range names {
				if strings.EqualFold(n, s) {
					return n, true
				}
			}
			return "", false
		}
	}
	str := func(g func(*session) any) *mlField {
		return &mlField{kind: mlStr, get: func(r any) any { return g(r.(*session)) }}
	}
	tm := func(g func(*session) time.Time) *mlField {
		return &mlField{kind: mlTime, get: func(r any) any {
			t := g(r.(*session))
			if t.IsZero() {
				return nil
			}
			return t
		}}
	}
	agentsF := &mlField{kind: mlArray, get: func(r any) any { return r.(*session).agentIDs }}
	return map[string]*mlField{
		"id":   str(func(s *session) any { return s.id }),
		"type": {kind: mlEnum, enum: enumOf([]string{"INTERACTIVE", "BATCH", "INFERENCE", "SYSTEM"}), get: func(r any) any { return r.(*session).typ }},
		"name": str(func(s *session) any { return s.name }),
		"priority": {kind: mlNum, get: func(r any) any {
			return float64(r.(*session).priority)
		}},
		"image":         {kind: mlArray, get: func(r any) any { return []string{r.(*session).image.name} }},
		"agent_ids":     agentsF,
		"agent_id":      agentsF,
		"agents":        agentsF,
		"domain_name":   str(func(s *session) any { return s.domain }),
		"group_name":    str(func(s *session) any { return s.project.name }),
		"user_email":    str(func(s *session) any { return s.owner.email }),
		"user_id":       str(func(s *session) any { return s.owner.uuid }),
		"full_name":     str(func(s *session) any { return s.owner.fullName }),
		"access_key":    str(func(s *session) any { return s.accessKey }),
		"scaling_group": str(func(s *session) any { return s.rg.name }),
		"cluster_mode": {kind: mlEnum, enum: func(s string) (string, bool) {
			switch strings.ToLower(s) {
			case "single-node", "single_node":
				return "single-node", true
			case "multi-node", "multi_node":
				return "multi-node", true
			}
			return "", false
		}, get: func(r any) any { return r.(*session).clusterMode }},
		"cluster_size": {kind: mlNum, get: func(r any) any { return float64(r.(*session).clusterSize) }},
		"status": {kind: mlEnum, enum: func(s string) (string, bool) {
			st, ok := ParseStatus(s)
			if !ok || st == StBuilding || st == StResizing || st == StSuspended {
				return "", false
			}
			return st.String(), true
		}, get: func(r any) any { return r.(*session).status.String() }},
		"status_info": str(func(s *session) any { return strOrNil(s.statusInfo) }),
		"result": {kind: mlEnum, enum: enumOf([]string{"UNDEFINED", "SUCCESS", "FAILURE"}), get: func(r any) any {
			return r.(*session).result.String()
		}},
		"created_at":    tm(func(s *session) time.Time { return s.createdAt }),
		"terminated_at": tm(func(s *session) time.Time { return s.termAt }),
		"starts_at":     tm(func(s *session) time.Time { return s.startsAt }),
		"scheduled_at": tm(func(s *session) time.Time {
			t, _ := s.hist.get(StScheduled)
			return t
		}),
		"startup_command": str(func(s *session) any { return strOrNil(s.startupCommand) }),
	}
}

func parseStatusCSV(s string, kernel bool) ([]Status, error) {
	var out []Status
	for _, part := range strings.Split(s, ",") {
		st, ok := parseStatusKey(part, kernel)
		if !ok {
			return nil, fmt.Errorf("%s", pyStrRepr(part)) // KeyError
		}
		out = append(out, st)
	}
	return out, nil
}

func resolveSessionList(x *gqlExec, _ any, a map[string]any) (any, error) {
	dom, ak, err := x.scopedQuery(a, "access_key", false)
	if err != nil {
		return nil, err
	}
	var statuses []Status
	if s, ok := argStr(a, "status"); ok {
		if statuses, err = parseStatusCSV(s, false); err != nil {
			return nil, err
		}
	}
	var gid *string
	if s, ok := argStr(a, "group_id"); ok {
		c, okU := canonUUID(s)
		if !okU {
			return nil, fmt.Errorf("(sqlalchemy.dialects.postgresql.asyncpg.Error) invalid input for query argument $1: %s (invalid UUID %s)", pyStrRepr(s), pyStrRepr(s))
		}
		gid = &c
	}
	fields := sessionFields(x.d)
	var filter mlExpr
	if s, ok := argStr(a, "filter"); ok {
		e, perr := parseFilter(s, fields)
		if perr != "" {
			return nil, errors.New(perr)
		}
		filter = e
	}
	var order []mlOrder
	if s, ok := argStr(a, "order"); ok {
		o, perr := parseOrder(s, fields)
		if perr != "" {
			return nil, errors.New(perr)
		}
		order = o
	}
	var rows []any
	for _, s := range x.d.sessSeq {
		if dom != nil && s.domain != *dom {
			continue
		}
		if gid != nil && s.project.id != *gid {
			continue
		}
		if ak != nil && s.accessKey != *ak {
			continue
		}
		if statuses != nil {
			found := false
			for _, st := range statuses {
				if s.status == st {
					found = true
				}
			}
			if !found {
				continue
			}
		}
		if filter != nil && !filter.eval(s) {
			continue
		}
		rows = append(rows, s)
	}
	if order != nil {
		sortRows(rows, order)
	} else {
		// DEFAULT_SESSION_ORDERING: greatest(created_at, terminated_at) desc
		sort.SliceStable(rows, func(i, j int) bool {
			return greatest(rows[i].(*session)).After(greatest(rows[j].(*session)))
		})
	}
	return page(rows, argInt(a, "limit"), argInt(a, "offset")), nil
}

func greatest(s *session) time.Time {
	if s.termAt.After(s.createdAt) {
		return s.termAt
	}
	return s.createdAt
}

func page(rows []any, limit, offset int) *pageResult {
	total := len(rows)
	if offset < 0 {
		offset = 0
	}
	if offset > len(rows) {
		offset = len(rows)
	}
	rows = rows[offset:]
	if limit >= 0 && limit < len(rows) {
		rows = rows[:limit]
	}
	if rows == nil {
		rows = []any{}
	}
	return &pageResult{items: rows, total: total}
}

func resolveSession(x *gqlExec, _ any, a map[string]any) (any, error) {
	dom, ak, err := x.scopedQuery(a, "access_key", false)
	if err != nil {
		return nil, err
	}
	id, _ := argStr(a, "id")
	cid, _ := canonUUID(id)
	s := x.d.sessions[cid]
	if s == nil || (dom != nil && s.domain != *dom) || (ak != nil && s.accessKey != *ak) {
		return nil, nil
	}
	return s, nil
}

func superOnly(x *gqlExec) error {
	if x.au.user.role != "superadmin" {
		return gqlForbidden("superadmin privilege required")
	}
	return nil
}

var agentStatusNames = []string{"ALIVE", "LOST", "RESTARTING", "TERMINATED"}

func agentStatusKey(s string) (string, bool) {
	for _, n := range agentStatusNames {
		if n == s {
			return n, true
		}
	}
	return "", false
}

func agentRank(st string) int {
	for i, n := range agentStatusNames {
		if n == st {
			return i
		}
	}
	return 9
}

func agentFields() map[string]*mlField {
	str := func(g func(*agent) any) *mlField {
		return &mlField{kind: mlStr, get: func(r any) any { return g(r.(*agent)) }}
	}
	return map[string]*mlField{
		"id": str(func(a *agent) any { return a.id }),
		"status": {kind: mlEnum, enum: func(s string) (string, bool) {
			for _, n := range agentStatusNames {
				if strings.EqualFold(n, s) {
					return n, true
				}
			}
			return "", false
		}, get: func(r any) any { return r.(*agent).status }},
		"status_changed": {kind: mlTime, get: func(r any) any { return r.(*agent).statusChanged }},
		"region":         str(func(a *agent) any { return a.region }),
		"scaling_group":  str(func(a *agent) any { return a.rg.name }),
		"schedulable":    {kind: mlBool, get: func(r any) any { return r.(*agent).schedulable }},
		"addr":           str(func(a *agent) any { return a.addr }),
		"first_contact":  {kind: mlTime, get: func(r any) any { return r.(*agent).firstContact }},
		"lost_at": {kind: mlTime, get: func(r any) any {
			return timeOrNil(r.(*agent).lostAt)
		}},
		"version": str(func(a *agent) any { return a.version }),
	}
}

func resolveAgentList(x *gqlExec, _ any, a map[string]any) (any, error) {
	if err := superOnly(x); err != nil {
		return nil, err
	}
	var statuses []string
	if s, ok := argStr(a, "status"); ok {
		for _, part := range strings.Split(s, ",") {
			n, okS := agentStatusKey(part)
			if !okS {
				return nil, fmt.Errorf("%s", pyStrRepr(part))
			}
			statuses = append(statuses, n)
		}
	}
	fields := agentFields()
	var filter mlExpr
	if s, ok := argStr(a, "filter"); ok {
		e, perr := parseFilter(s, fields)
		if perr != "" {
			return nil, errors.New(perr)
		}
		filter = e
	}
	sgName, hasSG := argStr(a, "scaling_group")
	var rows []any
	for _, ag := range x.d.agentList {
		if hasSG && ag.rg.name != sgName {
			continue
		}
		if statuses != nil && !containsStr(statuses, ag.status) {
			continue
		}
		if filter != nil && !filter.eval(ag) {
			continue
		}
		rows = append(rows, ag)
	}
	if s, ok := argStr(a, "order"); ok {
		o, perr := parseOrder(s, fields)
		if perr != "" {
			return nil, errors.New(perr)
		}
		sortRows(rows, o)
	} else {
		sort.SliceStable(rows, func(i, j int) bool {
			ai, aj := rows[i].(*agent), rows[j].(*agent)
			if agentRank(ai.status) != agentRank(aj.status) {
				return agentRank(ai.status) < agentRank(aj.status)
			}
			if ai.rg.name != aj.rg.name {
				return ai.rg.name < aj.rg.name
			}
			return ai.id < aj.id
		})
	}
	return page(rows, argInt(a, "limit"), argInt(a, "offset")), nil
}

func resolveAgents(x *gqlExec, _ any, a map[string]any) (any, error) {
	if err := superOnly(x); err != nil {
		return nil, err
	}
	var status string
	if s, ok := argStr(a, "status"); ok {
		n, okS := agentStatusKey(s) // AgentStatus[raw_status]: no CSV here
		if !okS {
			return nil, fmt.Errorf("%s", pyStrRepr(s))
		}
		status = n
	}
	sgName, hasSG := argStr(a, "scaling_group")
	out := []any{}
	for _, ag := range x.d.agentList {
		if hasSG && ag.rg.name != sgName {
			continue
		}
		if status != "" && ag.status != status {
			continue
		}
		out = append(out, ag)
	}
	return out, nil
}

func resolveAgent(x *gqlExec, _ any, a map[string]any) (any, error) {
	if err := superOnly(x); err != nil {
		return nil, err
	}
	id, _ := argStr(a, "agent_id")
	if ag := x.d.agents[id]; ag != nil {
		return ag, nil
	}
	return nil, nil
}

func resolveScalingGroups(x *gqlExec, _ any, a map[string]any) (any, error) {
	if err := superOnly(x); err != nil {
		return nil, err
	}
	if _, ok := a["name"]; ok {
		// the resolver has no `name` parameter although the schema
		// declares it (source quirk)
		return nil, errors.New("resolve_scaling_groups() got an unexpected keyword argument 'name'")
	}
	out := []any{}
	active, hasActive := a["is_active"].(bool)
	for _, rg := range x.d.rgOrder {
		if hasActive && rg.active != active {
			continue
		}
		out = append(out, rg)
	}
	return out, nil
}

func resolveImageQuery(x *gqlExec, _ any, a map[string]any) (any, error) {
	arch, _ := argStr(a, "architecture")
	if id, ok := argStr(a, "id"); ok && id != "" {
		for _, im := range x.d.images {
			if im.id == id {
				return im, nil
			}
		}
		return nil, nil
	}
	// By canonical reference only: aliases are resolved by session
	// creation, not by this query.
	ref, _ := argStr(a, "reference")
	for _, im := range x.d.images {
		if im.name == ref && im.arch == arch {
			return im, nil
		}
	}
	return nil, nil
}

func resolveImages(x *gqlExec, _ any, _ map[string]any) (any, error) {
	out := make([]any, 0, len(x.d.images))
	for _, im := range x.d.images {
		out = append(out, im)
	}
	return out, nil
}

// imageParts splits "registry/namespace:tag".
func imageParts(name string) [3]string {
	reg, rest, ok := strings.Cut(name, "/")
	if !ok {
		reg, rest = "", name
	}
	ns, tag, _ := strings.Cut(rest, ":")
	return [3]string{reg, ns, tag}
}

func resolveScalingGroup(x *gqlExec, _ any, a map[string]any) (any, error) {
	name, _ := argStr(a, "name")
	if rg := x.d.rgs[name]; rg != nil {
		return rg, nil
	}
	return nil, nil
}

// resolveGroups is Queries.resolve_groups: a superadmin sees the given
// domain's (or every) GENERAL project, an admin its own domain's, a user
// the projects it is a member of.
func resolveGroups(x *gqlExec, _ any, a map[string]any) (any, error) {
	active, hasActive := a["is_active"].(bool)
	out := []any{}
	keep := func(p *project) bool { return !hasActive || p.active == active }
	switch x.au.user.role {
	case "user":
		for _, p := range x.au.user.projects {
			if keep(p) {
				out = append(out, p)
			}
		}
		return out, nil
	case "superadmin", "admin":
	default:
		return nil, errors.New("Missing or invalid API parameters. (Unknown client role)")
	}
	dom, err := x.userScope(a)
	if err != nil {
		return nil, err
	}
	for _, p := range x.d.sortedProjects() {
		if (dom == nil || p.domain == *dom) && keep(p) {
			out = append(out, p)
		}
	}
	return out, nil
}

// resolveGroupsByName is Queries.resolve_groups_by_name.
func resolveGroupsByName(x *gqlExec, _ any, a map[string]any) (any, error) {
	name, _ := argStr(a, "name")
	var dom *string
	switch x.au.user.role {
	case "superadmin":
		if s, ok := argStr(a, "domain_name"); ok {
			dom = &s
		}
	case "admin", "user":
		if s, ok := argStr(a, "domain_name"); ok && s != x.au.user.domain {
			return nil, errors.New("Insufficient privilege.")
		}
		d := x.au.user.domain
		dom = &d
	default:
		return nil, errors.New("Missing or invalid API parameters. (Unknown client role)")
	}
	out := []any{}
	for _, p := range x.d.sortedProjects() {
		if p.name != name || (dom != nil && p.domain != *dom) {
			continue
		}
		if x.au.user.role == "user" && !memberOf(x.au.user, p) {
			continue
		}
		out = append(out, p)
	}
	return out, nil
}

func memberOf(u *user, p *project) bool {
	for _, q := range u.projects {
		if q == p {
			return true
		}
	}
	return false
}

func (x *gqlExec) userScope(a map[string]any) (*string, error) {
	switch x.au.user.role {
	case "superadmin":
		if s, ok := argStr(a, "domain_name"); ok {
			return &s, nil
		}
		return nil, nil
	case "admin":
		if s, ok := argStr(a, "domain_name"); ok && s != x.au.user.domain {
			return nil, errors.New("Insufficient privilege.")
		}
		d := x.au.user.domain
		return &d, nil
	case "user":
		return nil, errors.New("Insufficient privilege.")
	}
	return nil, errors.New("Missing or invalid API parameters. (Unknown client role)")
}

func userFields() map[string]*mlField {
	str := func(g func(*user) any) *mlField {
		return &mlField{kind: mlStr, get: func(r any) any { return g(r.(*user)) }}
	}
	return map[string]*mlField{
		"uuid":                 str(func(u *user) any { return u.uuid }),
		"username":             str(func(u *user) any { return u.username }),
		"email":                str(func(u *user) any { return u.email }),
		"need_password_change": {kind: mlBool, get: func(r any) any { return false }},
		"full_name":            str(func(u *user) any { return u.fullName }),
		"description":          str(func(u *user) any { return "" }),
		"is_active":            {kind: mlBool, get: func(r any) any { return r.(*user).status == "active" }},
		"status": {kind: mlEnum, enum: func(s string) (string, bool) {
			for _, n := range []string{"active", "inactive", "deleted", "before-verification"} {
				if n == s || strings.EqualFold(strings.ReplaceAll(n, "-", "_"), s) {
					return n, true
				}
			}
			return "", false
		}, get: func(r any) any { return r.(*user).status }},
		"status_info": str(func(u *user) any { return nil }),
		"created_at":  {kind: mlTime, get: func(r any) any { return r.(*user).createdAt }},
		"modified_at": {kind: mlTime, get: func(r any) any { return r.(*user).createdAt }},
		"domain_name": str(func(u *user) any { return u.domain }),
		"role": {kind: mlEnum, enum: func(s string) (string, bool) {
			for _, n := range []string{"superadmin", "admin", "user", "monitor"} {
				if strings.EqualFold(n, s) {
					return n, true
				}
			}
			return "", false
		}, get: func(r any) any { return r.(*user).role }},
		"resource_policy":      str(func(u *user) any { return "default" }),
		"allowed_client_ip":    str(func(u *user) any { return nil }),
		"totp_activated":       {kind: mlBool, get: func(r any) any { return false }},
		"totp_activated_at":    {kind: mlTime, get: func(r any) any { return nil }},
		"sudo_session_enabled": {kind: mlBool, get: func(r any) any { return r.(*user).sudo }},
		"main_access_key":      str(func(u *user) any { return u.mainAccessKey }),
	}
}

func (x *gqlExec) usersMatching(a map[string]any, dom *string) []any {
	var gid string
	if s, ok := argStr(a, "group_id"); ok {
		gid, _ = canonUUID(s)
	}
	status, hasStatus := argStr(a, "status")
	active, hasActive := a["is_active"].(bool)
	us := make([]*user, 0, len(x.d.users))
	for _, u := range x.d.users {
		us = append(us, u)
	}
	sort.Slice(us, func(i, j int) bool {
		if !us[i].createdAt.Equal(us[j].createdAt) {
			return us[i].createdAt.Before(us[j].createdAt)
		}
		return us[i].email < us[j].email
	})
	var out []any
	for _, u := range us {
		if dom != nil && u.domain != *dom {
			continue
		}
		if gid != "" {
			member := false
			for _, p := range u.projects {
				if p.id == gid {
					member = true
				}
			}
			if !member {
				continue
			}
		}
		if hasStatus {
			if u.status != status {
				continue
			}
		} else if hasActive && (u.status == "active") != active {
			continue
		}
		out = append(out, u)
	}
	return out
}

func resolveUsers(x *gqlExec, _ any, a map[string]any) (any, error) {
	dom, err := x.userScope(a)
	if err != nil {
		return nil, err
	}
	rows := x.usersMatching(a, dom)
	if len(rows) > 100 {
		rows = rows[:100]
	}
	if rows == nil {
		rows = []any{}
	}
	return rows, nil
}

func resolveUserList(x *gqlExec, _ any, a map[string]any) (any, error) {
	dom, err := x.userScope(a)
	if err != nil {
		return nil, err
	}
	rows := x.usersMatching(a, dom)
	fields := userFields()
	if s, ok := argStr(a, "filter"); ok {
		e, perr := parseFilter(s, fields)
		if perr != "" {
			return nil, errors.New(perr)
		}
		var kept []any
		for _, r := range rows {
			if e.eval(r) {
				kept = append(kept, r)
			}
		}
		rows = kept
	}
	if s, ok := argStr(a, "order"); ok {
		o, perr := parseOrder(s, fields)
		if perr != "" {
			return nil, errors.New(perr)
		}
		sortRows(rows, o)
	}
	return page(rows, argInt(a, "limit"), argInt(a, "offset")), nil
}

func resolveUser(x *gqlExec, _ any, a map[string]any) (any, error) {
	dom, email, err := x.scopedQuery(a, "email", true)
	if err != nil {
		return nil, err
	}
	if email == nil {
		return nil, nil
	}
	u := x.d.byEmail[*email]
	if u == nil || (dom != nil && u.domain != *dom) {
		return nil, nil
	}
	return u, nil
}

func resolveKeypairs(x *gqlExec, _ any, a map[string]any) (any, error) {
	dom, email, err := x.scopedQuery(a, "email", false)
	if err != nil {
		return nil, err
	}
	active, hasActive := a["is_active"].(bool)
	kps := make([]*keypair, 0, len(x.d.keypairs))
	for _, k := range x.d.keypairs {
		kps = append(kps, k)
	}
	sort.Slice(kps, func(i, j int) bool {
		return kps[i].createdAt.Before(kps[j].createdAt) || (kps[i].createdAt.Equal(kps[j].createdAt) && kps[i].accessKey < kps[j].accessKey)
	})
	out := []any{}
	for _, k := range kps {
		if dom != nil && k.user.domain != *dom {
			continue
		}
		if email != nil && k.user.email != *email {
			continue
		}
		if hasActive && k.isActive != active {
			continue
		}
		out = append(out, k)
		if email == nil && len(out) >= 100 {
			break
		}
	}
	return out, nil
}

func resolveKeypair(x *gqlExec, _ any, a map[string]any) (any, error) {
	dom, ak, err := x.scopedQuery(a, "access_key", true)
	if err != nil {
		return nil, err
	}
	if ak == nil {
		return nil, nil
	}
	k := x.d.keypairs[*ak]
	if k == nil || (dom != nil && k.user.domain != *dom) {
		return nil, nil
	}
	return k, nil
}

// resLimit is a ResourceLimit (gql_legacy/base.py): key, min, max.
type resLimit struct{ key, min, max string }
