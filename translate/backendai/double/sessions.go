package double

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"
)

// v1 session REST API: api/rest/session/handler.py, services/session/
// service.py, registry.py create_session of 26.8.1.

type createParams struct {
	name, image, arch, typ, group, domain, clusterMode string
	archSet                                            bool
	priority, jobPriority, clusterSize, maxWait        int
	preemptible, enqueueOnly, reuse                    bool
	config                                             map[string]any
	tag, startsAt, startupCommand, bootstrap, callback *string
	batchTimeout                                       *int
	deps                                               []string
	ownerAK                                            *string
}

var sessionTypes = []string{"interactive", "batch", "inference", "system"}

func parseCreate(m map[string]any) (*createParams, *problem) {
	p := &createParams{priority: 10, clusterSize: 1, preemptible: true, reuse: true, typ: "interactive",
		group: "default", domain: "default", clusterMode: "single-node", config: map[string]any{}}
	var fe fieldErrs
	str := func(loc string, keys ...string) (*string, bool) {
		v, _, ok := alias(m, keys...)
		if !ok {
			return nil, false
		}
		if v == nil {
			return nil, true
		}
		s, isStr := asStr(v)
		if !isStr {
			fe.add(loc, "string_type", "Input should be a valid string", v)
			return nil, true
		}
		return &s, true
	}
	intf := func(loc string, dst *int, min, max *int, keys ...string) {
		v, _, ok := alias(m, keys...)
		if !ok {
			return
		}
		i, code := asInt(v)
		if code != "" {
			fe.add(loc, code, intMsg(code), v)
			return
		}
		if min != nil && int(i) < *min {
			fe.add(loc, "greater_than_equal", fmt.Sprintf("Input should be greater than or equal to %d", *min), v)
			return
		}
		if max != nil && int(i) > *max {
			fe.add(loc, "less_than_equal", fmt.Sprintf("Input should be less than or equal to %d", *max), v)
			return
		}
		*dst = int(i)
	}
	boolf := func(loc string, dst *bool, keys ...string) {
		v, _, ok := alias(m, keys...)
		if !ok {
			return
		}
		b, ok := asBool(v)
		if !ok {
			fe.add(loc, "bool_parsing", "Input should be a valid boolean", v)
			return
		}
		*dst = b
	}
	zero, hundred, one := 0, 100, 1
	if s, ok := str("session_name", "session_name", "name", "clientSessionToken"); !ok || s == nil {
		if !ok {
			fe.add("session_name", "missing", "Field required", m)
		} else {
			fe.add("session_name", "string_type", "Input should be a valid string", nil)
		}
	} else {
		p.name = *s
	}
	intf("priority", &p.priority, &zero, &hundred, "priority")
	intf("job_priority", &p.jobPriority, nil, nil, "job_priority")
	boolf("is_preemptible", &p.preemptible, "is_preemptible")
	if s, ok := str("image", "image", "lang"); !ok || s == nil {
		if !ok {
			fe.add("image", "missing", "Field required", m)
		}
	} else {
		p.image = *s
	}
	if s, _ := str("architecture", "architecture", "arch"); s != nil {
		p.arch, p.archSet = *s, true
	}
	if v, _, ok := alias(m, "session_type", "type", "sessionType"); ok {
		s, isStr := v.(string)
		found := false
		if isStr {
			for _, t := range sessionTypes {
				if strings.EqualFold(t, s) {
					p.typ, found = t, true
				}
			}
		}
		if !found {
			fe.add("session_type", "enum", "Input should be 'interactive', 'batch', 'inference' or 'system'", v)
		}
	}
	if s, ok := str("group", "group", "groupName", "group_name"); ok && s != nil {
		p.group = *s
	}
	if s, ok := str("domain", "domain", "domainName", "domain_name"); ok && s != nil {
		p.domain = *s
	}
	intf("cluster_size", &p.clusterSize, &one, nil, "cluster_size", "clusterSize")
	if v, _, ok := alias(m, "cluster_mode", "clusterMode"); ok {
		s, isStr := v.(string)
		switch strings.ToLower(s) {
		case "single-node", "single_node":
			p.clusterMode = "single-node"
		case "multi-node", "multi_node":
			p.clusterMode = "multi-node"
		default:
			if isStr || v != nil {
				fe.add("cluster_mode", "enum", "Input should be 'single-node' or 'multi-node'", v)
			}
		}
	}
	if v, ok := m["config"]; ok {
		c, isMap := v.(map[string]any)
		if !isMap {
			fe.add("config", "dict_type", "Input should be a valid dictionary", v)
		} else {
			p.config = c
		}
	}
	p.tag, _ = str("tag", "tag")
	boolf("enqueue_only", &p.enqueueOnly, "enqueue_only", "enqueueOnly")
	intf("max_wait_seconds", &p.maxWait, &zero, nil, "max_wait_seconds", "maxWaitSeconds")
	p.startsAt, _ = str("starts_at", "starts_at", "startsAt")
	if v, _, ok := alias(m, "batch_timeout", "batchTimeout"); ok && v != nil {
		n, msg := timeoutSeconds(v)
		if msg != "" {
			fe.add("batch_timeout", "value_error", "Value error, "+msg, v)
		} else {
			p.batchTimeout = &n
		}
	}
	boolf("reuse", &p.reuse, "reuse", "reuseIfExists")
	p.startupCommand, _ = str("startup_command", "startup_command", "startupCommand")
	p.bootstrap, _ = str("bootstrap_script", "bootstrap_script", "bootstrapScript")
	if v, ok := m["dependencies"]; ok && v != nil {
		l, isList := v.([]any)
		if !isList {
			fe.add("dependencies", "list_type", "Input should be a valid list", v)
		} else {
			for i, e := range l {
				s, isStr := e.(string)
				if !isStr {
					fe.add(fmt.Sprintf("dependencies.%d.uuid", i), "uuid_type", "UUID input should be a string, bytes or UUID object", e)
					continue
				}
				p.deps = append(p.deps, s)
			}
		}
	}
	p.callback, _ = str("callback_url", "callback_url", "callbackUrl", "callbackURL")
	p.ownerAK, _ = str("owner_access_key", "owner_access_key")
	if len(fe) > 0 {
		return nil, validationProblem("CreateFromParamsRequest", fe)
	}
	return p, nil
}

