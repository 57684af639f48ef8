package jobopt

import "strings"

// getopt_long as glibc (2.26 and later: every release here) runs it for
// the Slurm clients: optstring "+..." (REQUIRE_ORDER: options end at the
// first non-option argument, or after "--"), unique prefixes of long
// names, "--name=value" and "--name value", "-n4" and "-n 4", bundled
// short flags, optional arguments only when attached.

// gOpt is one option getopt returned.
type gOpt struct {
	def     *optDef // nil for an error ('?')
	arg     *string // nil: no argument (flags, or an optional one left out)
	written string  // as written: "-p", "--part", "--partition"
	argi    int     // index in argv of the token that named the option
}

// getopt walks args (args[0] is the program name) over the options in
// defs (those of the client and release, in table order). It returns the
// options in order, the index of the first argument it did not consume
// (optind), and, when it met an error, the error line glibc prints (the
// last element of opts is then the error, def == nil).
func getopt(prog string, args []string, defs []*optDef) (opts []gOpt, optind int, errLine string) {
	optind = 1
	short := shortIndex(defs)
	for optind < len(args) {
		a := args[optind]
		if a == "--" {
			optind++
			return opts, optind, ""
		}
		if len(a) < 2 || a[0] != '-' {
			return opts, optind, ""
		}
		if a[1] == '-' {
			o, line := longOpt(prog, args, &optind, defs)
			opts = append(opts, o)
			if line != "" {
				return opts, optind, line
			}
			continue
		}
		// A cluster of short options.
		argi := optind
		rest := a[1:]
		for rest != "" {
			c := rest[0]
			rest = rest[1:]
			if rest == "" {
				optind++
			}
			d, ok := short[c]
			if !ok || c == ':' || c == ';' {
				return append(opts, gOpt{written: "-" + string(c), argi: argi}),
					optind, prog + ": invalid option -- '" + string(c) + "'"
			}
			o := gOpt{def: d, written: "-" + string(c), argi: argi}
			switch {
			case d == plusDef:
				o.def = plusDef
			case d.has == optArg:
				if rest != "" {
					s := rest
					o.arg = &s
					optind++
					rest = ""
				}
			case d.has == reqArg:
				if rest != "" {
					s := rest
					o.arg = &s
					optind++
					rest = ""
				} else if optind >= len(args) {
					return append(opts, gOpt{written: o.written, argi: argi}),
						optind, prog + ": option requires an argument -- '" + string(c) + "'"
				} else {
					s := args[optind]
					o.arg = &s
					optind++
				}
			}
			opts = append(opts, o)
		}
	}
	return opts, optind, ""
}

// plusDef stands for '+': glibc finds it in the optstring ("+...") and
// returns it as an option character no Slurm option carries.
var plusDef = &optDef{val: "+", has: noArg}

func shortIndex(defs []*optDef) map[byte]*optDef {
	m := map[byte]*optDef{'+': plusDef}
	for _, d := range defs {
		if len(d.val) == 1 && d.val != "?" {
			if _, dup := m[d.val[0]]; !dup {
				m[d.val[0]] = d
			}
		}
	}
	return m
}

func longOpt(prog string, args []string, optind *int, defs []*optDef) (gOpt, string) {
	a := args[*optind]
	next := a[2:]
	name, val, hasVal := strings.Cut(next, "=")
	o := gOpt{written: "--" + name, argi: *optind}
	var found *optDef
	for _, d := range defs {
		if d.name != "" && d.name == name {
			found = d
			break
		}
	}
	if found == nil {
		var ambig []*optDef
		for _, d := range defs {
			if d.name == "" || !strings.HasPrefix(d.name, name) {
				continue
			}
			if found == nil {
				found = d
			} else if found.has != d.has || found.val != d.val {
				if len(ambig) == 0 {
					ambig = append(ambig, found)
				}
				ambig = append(ambig, d)
			}
		}
		if len(ambig) > 0 {
			var b strings.Builder
			b.WriteString(prog + ": option '--" + next + "' is ambiguous; possibilities:")
			// glibc lists them in table order.
			for _, d := range defs {
				for _, x := range ambig {
					if x == d {
						b.WriteString(" '--" + d.name + "'")
					}
				}
			}
			*optind++
			return o, b.String()
		}
	}
	if found == nil {
		*optind++
		return o, prog + ": unrecognized option '--" + next + "'"
	}
	*optind++
	o.def = found
	if hasVal {
		if found.has == noArg {
			o.def = nil
			return o, prog + ": option '--" + found.name + "' doesn't allow an argument"
		}
		o.arg = &val
	} else if found.has == reqArg {
		if *optind < len(args) {
			s := args[*optind]
			o.arg = &s
			*optind++
		} else {
			o.def = nil
			return o, prog + ": option '--" + found.name + "' requires an argument"
		}
	}
	return o, ""
}
