package node

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// srun --multi-prog FILE: srun sends argv [FILE, FILE's contents, extra
// arguments...] with LAUNCH_MULTI_PROG, and slurmstepd picks each task's
// command line from the contents by its rank. The format (srun(1),
// MULTIPLE PROGRAM CONFIGURATION): a line is "RANKS COMMAND ARGS...",
// RANKS "*" or a comma list of N and N-M; '#' starts a comment line; in
// the arguments %t is the task's rank and %o its offset within the
// line's ranks, single quotes keep what they enclose, a backslash keeps
// the next character or, at the end of a line, continues the arguments
// on the next line. The first line whose ranks hold the task wins; the
// extra arguments follow.

// maxMultiProgArgs is slurmstepd's MAX_ARGC bound on one task's argv.
const maxMultiProgArgs = 256

// errNoProgram: no line of the configuration holds the task's rank.
var errNoProgram = errors.New("program not specified")

// multiProgArgv is the command line of the task of rank in config.
func multiProgArgv(config string, rank uint32, extra []string) ([]string, error) {
	lines := strings.Split(config, "\n")
	skip := false // the line continues the one before (it ended in '\')
	for i := 0; i < len(lines); i++ {
		line := lines[i]
		cont := strings.HasSuffix(line, "\\")
		if skip {
			skip = cont
			continue
		}
		skip = cont
		line = strings.TrimLeft(line, " \t\r\v\f")
		if line == "" || line[0] == '#' {
			continue
		}
		cut := strings.IndexAny(line, " \t\r\v\f")
		if cut < 0 {
			return nil, fmt.Errorf("invalid MPMD configuration line %d", i+1)
		}
		offset, ok := inRanks(rank, line[:cut])
		if !ok {
			continue
		}
		argv, err := multiProgArgs(line[cut:], lines[i+1:], rank, offset)
		if err != nil {
			return nil, err
		}
		if len(argv) == 0 {
			return nil, fmt.Errorf("%w for task rank %d", errNoProgram, rank)
		}
		for _, a := range extra {
			if len(argv)+1 >= maxMultiProgArgs {
				break
			}
			argv = append(argv, a)
		}
		return argv, nil
	}
	return nil, fmt.Errorf("%w for task rank %d", errNoProgram, rank)
}

// inRanks reports whether rank is in spec ("*", or "0,2-5,9"), and its
// offset among the spec's ranks. A malformed range is ignored, as
// slurmstepd ignores it.
func inRanks(rank uint32, spec string) (uint32, bool) {
	if spec == "*" {
		return rank, true
	}
	passed := uint32(0)
	for _, r := range strings.Split(spec, ",") {
		lo, hi, isRange := strings.Cut(r, "-")
		a, err := strconv.ParseUint(lo, 10, 32)
		if err != nil {
			continue
		}
		b := a
		if isRange {
			if b, err = strconv.ParseUint(hi, 10, 32); err != nil {
				continue
			}
		}
		if uint64(rank) >= a && uint64(rank) <= b {
			return passed + rank - uint32(a), true
		}
		if b >= a {
			passed += uint32(b - a + 1)
		}
	}
	return 0, false
}

// multiProgArgs splits a line's arguments; more lines are taken when a
// backslash ends one (outside quotes, or inside them).
func multiProgArgs(s string, more []string, rank, offset uint32) ([]string, error) {
	var argv []string
	var cur strings.Builder
	have := false // cur holds an argument (possibly empty: '')
	flush := func() {
		if have && len(argv)+1 < maxMultiProgArgs {
			argv = append(argv, cur.String())
		}
		cur.Reset()
		have = false
	}
	next := func() bool { // continue on the next line
		if len(more) == 0 {
			return false
		}
		s, more = more[0], more[1:]
		return true
	}
	s = strings.TrimLeft(s, " \t\r\v\f")
	for len(s) > 0 {
		c := s[0]
		switch {
		case c == '%' && len(s) > 1:
			switch s[1] {
			case 't':
				cur.WriteString(strconv.FormatUint(uint64(rank), 10))
			case 'o':
				cur.WriteString(strconv.FormatUint(uint64(offset), 10))
			}
			have = true
			s = s[2:]
		case c == '%':
			have = true
			s = s[1:]
		case c == '\\':
			if len(s) > 1 {
				cur.WriteByte(s[1])
				have = true
				s = s[2:]
			} else if !next() {
				s = ""
			}
		case c == '\'':
			s = s[1:]
			for {
				end := strings.IndexByte(s, '\'')
				if end >= 0 {
					cur.WriteString(s[:end])
					s = s[end+1:]
					break
				}
				if rest := s; strings.HasSuffix(rest, "\\") && next() {
					cur.WriteString(rest[:len(rest)-1]) // the quote goes on past the line's end
					continue
				}
				return nil, errors.New("program arguments specification format invalid: unclosed quote")
			}
			have = true
		case c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f':
			flush()
			s = strings.TrimLeft(s, " \t\r\v\f")
		default:
			cur.WriteByte(c)
			have = true
			s = s[1:]
		}
	}
	flush()
	return argv, nil
}