// timeoutSeconds is TimeoutSeconds (dto/manager/session/types.py).
func timeoutSeconds(v any) (int, string) {
	switch x := v.(type) {
	case json.Number:
		f, err := strconv.ParseFloat(string(x), 64)
		if err != nil {
			return 0, "value must be a number or string"
		}
		if int(f) < 0 {
			return 0, "value must be positive"
		}
		return int(f), ""
	case string:
		if x == "" {
			return 0, "value must not be empty"
		}
		unit := x[len(x)-1]
		if unit >= '0' && unit <= '9' {
			f, err := strconv.ParseFloat(strings.TrimSpace(x), 64)
			if err != nil {
				return 0, "invalid numeric literal: " + x
			}
			if int(f) < 0 {
				return 0, "value must be positive"
			}
			return int(f), ""
		}
		if len(x) >= 2 && isAlpha(x[len(x)-2]) && isAlpha(unit) {
			suf := x[len(x)-2:]
			if suf == "yr" || suf == "mo" {
				return 0, fmt.Sprintf("duration unit '%s' is not supported for timeout seconds", suf)
			}
			return 0, "unknown duration unit: " + pyStrRepr(suf)
		}
		t, err := strconv.ParseFloat(strings.TrimSpace(x[:len(x)-1]), 64)
		if err != nil {
			return 0, "invalid numeric literal: " + pyStrRepr(x[:len(x)-1])
		}
		if t < 0 {
			return 0, "value must be positive"
		}
		switch unit {
		case 'w':
			return int(t * 7 * 24 * 3600), ""
		case 'd':
			return int(t * 24 * 3600), ""
		case 'h':
			return int(t * 3600), ""
		case 'm':
			return int(t * 60), ""
		case 's':
			return int(t), ""
		}
		return 0, "unknown duration unit: " + pyStrRepr(string(unit))
	case bool:
		if x {
			return 1, ""
		}
		return 0, ""
	}
	return 0, "value must be a number or string"
}

func isAlpha(c byte) bool { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') }

// creationConfig is CreationConfigV7 after validation.
type creationConfig struct {
	resources    [][2]any // key, raw value, in request order
	resourceOpts obj
	shmem        *int64
	environ      [][2]string
	scalingGroup *string
	agentList    []string
	agentListSet bool
	preopen      []int
	mounts       []string
}

func parseConfig(m map[string]any, order []string) (*creationConfig, *problem) {
	cc := &creationConfig{}
	var errs []string
	bad := func(loc, msg string) { errs = append(errs, loc+"\n  "+msg) }
	if v, ok := m["resources"]; ok && v != nil {
		r, isMap := v.(map[string]any)
		if !isMap {
			bad("resources", "Input should be a valid dictionary")
		} else {
			for _, k := range keysInOrder(r, order) {
				cc.resources = append(cc.resources, [2]any{k, r[k]})
			}
		}
	}
	if v, _, ok := alias(m, "resource_opts", "resourceOpts"); ok && v != nil {
		r, isMap := v.(map[string]any)
		if !isMap {
			bad("resource_opts", "Input should be a valid dictionary")
		} else {
			for _, k := range sortedKeys(r) {
				if k == "shmem" {
					switch x := r[k].(type) {
					case nil:
					case string:
						n, err := parseBinarySize(x)
						if err != nil {
							bad("resource_opts.shmem", "Value error, "+err.Error())
						} else {
							cc.shmem = &n
						}
					case json.Number:
						n, err := strconv.ParseInt(string(x), 10, 64)
						if err != nil {
							bad("resource_opts.shmem", "Value error")
						} else {
							cc.shmem = &n
						}
					default:
						bad("resource_opts.shmem", "Value error")
					}
					continue
				}
				cc.resourceOpts = append(cc.resourceOpts, kv{k, jsonToValue(r[k])})
			}
		}
	}
	if v, ok := m["environ"]; ok && v != nil {
		r, isMap := v.(map[string]any)
		if !isMap {
			bad("environ", "Input should be a valid dictionary")
		} else {
			for _, k := range keysInOrder(r, order) {
				s, isStr := r[k].(string)
				if !isStr {
					bad("environ."+k, "Input should be a valid string")
					continue
				}
				cc.environ = append(cc.environ, [2]string{k, s})
			}
		}
	}
	if v, _, ok := alias(m, "scaling_group", "scalingGroup"); ok && v != nil {
		s, isStr := v.(string)
		if !isStr {
			bad("scaling_group", "Input should be a valid string")
		} else {
			cc.scalingGroup = &s
		}
	}
	if v, _, ok := alias(m, "agent_list", "agentList"); ok && v != nil {
		l, isList := v.([]any)
		if !isList {
			bad("agent_list", "Input should be a valid list")
		} else {
			cc.agentListSet = true
			for _, e := range l {
				s, isStr := e.(string)
				if !isStr {
					bad("agent_list", "Input should be a valid string")
					continue
				}
				cc.agentList = append(cc.agentList, s)
			}
		}
	}
	if v, _, ok := alias(m, "preopen_ports", "preopenPorts"); ok && v != nil {
		l, isList := v.([]any)
		if !isList {
			bad("preopen_ports", "Input should be a valid list")
		} else {
			for _, e := range l {
				n, code := asInt(e)
				if code != "" {
					bad("preopen_ports", intMsg(code))
					continue
				}
				cc.preopen = append(cc.preopen, int(n))
			}
		}
	}
	if v, ok := m["mounts"]; ok && v != nil {
		l, isList := v.([]any)
		if !isList {
			bad("mounts", "Input should be a valid list")
		} else {
			for _, e := range l {
				s, _ := e.(string)
				cc.mounts = append(cc.mounts, s)
			}
		}
	}
	if v, _, ok := alias(m, "attach_network", "attachNetwork"); ok && v != nil {
		s, _ := v.(string)
		if _, okU := canonUUID(s); !okU {
			bad("attach_network", "Input should be a valid UUID")
		}
	}
	if len(errs) > 0 {
		n := len(errs)
		plural := "s"
		if n == 1 {
			plural = ""
		}
		summary := fmt.Sprintf("%d validation error%s for CreationConfigV7\n%s", n, plural, strings.Join(errs, "\n"))
		return nil, errInvalidAPIParams.withData(strp("Input validation error"),
			obj{{"config", "Schema validation failed. (" + summary + ")"}})
	}
	return cc, nil
}

func sortedKeys(m map[string]any) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

// keysInOrder returns m's keys in the order they appeared in the request
// body (order is the key sequence of the raw JSON), else sorted.
func keysInOrder(m map[string]any, order []string) []string {
	var out []string
	seen := map[string]bool{}
	for _, k := range order {
		if _, ok := m[k]; ok && !seen[k] {
			out = append(out, k)
			seen[k] = true
		}
	}
	for _, k := range sortedKeys(m) {
		if !seen[k] {
			out = append(out, k)
		}
	}
	return out
}

func jsonToValue(v any) any {
	switch x := v.(type) {
	case map[string]any:
		o := obj{}
		for _, k := range sortedKeys(x) {
			o = append(o, kv{k, jsonToValue(x[k])})
		}
		return o
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = jsonToValue(e)
		}
		return out
	}
	return v
}

