package conf

import (
	"fmt"
	"io"
	"os"
	"strings"
)

// Include follows slurmctld's rules, read in Slurm's src/common/
// parse_config.c (_parse_include_directive, _parse_for_format,
// s_p_parse_file) and src/common/read_config.c (get_extra_conf_path) at
// slurm-22-05-8-1, slurm-24-11-5-1 and slurm-26-05-3-1:
//
//   - A line is an Include when it starts (column 1) with "include" in
//     any case followed by whitespace, then one file name (up to the next
//     whitespace); anything after the name is a parse error.
//   - "%c" in the name is replaced by ClusterName, lower-cased, as set by
//     a line before the Include; without one the Include fails. There is
//     no other modifier.
//   - A name starting with "/" is used as is. Any other name is taken
//     from the directory of slurm.conf (since 23.02: get_extra_conf_path,
//     "the same directory as the slurm.conf file" in slurm.conf(5)), also
//     when the Include is itself in an included file. Slurm 22.05
//     (_add_full_path) took it from the including file's directory
//     instead; the two differ only for an Include inside an included
//     file that lives in another directory, and ParseFile follows the
//     current rule.
//   - No globbing: since 23.11.4 a name containing "*" fails the Include
//     with "Slurm does not support glob parsing" (DebugFlags=GLOB_SILENCE
//     only hides the message outside slurm.conf; 26.05 then also skips
//     the line instead of failing); 22.05 looked for a file literally
//     named so, and failed. ParseFile refuses it. "?" and "[" are
//     ordinary characters.
//   - A missing or unreadable file fails the Include, and slurmctld
//     refuses to start. (s_p_parse_file first retries stat for up to 60
//     seconds; ParseFile fails at once.) An empty file is fine.
//   - Included files nest, with no depth limit and no cycle check (a
//     file including itself recurses until slurmctld runs out of stack
//     or descriptors). ParseFile refuses cycles and nesting deeper than
//     MaxIncludeDepth, and follows at most MaxIncludes Include lines.
//
// Included lines are read as if written in place of the Include: keys,
// NodeName/PartitionName DEFAULT lines and ClusterName (for a later %c)
// carry across file boundaries.
const (
	MaxIncludeDepth = 16
	MaxIncludes     = 4096
)

// ParseFile reads the slurm.conf-syntax file at path, following Include
// lines as slurmctld does (see the rules above). Errors name the file and
// line, and for a failure inside an included file also the Include line
// that led there.
//
// Trust: included files are read with the server's privileges (root),
// wherever they are, so they and every directory on their paths must be
// as trusted as slurm.conf itself — owned by root or the operator and
// writable by no one else. Whoever can write an included file defines
// the cluster, and can Include any file the server can read (its first
// line would show in a parse error). Nothing a user controls goes into
// the path: it comes only from the configuration (a name, ClusterName for
// %c, the directory of path); neither the environment (slurmctld's
// SLURM_CONF) nor the working directory is consulted, except that a
// relative path argument is, as ever, relative to the working directory.
// Included files must be regular files: a FIFO or device could block the
// parse or feed it without end.
func ParseFile(path string) (*Config, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	p := newParser()
	p.inc = &includer{
		open: OpenRegular,
		same: os.SameFile,
		// As get_extra_conf_path: slurm.conf's path up to and including
		// its last '/', or nothing (the working directory).
		dir:   path[:strings.LastIndexByte(path, '/')+1],
		stack: []frame{{path, fi}},
	}
	if err := p.parse(f, path); err != nil {
		return nil, err
	}
	return p.finish()
}

// includer is the part of a parse that follows Include lines.
type includer struct {
	open  func(path string) (io.ReadCloser, os.FileInfo, error)
	same  func(a, b os.FileInfo) bool // os.SameFile; tests swap both
	dir   string                      // prefix for relative names
	stack []frame                     // files being read, outermost first
	count int                         // Include lines followed so far
}

type frame struct {
	path string
	info os.FileInfo
}

// OpenRegular opens an included file (or another operator's file read
// with the server's privileges, as the configless files served beside
// slurm.conf), refusing anything but a regular file before opening it
// (opening a FIFO would block until a writer came), and checks that what
// it opened is what it looked at.
func OpenRegular(path string) (io.ReadCloser, os.FileInfo, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, nil, fmt.Errorf("%s: not a regular file (%s)", path, st.Mode().Type())
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	fi, err := f.Stat()
	if err == nil && !os.SameFile(st, fi) {
		err = fmt.Errorf("%s: changed while being opened", path)
	}
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	return f, fi, nil
}

// include handles the rest of an Include line (after the keyword).
func (p *parser) include(at pos, arg string) error {
	i := 0
	for i < len(arg) && isSpace(arg[i]) {
		i++
	}
	j := i
	for j < len(arg) && !isSpace(arg[j]) {
		j++
	}
	name := arg[i:j]
	if name == "" {
		return fmt.Errorf("%s: Include needs a file name", at)
	}
	if extra := strings.TrimSpace(arg[j:]); extra != "" {
		return fmt.Errorf("%s: Include takes one file name; %q follows %s", at, extra, name)
	}
	if strings.Contains(name, "%c") {
		cluster := p.c.Keys["clustername"]
		if cluster == "" {
			return fmt.Errorf("%s: Include %s: %%c stands for ClusterName, which no line before this one sets", at, name)
		}
		name = strings.ReplaceAll(name, "%c", asciiLower(cluster))
	}
	if strings.Contains(name, "*") {
		return fmt.Errorf("%s: Include %s: Slurm does not expand glob patterns; name each file", at, name)
	}
	inc := p.inc
	if inc == nil {
		return fmt.Errorf("%s: Include %s: an Include is resolved against slurm.conf's directory, which a reader does not have; parse the file with conf.ParseFile", at, name)
	}
	path := name
	if !strings.HasPrefix(name, "/") {
		path = inc.dir + name
	}
	if len(inc.stack) > MaxIncludeDepth {
		return fmt.Errorf("%s: Include %s: includes nested more than %d deep", at, path, MaxIncludeDepth)
	}
	if inc.count++; inc.count > MaxIncludes {
		return fmt.Errorf("%s: Include %s: more than %d Include lines in all", at, path, MaxIncludes)
	}
	rc, fi, err := inc.open(path)
	if err != nil {
		return fmt.Errorf("%s: Include %s: %v", at, name, err)
	}
	defer rc.Close()
	for k, fr := range inc.stack {
		if inc.same(fr.info, fi) {
			var chain []string
			for _, f := range inc.stack[k:] {
				chain = append(chain, f.path)
			}
			return fmt.Errorf("%s: Include %s: include cycle: %s -> %s", at, name, strings.Join(chain, " -> "), path)
		}
	}
	inc.stack = append(inc.stack, frame{path, fi})
	err = p.parse(rc, path)
	inc.stack = inc.stack[:len(inc.stack)-1]
	if err != nil {
		return fmt.Errorf("%w (included from %s)", err, at)
	}
	return nil
}

// asciiLower lower-cases A-Z only, as Slurm's xstrtolower does.
func asciiLower(s string) string {
	return strings.Map(func(r rune) rune {
		if r >= 'A' && r <= 'Z' {
			return r + 'a' - 'A'
		}
		return r
	}, s)
}
