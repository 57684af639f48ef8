package double

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// Legacy GraphQL (Graphene) at POST /admin/gql (errors in the body,
// HTTP 200) and POST /admin/graphql (errors → 400 graphql-error), for the
// fields a bridge reads, with the field names and types of
// docs/manager/graphql-reference/schema.graphql (26.8.1).

type gArg struct {
	name, typ string
	def       any
	hasDef    bool
}

type gField struct {
	typ  string
	args []gArg
	res  func(x *gqlExec, parent any, args map[string]any) (any, error)
}

type gType struct {
	name   string
	fields map[string]*gField
}

type gqlExec struct {
	d      *Double
	au     *authResult
	schema map[string]*gType
	doc    *gqlDoc
	vars   map[string]any
	errs   []*gqlErr
}

var scalarTypes = map[string]bool{"Int": true, "Float": true, "String": true, "Boolean": true, "ID": true,
	"UUID": true, "DateTime": true, "JSONString": true, "BigInt": true, "UUIDFloatMap": true}

func baseType(t string) string { return strings.Trim(t, "[]!") }

func (d *Double) hGQL(legacy bool) handlerFunc {
	return func(c *rctx) (*response, *problem) {
		m, p := c.jsonBody()
		if p != nil {
			return nil, p
		}
		q, ok := m["query"].(string)
		if !ok {
			return nil, validationProblem("GraphQLRequest", []verr{{loc: "query", typ: "missing", msg: "Field required", input: m}})
		}
		var vars map[string]any
		if v, ok := m["variables"]; ok && v != nil {
			vm, isMap := v.(map[string]any)
			if !isMap {
				return nil, validationProblem("GraphQLRequest", []verr{{loc: "variables", typ: "dict_type", msg: "Input should be a valid dictionary", input: v}})
			}
			vars = vm
		}
		opName := ""
		if v, _, ok := alias(m, "operation_name", "operationName"); ok && v != nil {
			opName, _ = v.(string)
		}
		d.mu.Lock()
		data, errs := d.runGQL(c.auth, q, vars, opName)
		d.mu.Unlock()
		var errList any
		if len(errs) > 0 {
			var l []any
			for _, e := range errs {
				l = append(l, e.formatted())
			}
			errList = l
			if legacy {
				return nil, &problem{status: 400, typ: "graphql-error", title: "GraphQL-generated error.",
					code: "api_generic_internal-error", data: l}
			}
		}
		if legacy {
			return ok200(obj{{"data", data}})
		}
		return ok200(obj{{"data", data}, {"errors", errList}})
	}
}

func (e *gqlErr) formatted() obj {
	o := obj{{"message", e.msg}}
	if len(e.locs) > 0 {
		var ls []any
		for _, l := range e.locs {
			ls = append(ls, obj{{"line", l.line}, {"column", l.col}})
		}
		o = o.add("locations", ls)
	}
	if e.path != nil {
		o = o.add("path", e.path)
	}
	return o
}

func (d *Double) runGQL(au *authResult, src string, vars map[string]any, opName string) (any, []*gqlErr) {
	doc, perr := parseGQL(src)
	if perr != nil {
		return nil, []*gqlErr{perr}
	}
	x := &gqlExec{d: d, au: au, schema: gqlSchema(), doc: doc}
	var op *gqlOp
	switch {
	case opName != "":
		for _, o := range doc.ops {
			if o.name == opName {
				op = o
			}
		}
		if op == nil {
			return nil, []*gqlErr{{msg: fmt.Sprintf("Unknown operation named '%s'.", opName)}}
		}
	case len(doc.ops) == 1:
		op = doc.ops[0]
	case len(doc.ops) == 0:
		return nil, []*gqlErr{{msg: "Must provide an operation."}}
	default:
		return nil, []*gqlErr{{msg: "Must provide operation name if query contains multiple operations."}}
	}
	// validation
	for _, o := range doc.ops {
		root := "Query"
		if o.kind != "query" {
			if o.kind == "mutation" {
				return nil, []*gqlErr{{msg: "double: mutations of the legacy schema are not implemented", locs: []gqlPos{o.pos}}}
			}
			return nil, []*gqlErr{{msg: "Schema is not configured to execute subscription operation.", locs: []gqlPos{o.pos}}}
		}
		x.validate(x.schema[root], o.sels, map[string]bool{})
	}
	if len(x.errs) > 0 {
		return nil, x.errs
	}
	// variables
	x.vars = map[string]any{}
	for _, vd := range op.vars {
		v, ok := vars[vd.name]
		if !ok {
			if vd.def != nil {
				dv, _ := x.literal(vd.def, vd.typ)
				x.vars[vd.name] = dv
				continue
			}
			if strings.HasSuffix(vd.typ, "!") {
				x.errs = append(x.errs, &gqlErr{msg: fmt.Sprintf("Variable '$%s' of required type '%s' was not provided.", vd.name, vd.typ)})
			}
			continue
		}
		cv, err := coerceJSON(v, vd.typ)
		if err != "" {
			x.errs = append(x.errs, &gqlErr{msg: fmt.Sprintf("Variable '$%s' got invalid value %s; %s", vd.name, pyDumps(jsonToValue(v)), err)})
			continue
		}
		x.vars[vd.name] = cv
	}
	if len(x.errs) > 0 {
		return nil, x.errs
	}
	data, _ := x.selectObject(x.schema["Query"], nil, op.sels, []any{})
	return data, x.errs
}