// jsonKeyOrder lists every object key of a JSON document in order (Go
// maps forget the order Python dicts keep).
func jsonKeyOrder(b []byte) []string {
	type frame struct{ isObj, expectKey bool }
	dec := json.NewDecoder(strings.NewReader(string(b)))
	dec.UseNumber()
	var keys []string
	var stack []*frame
	valueDone := func() {
		if n := len(stack); n > 0 && stack[n-1].isObj {
			stack[n-1].expectKey = true
		}
	}
	for {
		t, err := dec.Token()
		if err != nil {
			return keys
		}
		if dl, ok := t.(json.Delim); ok {
			switch dl {
			case '{', '[':
				stack = append(stack, &frame{isObj: dl == '{', expectKey: dl == '{'})
			default:
				if len(stack) > 0 {
					stack = stack[:len(stack)-1]
				}
				valueDone()
			}
			continue
		}
		if n := len(stack); n > 0 && stack[n-1].isObj && stack[n-1].expectKey {
			if k, ok := t.(string); ok {
				keys = append(keys, k)
			}
			stack[n-1].expectKey = false
			continue
		}
		valueDone()
	}
}

// resolveScope is resolve_access_key_scope (services/auth/service.py).
func (d *Double) resolveScope(au *authResult, owner *string) (*keypair, *problem) {
	if owner == nil || *owner == au.kp.accessKey {
		return au.kp, nil
	}
	okp := d.keypairs[*owner]
	if okp == nil {
		return nil, errInvalidAPIParams.with("Unknown owner access key")
	}
	if msg := eligible(au.user.role, au.user.domain, okp.user.role, okp.user.domain); msg != "" {
		return nil, errGenericForbidden.with(msg)
	}
	return okp, nil
}

// eligible is check_if_requester_is_eligible_to_act_as_target_user.
func eligible(reqRole, reqDomain, tgtRole, tgtDomain string) string {
	switch reqRole {
	case "superadmin":
		return ""
	case "admin":
		if reqDomain != tgtDomain {
			return "Domain-admins can perform operations on behalf of other users in the same domain only."
		}
		if tgtRole == "superadmin" {
			return "Domain-admins cannot perform operations on behalf of super-admins."
		}
		return ""
	}
	return "Only admins can perform operations on behalf of other users."
}

// matchSessions is SessionRow.match_sessions: by UUID first, then by
// exact name, for the owner's access key, newest first, at most 10.
func (d *Double) matchSessions(ref, ak string, allowStale bool) []*session {
	if id, ok := canonUUID(ref); ok {
		if s := d.sessions[id]; s != nil && s.accessKey == ak && (allowStale || !s.status.dead()) {
			return []*session{s}
		}
	}
	var out []*session
	for _, s := range d.byName[ak+"\x00"+ref] {
		if allowStale || !s.status.dead() {
			out = append(out, s)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].createdAt.After(out[j].createdAt) })
	if len(out) > 10 {
		out = out[:10]
	}
	return out
}

// getSession is SessionRow.get_session.
func (d *Double) getSession(ref, ak string, allowStale bool) (*session, *problem) {
	ms := d.matchSessions(ref, ak, allowStale)
	if len(ms) == 0 {
		return nil, sessionNotFound(fmt.Sprintf("Session (id=%s) does not exist.", ref))
	}
	if len(ms) > 1 {
		var list []any
		for _, s := range ms {
			list = append(list, obj{{"session_id", s.id}, {"session_name", s.name}, {"status", s.status.String()},
				{"created_at", isoformat(s.createdAt)}})
		}
		return nil, errTooManySessions.withData(nil, obj{{"matches", list}})
	}
	return ms[0], nil
}

func (d *Double) resolveImage(name, arch string) *image {
	for _, im := range d.images {
		if im.name == name && im.arch == arch {
			return im
		}
	}
	for _, im := range d.images {
		if containsStr(im.aliases, name) && im.arch == arch {
			return im
		}
	}
	for _, im := range d.images {
		if containsStr(im.aliases, name) {
			return im
		}
	}
	return nil
}

// allowedRGs is query_allowed_sgroups: groups associated with the
// domain, the project or the keypair, active, sorted by name.
func (d *Double) allowedRGs(domainName string, p *project, ak string) []*rgroup {
	var out []*rgroup
	for _, rg := range d.rgOrder {
		if !rg.active {
			continue
		}
		ok := containsStr(rg.domains, domainName) || containsStr(rg.domains, "*") || containsStr(rg.keypairs, ak)
		if p != nil && containsStr(rg.projects, p.id) {
			ok = true
		}
		if ok {
			out = append(out, rg)
		}
	}
	return out
}

