package conf

import (
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// memFile is an in-memory file for the fuzzer's include tree.
type memFile struct{ name string }

func (m memFile) Name() string       { return m.name }
func (m memFile) Size() int64        { return 0 }
func (m memFile) Mode() fs.FileMode  { return 0o644 }
func (m memFile) ModTime() time.Time { return time.Time{} }
func (m memFile) IsDir() bool        { return false }
func (m memFile) Sys() any           { return nil }

// parseMem parses main as /etc/slurm/slurm.conf, with files (names
// under /etc/slurm/) there to include; "self.conf" is main itself.
func parseMem(main string, files map[string]string) (*parser, *Config, error) {
	const dir = "/etc/slurm/"
	p := newParser()
	p.inc = &includer{
		open: func(path string) (io.ReadCloser, os.FileInfo, error) {
			if path == dir+"self.conf" {
				return io.NopCloser(strings.NewReader(main)), memFile{path}, nil
			}
			body, ok := files[strings.TrimPrefix(path, dir)]
			if !ok || !strings.HasPrefix(path, dir) {
				return nil, nil, &fs.PathError{Op: "open", Path: path, Err: fs.ErrNotExist}
			}
			return io.NopCloser(strings.NewReader(body)), memFile{path}, nil
		},
		same:  func(a, b os.FileInfo) bool { return a.Name() == b.Name() },
		dir:   dir,
		stack: []frame{{dir + "slurm.conf", memFile{dir + "self.conf"}}},
	}
	if err := p.parse(strings.NewReader(main), dir+"slurm.conf"); err != nil {
		return p, nil, err
	}
	c, err := p.finish()
	return p, c, err
}

var fuzzFiles = map[string]string{
	"nodes.conf":  "NodeName=x[1-4] CPUs=2 RealMemory=100\n",
	"parts.conf":  "PartitionName=xp Nodes=x[1-4]\n",
	"empty.conf":  "",
	"nested.conf": "Include nodes.conf\n",
	"c.conf":      "SlurmctldPort=1\n",
}

// FuzzParse: no input panics, hangs or allocates without bound; a
// successful parse is a valid configuration within the limits, and every
// error names its line.
func FuzzParse(f *testing.F) {
	confs, _ := filepath.Glob("../../codec/testdata/*/slurm.conf")
	for _, name := range confs {
		if b, err := os.ReadFile(name); err == nil {
			f.Add(string(b))
		}
	}
	for _, s := range []string{
		"PartitionName=p Nodes=nope\n", "NodeName=a CPUs=x\n", "NodeName=a\nNodeName=a\n", "garbage\n",
		"PartitionName=p MaxTime=1:2:3:4\n",
		"NodeName=DEFAULT CPUs=4\nNodeName=n[1-3] NodeAddr=10.0.0.[1-3]\nPartitionName=p Nodes=n[1-3] Default=YES MaxTime=1-2:3:4\n",
		"NodeName=n[1-99999999]\n", "NodeName=n[1-65536]\nNodeName=m1\n",
		"NodeName=n1 \\\n CPUs=4 \\\n",
		"ClusterName=C\nInclude nodes.conf\nInclude parts.conf\n", "Include self.conf\n", "Include nested.conf\nInclude nodes.conf\n",
		"include %c.conf\n", "ClusterName=c\nINCLUDE\t%c.conf # x\n", "Include *.conf\n", "  Include empty.conf\n", "Include=nodes.conf\n",
		"Include /etc/slurm/empty.conf extra\n", "Include missing.conf\n",
		"PartitionName=p Nodes=n[1-2],n[1-2] State=UP\nNodeName=n[1-2]\n",
		"NodeName=\"a b\" Features=\"x y\"\n",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		c, err := Parse(strings.NewReader(s))
		check(t, s, c, err, "line ")

		p, c, err := parseMem(s, fuzzFiles)
		check(t, s, c, err, "/etc/slurm/")
		if p.names < 0 || p.bytes < 0 {
			t.Fatalf("host list budget overdrawn: %d names, %d bytes left", p.names, p.bytes)
		}
	})
}

func check(t *testing.T, s string, c *Config, err error, prefix string) {
	t.Helper()
	if err != nil {
		if !strings.HasPrefix(err.Error(), prefix) {
			t.Fatalf("error without its place: %v", err)
		}
		return
	}
	if len(c.Nodes) > MaxNodes {
		t.Fatalf("%d nodes", len(c.Nodes))
	}
	total := len(c.Nodes)
	for _, p := range c.Partitions {
		total += len(p.Nodes)
	}
	if total > maxHostNames {
		t.Fatalf("%d host names", total)
	}
	if err := c.Validate(); err != nil {
		t.Fatalf("parsed, but not valid: %v", err)
	}
}

func TestParseLimits(t *testing.T) {
	_, err := Parse(strings.NewReader("NodeName=n[1-99999999]\n"))
	if err == nil || !strings.Contains(err.Error(), "MAX_SLURM_NODES") {
		t.Fatalf("got %v", err)
	}
	_, err = Parse(strings.NewReader("NodeName=n[1-40000]\nNodeName=m[1-40000]\n"))
	if err == nil || !strings.HasPrefix(err.Error(), "line 2: ") {
		t.Fatalf("the node bound is for the whole file: %v", err)
	}
	c, err := Parse(strings.NewReader("NodeName=n[1-65536]\n"))
	if err != nil || len(c.Nodes) != MaxNodes {
		t.Fatalf("MaxNodes nodes are fine: %v", err)
	}
	// Partitions may name the nodes again and again, but not without end.
	var b strings.Builder
	b.WriteString("NodeName=n[1-65536]\n")
	for i := 0; i < maxHostNames/MaxNodes; i++ {
		b.WriteString("PartitionName=p" + strings.Repeat("x", i) + " Nodes=n[1-65536]\n")
	}
	_, err = Parse(strings.NewReader(b.String()))
	if err == nil || !strings.HasPrefix(err.Error(), "line 33: ") || !strings.Contains(err.Error(), "too large") {
		t.Fatalf("got %v", err)
	}
}

func TestParseContinuationAtEOF(t *testing.T) {
	c, err := Parse(strings.NewReader("NodeName=n1 \\\n  CPUs=4 \\"))
	if err != nil || len(c.Nodes) != 1 || c.Nodes[0].CPUs != 4 {
		t.Fatalf("the last line ends in a backslash: %v %+v", err, c)
	}
}