func (x *gqlExec) validate(t *gType, sels []*gqlSel, seen map[string]bool) {
	for _, s := range sels {
		switch {
		case s.spread != "":
			f := x.doc.frags[s.spread]
			if f == nil {
				x.errs = append(x.errs, &gqlErr{msg: fmt.Sprintf("Unknown fragment '%s'.", s.spread), locs: []gqlPos{s.pos}})
				continue
			}
			if seen[s.spread] {
				continue
			}
			seen[s.spread] = true
			if ft := x.schema[f.typeCond]; ft != nil && ft.name == t.name {
				x.validate(t, f.sels, seen)
			} else if ft == nil {
				x.errs = append(x.errs, &gqlErr{msg: fmt.Sprintf("Unknown type '%s'.", f.typeCond), locs: []gqlPos{s.pos}})
			}
		case s.inline:
			if s.typeCond != "" && s.typeCond != t.name {
				if x.schema[s.typeCond] == nil {
					x.errs = append(x.errs, &gqlErr{msg: fmt.Sprintf("Unknown type '%s'.", s.typeCond), locs: []gqlPos{s.pos}})
				}
				continue
			}
			x.validate(t, s.sub, seen)
		default:
			if s.name == "__typename" {
				continue
			}
			f := t.fields[s.name]
			if f == nil {
				x.errs = append(x.errs, &gqlErr{msg: fmt.Sprintf("Cannot query field '%s' on type '%s'.", s.name, t.name), locs: []gqlPos{s.pos}})
				continue
			}
			given := map[string]bool{}
			for _, a := range s.args {
				given[a.name] = true
				var ad *gArg
				for i := range f.args {
					if f.args[i].name == a.name {
						ad = &f.args[i]
					}
				}
				if ad == nil {
					x.errs = append(x.errs, &gqlErr{msg: fmt.Sprintf("Unknown argument '%s' on field '%s.%s'.", a.name, t.name, s.name), locs: []gqlPos{a.pos}})
					continue
				}
				if a.val.kind != "var" {
					if _, err := x.literal(a.val, ad.typ); err != "" {
						x.errs = append(x.errs, &gqlErr{msg: err, locs: []gqlPos{a.val.pos}})
					}
				}
			}
			for _, ad := range f.args {
				if strings.HasSuffix(ad.typ, "!") && !ad.hasDef && !given[ad.name] {
					x.errs = append(x.errs, &gqlErr{msg: fmt.Sprintf("Field '%s' argument '%s' of type '%s' is required, but it was not provided.", s.name, ad.name, ad.typ), locs: []gqlPos{s.pos}})
				}
			}
			bt := baseType(f.typ)
			if scalarTypes[bt] {
				if s.hasSub {
					x.errs = append(x.errs, &gqlErr{msg: fmt.Sprintf("Field '%s' must not have a selection since type '%s' has no subfields.", s.name, f.typ), locs: []gqlPos{s.pos}})
				}
			} else {
				if !s.hasSub {
					x.errs = append(x.errs, &gqlErr{msg: fmt.Sprintf("Field '%s' of type '%s' must have a selection of subfields. Did you mean '%s { ... }'?", s.name, f.typ, s.name), locs: []gqlPos{s.pos}})
					continue
				}
				x.validate(x.schema[bt], s.sub, seen)
			}
		}
	}
}