var batchNameRe = regexp.MustCompile(`^from-template$`)

func (d *Double) hCreateSession(c *rctx) (*response, *problem) {
	raw := readBody(c.r)
	m, p := c.jsonBody()
	if p != nil {
		return nil, p
	}
	order := jsonKeyOrder(raw)
	params, p := parseCreate(m)
	if p != nil {
		return nil, p
	}
	if batchNameRe.MatchString(params.name) {
		return nil, errInvalidAPIParams.with(fmt.Sprintf("Requested session ID %s is reserved word", params.name))
	}
	cc, p := parseConfig(params.config, order)
	if p != nil {
		return nil, p
	}
	au := c.auth
	if cc.agentListSet && au.user.role != "superadmin" && d.opts.HideAgents {
		return nil, errInsufficientPriv.with("You are not allowed to manually assign agents for your session.")
	}
	d.mu.Lock()
	s, resp, p := d.createLocked(c, params, cc)
	d.mu.Unlock()
	if p != nil {
		return nil, p
	}
	if resp != nil {
		return &response{status: 201, body: resp}, nil
	}
	out := obj{{"sessionId", s.id}, {"sessionName", s.name}, {"status", "PENDING"}, {"servicePorts", []any{}}, {"created", true}}
	if params.enqueueOnly {
		return &response{status: 201, body: out}, nil
	}
	// _wait_for_session_running
	deadline := time.Time{}
	if params.maxWait > 0 {
		deadline = time.Now().Add(time.Duration(params.maxWait) * time.Second)
	}
	for {
		d.mu.Lock()
		st := s.status
		d.mu.Unlock()
		if st == StRunning {
			break
		}
		if st == StTerminated || st == StCancelled {
			return nil, sessionNotFound("Session terminated during scheduling")
		}
		if !deadline.IsZero() && time.Now().After(deadline) {
			out[2].v = "TIMEOUT"
			return &response{status: 201, body: out}, nil
		}
		select {
		case <-c.r.Context().Done():
			return nil, internalError()
		case <-d.closeCh:
			return nil, internalError()
		case <-time.After(20 * time.Millisecond):
		}
	}
	time.Sleep(500 * time.Millisecond)
	d.mu.Lock()
	ks := s.main().status
	d.mu.Unlock()
	if ks == StRunning {
		out[2].v = "RUNNING"
	} else {
		out[2].v = ks.String()
	}
	return &response{status: 201, body: out}, nil
}

func (d *Double) createLocked(c *rctx, pr *createParams, cc *creationConfig) (*session, obj, *problem) {
	au := c.auth
	okp, p := d.resolveScope(au, pr.ownerAK)
	if p != nil {
		return nil, nil, p
	}
	// services/session/service.py create_from_params → query_userinfo
	// with requester_domain = the requested domain (reference errata 4).
	delegated := okp != au.kp
	owner := okp.user
	roleForGroup := "user"
	if delegated {
		if msg := eligible(au.user.role, pr.domain, owner.role, owner.domain); msg != "" {
			return nil, nil, internalError() // RuntimeError escapes query_userinfo
		}
		roleForGroup = owner.role
	}
	ownerDomain := pr.domain
	if delegated {
		ownerDomain = owner.domain
	}
	if dm := d.domains[ownerDomain]; dm == nil || !dm.active {
		return nil, nil, errInvalidAPIParams.with("Invalid or inactive domain: " + ownerDomain)
	}
	var proj *project
	groupMatch := func(g *project) bool {
		if id, ok := canonUUID(pr.group); ok && g.id == id {
			return true
		}
		return g.name == pr.group
	}
	switch roleForGroup {
	case "superadmin":
		for _, g := range d.sortedProjects() {
			if g.domain == pr.domain && groupMatch(g) && g.active {
				proj = g
				break
			}
		}
	case "admin":
		if pr.domain != ownerDomain {
			return nil, nil, errInvalidAPIParams.with("You can only set the domain to the owner's domain.")
		}
		for _, g := range d.sortedProjects() {
			if g.domain == ownerDomain && groupMatch(g) && g.active {
				proj = g
				break
			}
		}
	default:
		if pr.domain != ownerDomain {
			return nil, nil, errInvalidAPIParams.with("You can only set the domain to your domain.")
		}
		for _, g := range owner.projects {
			if g.domain == ownerDomain && groupMatch(g) && g.active {
				proj = g
				break
			}
		}
	}
	if proj == nil {
		return nil, nil, errInvalidAPIParams.with(fmt.Sprintf("Invalid group (%s): the group does not exist, is inactive, or the user is not a member.", pr.group))
	}
	arch := pr.arch
	if !pr.archSet || arch == "" {
		arch = "x86_64"
	}
	im := d.resolveImage(pr.image, arch)
	if im == nil {
		return nil, nil, objectNotFound("environment image", "image_read_not-found",
			strp(fmt.Sprintf("Unknown image references: identifier:ImageIdentifier(canonical=%s, architecture=%s), alias:%s",
				pyStrRepr(pr.image), pyStrRepr(arch), pyStrRepr(pr.image))), nil)
	}
	// registry.create_session
	if len(cc.resources) > 0 {
		for _, r := range cc.resources {
			name, v := r[0].(string), r[1]
			if v == nil || isZero(v) {
				continue
			}
			if _, known := d.slotTypes[name]; !known {
				extra := ""
				if name == "shmem" {
					extra = " (Put it at the 'resource_opts' field in API, or use '--resource-opts shmem=...' in CLI)"
				}
				return nil, nil, errUnknownSlot.with("Unknown slot type: " + pyStrRepr(name) + extra)
			}
			_, verr, neg := normalizeSlot(name, v, d.slotTypes[name] == slotBytes)
			if verr != "" {
				return nil, nil, errInvalidAPIParams.with("Invalid resource allocation: " + verr)
			}
			if neg {
				return nil, nil, errInvalidSlotQty.with(fmt.Sprintf("Resource slot %s cannot be negative", pyStrRepr(name)))
			}
		}
	}
	if dm := d.domains[pr.domain]; !im.isLocal && dm != nil && dm.allowedRegistries != nil && !containsStr(dm.allowedRegistries, im.registry) {
		return nil, nil, objectNotFound("environment image", "image_read_not-found", strp("unknown alias or disallowed registry"), nil)
	}
	// name clash (get_session, allow_stale=False: ERROR sessions count)
	if ms := d.matchSessions(pr.name, okp.accessKey, false); len(ms) > 0 {
		if len(ms) > 1 {
			_, p := d.getSession(pr.name, okp.accessKey, false)
			return nil, nil, p
		}
		ex := ms[0]
		if ex.image != im || !pr.reuse {
			return nil, nil, errSessionExists.withData(nil, obj{{"existingSessionId", ex.id}})
		}
		var sp any
		if ex.main().status == StRunning {
			sp = []any{}
		}
		return nil, obj{{"sessionId", ex.id}, {"sessionName", ex.name}, {"status", ex.status.String()},
			{"service_ports", sp}, {"servicePorts", sp}, {"created", false}}, nil
	}
	typ := strings.ToUpper(pr.typ)
	if typ == "BATCH" && (pr.startupCommand == nil || *pr.startupCommand == "") {
		return nil, nil, errInvalidAPIParams.with("Batch sessions must have a non-empty startup command.")
	}
	if typ != "BATCH" {
		if pr.startsAt != nil && *pr.startsAt != "" {
			return nil, nil, errInvalidAPIParams.with("Parameter starts_at should be used only for batch sessions")
		}
		if pr.batchTimeout != nil && *pr.batchTimeout != 0 {
			return nil, nil, errInvalidAPIParams.with("Parameter batch_timeout should be used only for batch sessions")
		}
	}
	now := time.Now().UTC()
	var startsAt time.Time
	if pr.startsAt != nil && *pr.startsAt != "" {
		t, ok := isoparse(*pr.startsAt)
		if !ok {
			td, ok2 := strToTimedelta(*pr.startsAt)
			if !ok2 {
				return nil, nil, internalError() // ValueError → InternalServerError (errata 5)
			}
			t = now.Add(td)
		}
		startsAt = t
	}
	var deps []string
	for _, dep := range pr.deps {
		id, ok := canonUUID(dep)
		if !ok {
			return nil, nil, internalError() // UUID(str(d)) raises (errata 5)
		}
		deps = append(deps, id)
	}
	// _enqueue_session_via_sokovan: resource group
	var rg *rgroup
	allowed := d.allowedRGs(pr.domain, proj, okp.accessKey)
	if cc.scalingGroup != nil && *cc.scalingGroup != "" {
		rg = d.rgs[*cc.scalingGroup]
		if rg == nil {
			return nil, nil, objectNotFound("scaling group", "scaling-group_read_not-found", cc.scalingGroup, nil)
		}
		found := false
		for _, a := range allowed {
			if a == rg {
				found = true
			}
		}
		if !found {
			return nil, nil, errCommonInvalidAPIParams.with(fmt.Sprintf("Resource group '%s' is not accessible", rg.name))
		}
	} else {
		if len(allowed) == 0 {
			return nil, nil, errInvalidAPIParams.with("No accessible resource group available")
		}
		rg = allowed[0]
	}
	// kernel resources: entries (parse_quantity of every given value),
	// cpu/mem filled from the image minimum (+ shmem)
	var perKernel slotList
	for _, r := range cc.resources {
		name, v := r[0].(string), r[1]
		if v == nil {
			continue
		}
		perKernel = append(perKernel, slotQ{name, quantityOf(v, d.slotTypes[name] == slotBytes || (d.slotTypes[name] == "" && isBytesSlot(name, nil)))})
	}
	shmem := int64(64 << 20)
	if l, ok := im.labels["ai.backend.resource.preferred.shmem"]; ok {
		if n, err := parseBinarySize(l); err == nil {
			shmem = n
		}
	}
	if cc.shmem != nil {
		shmem = *cc.shmem
	}
	minSlots := append(slotList(nil), im.minSlots...)
	minSlots = minSlots.set("mem", minSlots.get("mem")+shmem)
	for _, intrinsic := range []string{"cpu", "mem"} {
		if !minSlots.has(intrinsic) {
			continue
		}
		if !perKernel.has(intrinsic) || perKernel.get(intrinsic) == 0 {
			perKernel = perKernel.set(intrinsic, minSlots.get(intrinsic))
		}
	}
	// validators (sokovan/scheduling_controller/validators)
	if pol := owner.mainKP(d); pol != nil {
		if pol.maxPendingSessions > 0 {
			n := 0
			for s := range d.active {
				if s.owner == owner && s.status == StPending {
					n++
				}
			}
			if n >= pol.maxPendingSessions {
				return nil, nil, errQuotaExceeded.with(fmt.Sprintf("You cannot create more than %d pending session(s).", pol.maxPendingSessions))
			}
		}
		if pol.maxPriority != nil && pr.priority > *pol.maxPriority {
			// Rejected, not capped (source differs from the reference §2.2).
			return nil, nil, errQuotaExceeded.with(fmt.Sprintf("The requested session priority %d exceeds the allowed maximum priority of %d.", pr.priority, *pol.maxPriority))
		}
		if pol.maxContainers > 0 && pr.clusterSize > pol.maxContainers {
			return nil, nil, errQuotaExceeded.with(fmt.Sprintf("Session requests %d kernels, exceeding the keypair limit of %d containers per session.", pr.clusterSize, pol.maxContainers))
		}
	}
	served := rg.servedSlots()
	if len(served) == 0 {
		return nil, nil, errInvalidAPIParams.with(fmt.Sprintf("resource group '%s' has no agents serving any resource slot.", rg.name))
	}
	var unknown []string
	for _, q := range perKernel {
		if !served[q.name] && q.q > 0 {
			unknown = append(unknown, pyStrRepr(q.name))
		}
	}
	if len(unknown) > 0 {
		sort.Strings(unknown)
		var errs []string
		for i := 0; i < pr.clusterSize; i++ {
			errs = append(errs, fmt.Sprintf("kernel_specs[%d]: the request asks for resource slot(s) [%s] that resource group '%s' does not serve. Drop these slots from the request or switch to a resource group that supports them.", i, strings.Join(unknown, ", "), rg.name))
		}
		return nil, nil, errInvalidAPIParams.with(strings.Join(errs, " "))
	}
	for _, mq := range minSlots {
		if mq.q <= 0 {
			continue
		}
		if _, known := d.slotTypes[mq.name]; !known {
			continue
		}
		if !perKernel.has(mq.name) || perKernel.get(mq.name) < mq.q {
			var parts []string
			for _, x := range minSlots {
				v := fmtQty(x.name, x.q, d.slotTypes)
				if isBytesSlot(x.name, d.slotTypes) {
					v = humanBytes(x.q)
				}
				parts = append(parts, x.name+"="+v)
			}
			return nil, nil, errInvalidAPIParams.with(fmt.Sprintf("kernel_specs[0] resource request is smaller than the image minimum (%s).", strings.Join(parts, " ")))
		}
	}
	if perKernel.has("mem") && shmem >= perKernel.get("mem") {
		return nil, nil, errInvalidAPIParams.with(fmt.Sprintf("kernel_specs[0] shared-memory (%s) must be smaller than requested memory (%s).", humanBytes(shmem), humanBytes(perKernel.get("mem"))))
	}
	for _, id := range deps {
		if d.sessions[id] == nil {
			return nil, nil, errInvalidAPIParams.withData(strp("Unknown session ID in the dependency list"), obj{{"session_ref", id}})
		}
	}
	// enqueue_session_from_spec
	s := &session{id: newUUID(), creationID: tokenURLSafe(16), name: pr.name, accessKey: okp.accessKey, owner: owner,
		domain: pr.domain, project: proj, rg: rg, typ: typ, clusterMode: pr.clusterMode, clusterSize: pr.clusterSize,
		priority: pr.priority, jobPriority: pr.jobPriority, preemptible: pr.preemptible, image: im,
		status: StPending, createdAt: now, statusChanged: now, requestedStartsAt: startsAt, tag: pr.tag,
		startupCommand: pr.startupCommand, callbackURL: pr.callback, deps: deps, designated: cc.agentList}
	if pr.batchTimeout != nil {
		s.batchTimeout = *pr.batchTimeout
	}
	bs := pr.bootstrap
	if bs == nil || *bs == "" {
		if okp.bootstrapScript != "" {
			bs = strp(okp.bootstrapScript)
		} else {
			bs = nil
		}
	}
	s.bootstrap = bs
	s.environ = append(s.environ, cc.environ...)
	if owner.sudo {
		s.environ = append(s.environ, [2]string{"SUDO_SESSION_ENABLED", "1"})
	}
	s.hist = history{{StPending, now}}
	ropts := obj{{"shmem", shmem}}
	ropts = append(ropts, cc.resourceOpts...)
	s.resourceOpts = ropts
	uid, gid := d.opts.KernelUID, d.opts.KernelGID
	if owner.containerUID != nil {
		uid = *owner.containerUID
	}
	if owner.containerMainGID != nil {
		gid = *owner.containerMainGID
	}
	for i := 0; i < pr.clusterSize; i++ {
		role, idx := "main", 1
		if i > 0 {
			role, idx = "sub", i
		}
		k := &kernel{id: newUUID(), sess: s, role: role, idx: idx, rank: i, hostname: fmt.Sprintf("%s%d", role, idx),
			status: StPending, createdAt: now, statusChanged: now, requested: append(slotList(nil), perKernel...),
			hist: history{{StPending, now}}, preopen: cc.preopen, resourceOpts: ropts, uid: uid, gid: gid,
			gids: owner.containerGIDs}
		s.kernels = append(s.kernels, k)
		s.requested = s.requested.sum(k.requested)
		d.kernels[k.id] = k
	}
	d.sessions[s.id] = s
	key := s.accessKey + "\x00" + s.name
	d.byName[key] = append(d.byName[key], s)
	d.sessSeq = append(d.sessSeq, s)
	d.active[s] = struct{}{}
	d.queuePending(s)
	rg.scheduleNeeded = true
	d.hub.sched(s, StPending, "Session enqueued")
	return s, nil, nil
}