// literal coerces an AST value to an argument type.
func (x *gqlExec) literal(v *gqlValue, typ string) (any, string) {
	if v.kind == "var" {
		val, ok := x.vars[v.raw]
		if !ok {
			return nil, ""
		}
		return val, ""
	}
	nonNull := strings.HasSuffix(typ, "!")
	t := strings.TrimSuffix(typ, "!")
	if v.kind == "null" {
		if nonNull {
			return nil, fmt.Sprintf("Expected value of type '%s', found null.", typ)
		}
		return nil, ""
	}
	if strings.HasPrefix(t, "[") {
		inner := t[1 : len(t)-1]
		if v.kind != "list" {
			e, err := x.literal(v, inner)
			if err != "" {
				return nil, err
			}
			return []any{e}, ""
		}
		var out []any
		for _, e := range v.list {
			c, err := x.literal(e, inner)
			if err != "" {
				return nil, err
			}
			out = append(out, c)
		}
		return out, ""
	}
	printed := printValue(v)
	switch t {
	case "Int":
		if v.kind != "int" {
			return nil, "Int cannot represent non-integer value: " + printed
		}
		n, err := strconv.ParseInt(v.raw, 10, 64)
		if err != nil || n > math.MaxInt32 || n < math.MinInt32 {
			return nil, "Int cannot represent non 32-bit signed integer value: " + printed
		}
		return int(n), ""
	case "Float":
		if v.kind != "int" && v.kind != "float" {
			return nil, "Float cannot represent non numeric value: " + printed
		}
		f, _ := strconv.ParseFloat(v.raw, 64)
		return f, ""
	case "String", "UUID", "ID":
		if v.kind == "int" && t == "ID" {
			return v.raw, ""
		}
		if v.kind != "string" {
			return nil, t + " cannot represent a non string value: " + printed
		}
		if t == "UUID" {
			if _, ok := canonUUID(v.raw); !ok {
				return nil, fmt.Sprintf("Expected value of type 'UUID', found %s; badly formed hexadecimal UUID string", printed)
			}
		}
		return v.raw, ""
	case "Boolean":
		if v.kind != "bool" {
			return nil, "Boolean cannot represent a non boolean value: " + printed
		}
		return v.raw == "true", ""
	}
	return v.raw, ""
}

func printValue(v *gqlValue) string {
	switch v.kind {
	case "string":
		b, _ := json.Marshal(v.raw)
		return string(b)
	case "list":
		var parts []string
		for _, e := range v.list {
			parts = append(parts, printValue(e))
		}
		return "[" + strings.Join(parts, ", ") + "]"
	case "object":
		var parts []string
		for _, f := range v.fields {
			parts = append(parts, f.name+": "+printValue(f.val))
		}
		return "{" + strings.Join(parts, ", ") + "}"
	case "null":
		return "null"
	case "var":
		return "$" + v.raw
	}
	return v.raw
}

func coerceJSON(v any, typ string) (any, string) {
	nonNull := strings.HasSuffix(typ, "!")
	t := strings.TrimSuffix(typ, "!")
	if v == nil {
		if nonNull {
			return nil, fmt.Sprintf("Expected non-nullable type '%s' not to be null.", typ)
		}
		return nil, ""
	}
	if strings.HasPrefix(t, "[") {
		inner := t[1 : len(t)-1]
		l, ok := v.([]any)
		if !ok {
			c, err := coerceJSON(v, inner)
			return []any{c}, err
		}
		out := make([]any, len(l))
		for i, e := range l {
			c, err := coerceJSON(e, inner)
			if err != "" {
				return nil, err
			}
			out[i] = c
		}
		return out, ""
	}
	switch t {
	case "Int":
		n, ok := v.(json.Number)
		if !ok {
			return nil, "Int cannot represent non-integer value: " + pyDumps(jsonToValue(v))
		}
		i, err := strconv.ParseInt(string(n), 10, 32)
		if err != nil {
			return nil, "Int cannot represent non-integer value: " + string(n)
		}
		return int(i), ""
	case "Float":
		n, ok := v.(json.Number)
		if !ok {
			return nil, "Float cannot represent non numeric value: " + pyDumps(jsonToValue(v))
		}
		f, _ := strconv.ParseFloat(string(n), 64)
		return f, ""
	case "String", "ID", "UUID":
		s, ok := v.(string)
		if !ok {
			if n, isNum := v.(json.Number); isNum && t == "ID" {
				return string(n), ""
			}
			return nil, t + " cannot represent a non string value: " + pyDumps(jsonToValue(v))
		}
		if t == "UUID" {
			if _, okU := canonUUID(s); !okU {
				return nil, "badly formed hexadecimal UUID string"
			}
		}
		return s, ""
	case "Boolean":
		b, ok := v.(bool)
		if !ok {
			return nil, "Boolean cannot represent a non boolean value: " + pyDumps(jsonToValue(v))
		}
		return b, ""
	}
	return v, ""
}

func (x *gqlExec) included(s *gqlSel) bool {
	for _, dv := range s.directives {
		if dv.name != "include" && dv.name != "skip" {
			continue
		}
		cond := false
		for _, a := range dv.args {
			if a.name == "if" {
				v, _ := x.literal(a.val, "Boolean!")
				cond, _ = v.(bool)
			}
		}
		if dv.name == "include" && !cond || dv.name == "skip" && cond {
			return false
		}
	}
	return true
}

// collect flattens fragments into the field list.
func (x *gqlExec) collect(t *gType, sels []*gqlSel, out *[]*gqlSel, seen map[string]bool) {
	for _, s := range sels {
		if !x.included(s) {
			continue
		}
		switch {
		case s.spread != "":
			f := x.doc.frags[s.spread]
			if f == nil || seen[s.spread] || f.typeCond != t.name {
				continue
			}
			seen[s.spread] = true
			x.collect(t, f.sels, out, seen)
		case s.inline:
			if s.typeCond == "" || s.typeCond == t.name {
				x.collect(t, s.sub, out, seen)
			}
		default:
			*out = append(*out, s)
		}
	}
}

func (x *gqlExec) selectObject(t *gType, parent any, sels []*gqlSel, path []any) (any, bool) {
	var fields []*gqlSel
	x.collect(t, sels, &fields, map[string]bool{})
	out := obj{}
	idx := map[string]int{}
	for _, s := range fields {
		key := s.name
		if s.alias != "" {
			key = s.alias
		}
		if _, dup := idx[key]; dup {
			continue
		}
		if s.name == "__typename" {
			idx[key] = len(out)
			out = append(out, kv{key, t.name})
			continue
		}
		f := t.fields[s.name]
		args := map[string]any{}
		for _, ad := range f.args {
			if ad.hasDef {
				args[ad.name] = ad.def
			}
		}
		for _, a := range s.args {
			var ad gArg
			for _, d := range f.args {
				if d.name == a.name {
					ad = d
				}
			}
			v, _ := x.literal(a.val, ad.typ)
			if a.val.kind == "var" {
				if _, ok := x.vars[a.val.raw]; !ok {
					continue
				}
			}
			args[a.name] = v
		}
		fpath := append(append([]any(nil), path...), key)
		val, err := f.res(x, parent, args)
		var done any
		ok := true
		if err != nil {
			x.errs = append(x.errs, &gqlErr{msg: err.Error(), locs: []gqlPos{s.pos}, path: fpath})
			done, ok = nil, !strings.HasSuffix(f.typ, "!")
		} else {
			done, ok = x.complete(f.typ, val, s, fpath)
		}
		if !ok {
			return nil, false
		}
		idx[key] = len(out)
		out = append(out, kv{key, done})
	}
	return out, true
}

// complete serializes a resolved value; false propagates a null into a
// non-null parent.
func (x *gqlExec) complete(typ string, val any, s *gqlSel, path []any) (any, bool) {
	if strings.HasSuffix(typ, "!") {
		v, ok := x.complete(strings.TrimSuffix(typ, "!"), val, s, path)
		if !ok || v == nil {
			if ok {
				x.errs = append(x.errs, &gqlErr{msg: fmt.Sprintf("Cannot return null for non-nullable field %s.", s.name), locs: []gqlPos{s.pos}, path: path})
			}
			return nil, false
		}
		return v, true
	}
	if val == nil {
		return nil, true
	}
	if strings.HasPrefix(typ, "[") {
		inner := typ[1 : len(typ)-1]
		l, _ := val.([]any)
		out := make([]any, 0, len(l))
		for i, e := range l {
			v, ok := x.complete(inner, e, s, append(append([]any(nil), path...), i))
			if !ok {
				return nil, true
			}
			out = append(out, v)
		}
		return out, true
	}
	if scalarTypes[typ] {
		v, err := serializeScalar(typ, val)
		if err != "" {
			x.errs = append(x.errs, &gqlErr{msg: err, locs: []gqlPos{s.pos}, path: path})
			return nil, true
		}
		return v, true
	}
	v, ok := x.selectObject(x.schema[typ], val, s.sub, path)
	if !ok {
		return nil, true
	}
	return v, true
}

type jsonString struct{ v any }

func serializeScalar(typ string, val any) (any, string) {
	switch typ {
	case "DateTime":
		switch t := val.(type) {
		case time.Time:
			return isoformat(t), ""
		case string:
			// graphene 3: a str is not a datetime
			return nil, "DateTime cannot represent value: " + pyStrRepr(t)
		}
		return nil, "DateTime cannot represent value"
	case "JSONString":
		if js, ok := val.(jsonString); ok {
			return pyDumps(js.v), ""
		}
		return pyDumps(val), ""
	case "Int", "BigInt":
		switch n := val.(type) {
		case int:
			return n, ""
		case int64:
			return n, ""
		case float64:
			if typ == "BigInt" {
				return n, ""
			}
			return int(n), ""
		case bool:
			if n {
				return 1, ""
			}
			return 0, ""
		}
	case "Float":
		switch n := val.(type) {
		case float64:
			return n, ""
		case int:
			return float64(n), ""
		case int64:
			return float64(n), ""
		}
	case "Boolean":
		if b, ok := val.(bool); ok {
			return b, ""
		}
	case "String", "ID", "UUID":
		if s, ok := val.(string); ok {
			return s, ""
		}
		return fmt.Sprint(val), ""
	case "UUIDFloatMap":
		return val, ""
	}
	return val, ""
}