func (u *user) mainKP(d *Double) *keypair {
	if u.mainAccessKey == "" {
		return nil
	}
	return d.keypairs[u.mainAccessKey]
}

func isZero(v any) bool {
	switch x := v.(type) {
	case json.Number:
		f, err := strconv.ParseFloat(string(x), 64)
		return err == nil && f == 0
	case bool:
		return !x
	}
	return false
}

// quantityOf is parse_quantity(v) → str → ResourceSlot.from_user_input
// with guessed slot types, as the draft's requested slots are built.
func quantityOf(v any, bytesSlot bool) int64 {
	var s string
	switch x := v.(type) {
	case json.Number:
		s = string(x)
	case string:
		s = x
	case bool:
		if x {
			s = "1"
		} else {
			s = "0"
		}
	default:
		s = fmt.Sprint(x)
	}
	return parseQuantityString(s, bytesSlot)
}

func tokenURLSafe(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}

var isoRe = regexp.MustCompile(`^(\d{4})-?(\d{2})-?(\d{2})(?:[T ](\d{2})(?::?(\d{2})(?::?(\d{2})(?:[.,](\d{1,6})\d*)?)?)?)?\s*(Z|[+-]\d{2}(?::?\d{2})?)?$`)

// isoparse is dateutil.parser.isoparse (strict ISO 8601); a naive value
// is taken as UTC.
func isoparse(s string) (time.Time, bool) {
	m := isoRe.FindStringSubmatch(strings.TrimSpace(s))
	if m == nil {
		return time.Time{}, false
	}
	atoi := func(x string) int { n, _ := strconv.Atoi(x); return n }
	loc := time.UTC
	if tz := m[8]; tz != "" && tz != "Z" {
		sign := 1
		if tz[0] == '-' {
			sign = -1
		}
		tz = strings.ReplaceAll(tz[1:], ":", "")
		h := atoi(tz[:2])
		mi := 0
		if len(tz) >= 4 {
			mi = atoi(tz[2:4])
		}
		loc = time.FixedZone("", sign*(h*3600+mi*60))
	}
	frac := m[7]
	for len(frac) < 6 && frac != "" {
		frac += "0"
	}
	t := time.Date(atoi(m[1]), time.Month(atoi(m[2])), atoi(m[3]), atoi(m[4]), atoi(m[5]), atoi(m[6]), atoi(frac)*1000, loc)
	if t.Month() != time.Month(atoi(m[2])) {
		return time.Time{}, false
	}
	return t, true
}

var tdRe = regexp.MustCompile(`^(?P<sign>[+|-])?\s*((?P<days>\d+(\.\d+)?)(d|day|days))?\s*((?P<hours>\d+(\.\d+)?)(h|hr|hrs|hour|hours))?\s*((?P<minutes>\d+(\.\d+)?)(m|min|mins|minute|minutes))?\s*((?P<seconds>\d+(\.\d+)?)(s|sec|secs|second|seconds))?$`)

// strToTimedelta is common/utils.py str_to_timedelta.
func strToTimedelta(s string) (time.Duration, bool) {
	m := tdRe.FindStringSubmatch(s)
	if m == nil {
		f, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
		if err != nil {
			return 0, false
		}
		return time.Duration(f * float64(time.Second)), true
	}
	names := tdRe.SubexpNames()
	var total float64
	any := false
	sign := 1.0
	for i, n := range names {
		if m[i] == "" {
			continue
		}
		switch n {
		case "sign":
			if m[i] == "-" {
				sign = -1
			}
		case "days":
			total += mustF(m[i]) * 86400
			any = true
		case "hours":
			total += mustF(m[i]) * 3600
			any = true
		case "minutes":
			total += mustF(m[i]) * 60
			any = true
		case "seconds":
			total += mustF(m[i])
			any = true
		}
	}
	if !any {
		return 0, false
	}
	return time.Duration(sign * total * float64(time.Second)), true
}

func mustF(s string) float64 { f, _ := strconv.ParseFloat(s, 64); return f }

// ---- read, destroy, logs

func (d *Double) hGetSession(c *rctx) (*response, *problem) {
	d.mu.Lock()
	defer d.mu.Unlock()
	// owner_access_key is ignored: the requester's own sessions only.
	s, p := d.getSession(c.vars["session_name"], c.auth.kp.accessKey, false)
	if p != nil {
		return nil, p
	}
	mk := s.main()
	age := time.Since(s.createdAt).Milliseconds()
	var cid any
	if mk.containerID != "" {
		cid = mk.containerID
	}
	var info any = "None"
	if s.statusInfo != nil && *s.statusInfo != "" {
		info = *s.statusInfo
	}
	var term any
	if !s.termAt.IsZero() {
		term = isoformat(s.termAt)
	}
	var tag any
	if s.tag != nil {
		tag = *s.tag
	}
	env := obj{}
	for _, e := range s.environ {
		env = append(env, kv{e[0], e[1]})
	}
	var sd any
	if s.statusData != nil {
		sd = s.statusData
	}
	occupied := d.occupied(s)
	var mkOcc slotList
	if !mk.startsAt.IsZero() && !mk.status.terminal() {
		mkOcc = mk.requested
	}
	body := obj{{"age", int(age)}, {"domainName", s.domain}, {"groupId", s.project.id}, {"userId", s.owner.uuid},
		{"lang", s.image.name}, {"image", s.image.name}, {"architecture", s.image.arch}, {"registry", s.image.registry},
		{"tag", tag}, {"containerId", cid}, {"occupiedSlots", mkOcc.pyRepr(d.slotTypes)},
		{"occupyingSlots", occupied.pyRepr(d.slotTypes)}, {"requestedSlots", s.requested.pyRepr(d.slotTypes)},
		{"occupiedShares", "{}"}, {"environ", pyRepr(env)}, {"resourceOpts", pyRepr(obj{{mk.hostname, mk.resourceOpts}})},
		{"status", s.status.String()}, {"statusInfo", info}, {"statusData", sd},
		{"creationTime", isoformat(s.createdAt)}, {"terminationTime", term}, {"numQueriesExecuted", s.numQueries},
		{"lastStat", nil}, {"idleChecks", obj{}}}
	return ok200(body)
}

// occupied is occupying_slots computed live from resource allocations
// not yet freed: the requested amounts until the kernels are terminal
// (reference errata 2).
func (d *Double) occupied(s *session) slotList {
	var l slotList
	for _, k := range s.kernels {
		if !k.status.terminal() {
			l = l.sum(k.requested)
		}
	}
	return l
}

func (d *Double) hDestroySession(c *rctx) (*response, *problem) {
	forced, recursive := false, false
	var fe fieldErrs
	if v, ok := c.query("forced"); ok {
		b, okb := asBool(v)
		if !okb {
			fe.add("forced", "bool_parsing", "Input should be a valid boolean, unable to interpret input", v)
		}
		forced = b
	}
	if v, ok := c.query("recursive"); ok {
		b, okb := asBool(v)
		if !okb {
			fe.add("recursive", "bool_parsing", "Input should be a valid boolean, unable to interpret input", v)
		}
		recursive = b
	}
	if len(fe) > 0 {
		return nil, validationProblem("DestroySessionRequest", fe)
	}
	var owner *string
	if v, ok := c.query("owner_access_key"); ok {
		owner = &v
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	au := c.auth
	okp, p := d.resolveScope(au, owner)
	if p != nil {
		return nil, p
	}
	if okp != au.kp && au.user.role != "admin" && au.user.role != "superadmin" {
		return nil, errInsufficientPriv.with("You are not allowed to force-terminate others's sessions")
	}
	root, p := d.getSession(c.vars["session_name"], okp.accessKey, true)
	if p != nil {
		return nil, p
	}
	targets := []*session{}
	if recursive {
		seen := map[string]bool{}
		var walk func(id string)
		walk = func(id string) {
			for _, s := range d.sessSeq {
				if containsStr(s.deps, id) && !seen[s.id] {
					seen[s.id] = true
					targets = append(targets, s)
					walk(s.id)
				}
			}
		}
		walk(root.id)
	}
	targets = append(targets, root)
	reason := "user-requested"
	if forced {
		reason = "force-terminated"
	}
	cancelled, terminating, forcedN := d.markTerminating(targets, reason, forced, "mark_terminating success", time.Now().UTC())
	stats := obj{}
	switch {
	case cancelled > 0:
		stats = obj{{"status", "cancelled"}}
	case terminating > 0 || forcedN > 0:
		stats = obj{{"status", "terminated"}}
	}
	return ok200(obj{{"stats", stats}})
}

func (d *Double) hSessionLogs(c *rctx) (*response, *problem) {
	var owner *string
	if v, ok := c.query("owner_access_key", "ownerAccessKey"); ok {
		owner = &v
	}
	var kid string
	if v, ok := c.query("kernel_id", "kernelId"); ok {
		id, okU := canonUUID(v)
		if !okU {
			return nil, validationProblem("GetContainerLogsRequest", []verr{{loc: "kernel_id", typ: "uuid_parsing", msg: "Input should be a valid UUID", input: v}})
		}
		kid = id
	}
	d.mu.Lock()
	au := c.auth
	okp, p := d.resolveScope(au, owner)
	if p != nil {
		d.mu.Unlock()
		return nil, p
	}
	s, p := d.getSession(c.vars["session_name"], okp.accessKey, true)
	if p != nil {
		d.mu.Unlock()
		return nil, p
	}
	k := s.main()
	if kid != "" {
		k = nil
		for _, x := range s.kernels {
			if x.id == kid {
				k = x
			}
		}
		if k == nil {
			d.mu.Unlock()
			return nil, internalError() // get_kernel_by_id raises an unmapped error
		}
	}
	if k.agent == nil {
		d.mu.Unlock()
		return nil, objectNotFound("agent instance", "instance_read_not-found", strp("Kernel has not been assigned to an agent."), obj{{"kernel_id", nilIfEmpty(kid)}})
	}
	logs := d.kernelLog(k)
	d.mu.Unlock()
	return ok200(obj{{"result", obj{{"logs", logs}}}})
}

func nilIfEmpty(s string) any {
	if s == "" {
		return nil
	}
	return s
}

func (d *Double) kernelLog(k *kernel) string {
	if d.run != nil {
		return d.run.logOf(k)
	}
	return string(k.log)
}

func (d *Double) hStatusHistory(c *rctx) (*response, *problem) {
	var owner *string
	if v, ok := c.query("owner_access_key"); ok {
		owner = &v
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if _, p := d.resolveScope(c.auth, owner); p != nil {
		return nil, p
	}
	// the handler passes the requester's access key, whatever the owner
	s, p := d.getSession(c.vars["session_name"], c.auth.kp.accessKey, false)
	if p != nil {
		return nil, p
	}
	return ok200(s.hist.toObj())
}

// APIError is a problem+json error as the manager would answer it.
type APIError struct {
	Status                 int
	Type, Title, Code, Msg string
}

func (e *APIError) Error() string {
	return fmt.Sprintf("%d %s %s (%s)", e.Status, e.Type, e.Title, e.Msg)
}

func apiError(p *problem) *APIError {
	e := &APIError{Status: p.status, Type: p.typ, Title: p.title, Code: p.code}
	if p.msg != nil {
		e.Msg = *p.msg
	}
	return e
}

// Enqueue creates a session as POST /session with the body (any value
// that marshals to the JSON object a client would send) would, on behalf
// of the keypair accessKey, without HTTP, and never waits (enqueue
// only). It returns the session id; an error is an *APIError.
func (d *Double) Enqueue(accessKey string, body any) (string, error) {
	raw, err := json.Marshal(body)
	if err != nil {
		return "", err
	}
	dec := json.NewDecoder(strings.NewReader(string(raw)))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil {
		return "", err
	}
	params, p := parseCreate(m)
	if p != nil {
		return "", apiError(p)
	}
	cc, p := parseConfig(params.config, jsonKeyOrder(raw))
	if p != nil {
		return "", apiError(p)
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	kp := d.keypairs[accessKey]
	if kp == nil {
		return "", apiError(errAuthFailed.with("Access key not found in HMAC"))
	}
	au := &authResult{authorized: true, kp: kp, user: kp.user, isAdmin: kp.isAdmin, isSuperadmin: kp.user.role == "superadmin"}
	s, resp, p := d.createLocked(&rctx{auth: au}, params, cc)
	if p != nil {
		return "", apiError(p)
	}
	if resp != nil {
		id, _ := resp.get("sessionId")
		return id.(string), nil
	}
	return s.id, nil
}

// Destroy terminates a session as DELETE /session/{id} would for its
// owner (forced: straight to TERMINATED).
func (d *Double) Destroy(id string, forced bool) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	s := d.sessions[id]
	if s == nil {
		return fmt.Errorf("double: no session %s", id)
	}
	reason := "user-requested"
	if forced {
		reason = "force-terminated"
	}
	d.markTerminating([]*session{s}, reason, forced, "", time.Now().UTC())
	return nil
}

// servedSlots: the slot names the group's agents serve (cached until an
// agent is added).
func (rg *rgroup) servedSlots() map[string]bool {
	if rg.served == nil {
		rg.served = map[string]bool{}
		for _, a := range rg.agents {
			for _, q := range a.capacity {
				rg.served[q.name] = true
			}
		}
	}
	return rg.served
}
