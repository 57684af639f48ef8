package conf

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// writeTree writes files (relative name -> content) under a new
// temporary directory and returns it.
func writeTree(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, body := range files {
		p := filepath.Join(dir, name)
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(body), 0o644))
	}
	return dir
}

func nodeNames(c *Config) []string {
	var out []string
	for _, n := range c.Nodes {
		out = append(out, n.Name)
	}
	return out
}

func TestParseFileInclude(t *testing.T) {
	other := writeTree(t, map[string]string{
		"abs.conf":    "NodeName=abs1\n",
		"absrel.conf": "Include rel.conf\n", // rel.conf: slurm.conf's directory, not this one
		"rel.conf":    "NodeName=wrongdir1\n",
	})
	cases := []struct {
		name  string
		files map[string]string // "slurm.conf" is the one parsed
		nodes []string
		check func(t *testing.T, c *Config)
	}{
		{
			name: "relative to slurm.conf's directory",
			files: map[string]string{
				"slurm.conf": "ClusterName=c\nInclude nodes.conf\nPartitionName=p Nodes=n[1-2] Default=YES\n",
				"nodes.conf": "NodeName=n[1-2] CPUs=4\n",
			},
			nodes: []string{"n1", "n2"},
			check: func(t *testing.T, c *Config) {
				require.Equal(t, uint16(4), c.Nodes[0].CPUs)
				require.Equal(t, []string{"n1", "n2"}, c.Partitions[0].Nodes)
			},
		},
		{
			name:  "absolute",
			files: map[string]string{"slurm.conf": "Include " + filepath.Join(other, "abs.conf") + "\n"},
			nodes: []string{"abs1"},
		},
		{
			name: "keyword in any case, tab or spaces, trailing comment",
			files: map[string]string{
				"slurm.conf": "INCLUDE a.conf\ninclude\tb.conf\niNcLuDe   c.conf   # the GPUs\n",
				"a.conf":     "NodeName=a1\n", "b.conf": "NodeName=b1\n", "c.conf": "NodeName=c1\n",
			},
			nodes: []string{"a1", "b1", "c1"},
		},
		{
			name: "nested: a relative name in an included file is still slurm.conf's directory",
			files: map[string]string{
				"slurm.conf":   "Include sub/a.conf\nNodeName=top1\n",
				"sub/a.conf":   "NodeName=a1\nInclude b.conf\n",
				"b.conf":       "NodeName=b1\n",
				"sub/b.conf":   "NodeName=wrong1\n", // where Slurm 22.05 would have looked
				"unused.conf":  "",
				"sub/c/d.conf": "",
			},
			nodes: []string{"a1", "b1", "top1"},
		},
		{
			name: "absolute include whose own relative include is slurm.conf's directory",
			files: map[string]string{
				"slurm.conf": "Include " + filepath.Join(other, "absrel.conf") + "\n",
				"rel.conf":   "NodeName=right1\n",
			},
			nodes: []string{"right1"},
		},
		{
			name: "included lines are read in place: defaults and keys carry across",
			files: map[string]string{
				"slurm.conf":    "Include defaults.conf\nNodeName=n1\nInclude parts.conf\n",
				"defaults.conf": "NodeName=DEFAULT CPUs=8 RealMemory=1000\nPartitionName=DEFAULT MaxTime=60\nSlurmctldPort=7000\n",
				"parts.conf":    "PartitionName=p Nodes=n1\n",
			},
			nodes: []string{"n1"},
			check: func(t *testing.T, c *Config) {
				require.Equal(t, uint16(8), c.Nodes[0].CPUs)
				require.Equal(t, uint32(60), c.Partitions[0].MaxTime)
				require.Equal(t, "7000", c.Get("SlurmctldPort", ""))
			},
		},
		{
			name: "%c is ClusterName, lower-cased",
			files: map[string]string{
				"slurm.conf":               "ClusterName=MyCluster\nInclude %c-nodes.conf\nInclude %c/%c.conf\n",
				"mycluster-nodes.conf":     "NodeName=n1\n",
				"mycluster/mycluster.conf": "NodeName=n2\n",
			},
			nodes: []string{"n1", "n2"},
		},
		{
			name: "an empty included file is fine, and the same file may be included twice",
			files: map[string]string{
				"slurm.conf": "Include empty.conf\nInclude keys.conf\nInclude keys.conf\n",
				"empty.conf": "", "keys.conf": "MailProg=/bin/true\n",
			},
		},
		{
			name: "an Include split over two lines",
			files: map[string]string{
				"slurm.conf": "Include \\\n  nodes.conf\n",
				"nodes.conf": "NodeName=n1\n",
			},
			nodes: []string{"n1"},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := writeTree(t, tc.files)
			c, err := ParseFile(filepath.Join(dir, "slurm.conf"))
			require.NoError(t, err)
			require.Equal(t, tc.nodes, nodeNames(c))
			if tc.check != nil {
				tc.check(t, c)
			}
		})
	}
}

func TestParseFileIncludeErrors(t *testing.T) {
	deep := map[string]string{"slurm.conf": "Include d1.conf\n"}
	for i := 1; i <= MaxIncludeDepth+1; i++ {
		deep[fmt.Sprintf("d%d.conf", i)] = fmt.Sprintf("Include d%d.conf\n", i+1)
	}
	deep[fmt.Sprintf("d%d.conf", MaxIncludeDepth+2)] = "NodeName=n1\n"
	fine := map[string]string{"slurm.conf": "Include d1.conf\n"}
	for i := 1; i < MaxIncludeDepth; i++ {
		fine[fmt.Sprintf("d%d.conf", i)] = fmt.Sprintf("Include d%d.conf\n", i+1)
	}
	fine[fmt.Sprintf("d%d.conf", MaxIncludeDepth)] = "NodeName=n1\n"
	dir := writeTree(t, fine)
	_, err := ParseFile(filepath.Join(dir, "slurm.conf"))
	require.NoError(t, err, "%d levels are allowed", MaxIncludeDepth)

	cases := []struct {
		name  string
		files map[string]string
		want  []string // substrings of the error; "@/" stands for the directory
	}{
		{
			name:  "missing file names the including file and line",
			files: map[string]string{"slurm.conf": "ClusterName=c\n\nInclude nodes.conf\n"},
			want:  []string{"@/slurm.conf:3: Include nodes.conf:", "@/nodes.conf", "no such file"},
		},
		{
			name: "missing file in a nested include names both lines",
			files: map[string]string{
				"slurm.conf": "# nodes\nInclude a.conf\n",
				"a.conf":     "NodeName=a1\nInclude gone.conf\n",
			},
			want: []string{"@/a.conf:2: Include gone.conf:", "(included from @/slurm.conf:2)"},
		},
		{
			name: "an error inside an included file names that file and line",
			files: map[string]string{
				"slurm.conf": "Include nodes.conf\n",
				"nodes.conf": "NodeName=a1\nNodeName=a2 CPUs=many\n",
			},
			want: []string{"@/nodes.conf:2: node a2", "(included from @/slurm.conf:1)"},
		},
		{
			name: "a node defined in two files",
			files: map[string]string{
				"slurm.conf": "Include nodes.conf\nNodeName=n[1-3]\n",
				"nodes.conf": "NodeName=n2\n",
			},
			want: []string{"@/slurm.conf:2: node n2 defined twice (first at @/nodes.conf:1)"},
		},
		{
			name: "the same nodes included twice",
			files: map[string]string{
				"slurm.conf": "Include nodes.conf\nInclude nodes.conf\n",
				"nodes.conf": "NodeName=n1\n",
			},
			want: []string{"@/nodes.conf:1: node n1 defined twice (first at @/nodes.conf:1)", "(included from @/slurm.conf:2)"},
		},
		{
			name: "unknown node in a partition from an included file",
			files: map[string]string{
				"slurm.conf": "NodeName=n1\nInclude parts.conf\n",
				"parts.conf": "\nPartitionName=p Nodes=n[1-2]\n",
			},
			want: []string{"@/parts.conf:2: partition p: unknown node n2"},
		},
		{
			name:  "a file including itself",
			files: map[string]string{"slurm.conf": "NodeName=n1\nInclude slurm.conf\n"},
			want:  []string{"@/slurm.conf:2: Include slurm.conf: include cycle: @/slurm.conf -> @/slurm.conf"},
		},
		{
			name: "a longer cycle",
			files: map[string]string{
				"slurm.conf": "Include a.conf\n",
				"a.conf":     "Include b.conf\n",
				"b.conf":     "Include a.conf\n",
			},
			want: []string{"@/b.conf:1: Include a.conf: include cycle: @/a.conf -> @/b.conf -> @/a.conf"},
		},
		{
			name:  "nesting past the limit",
			files: deep,
			want:  []string{fmt.Sprintf("nested more than %d deep", MaxIncludeDepth)},
		},
		{
			name: "a glob is not expanded",
			files: map[string]string{
				"slurm.conf":     "Include nodes.d/*.conf\n",
				"nodes.d/a.conf": "NodeName=a1\n",
			},
			want: []string{"@/slurm.conf:1: Include nodes.d/*.conf: Slurm does not expand glob patterns"},
		},
		{
			name:  "%c without ClusterName before it",
			files: map[string]string{"slurm.conf": "Include %c.conf\nClusterName=late\n", "late.conf": ""},
			want:  []string{"@/slurm.conf:1: Include %c.conf: %c stands for ClusterName"},
		},
		{
			name:  "two file names",
			files: map[string]string{"slurm.conf": "Include a.conf b.conf\n", "a.conf": "", "b.conf": ""},
			want:  []string{"@/slurm.conf:1: Include takes one file name; \"b.conf\" follows a.conf"},
		},
		{
			name:  "no file name",
			files: map[string]string{"slurm.conf": "ClusterName=c\ninclude   \n"},
			want:  []string{"@/slurm.conf:2: Include needs a file name"},
		},
		{
			name:  "indented Include",
			files: map[string]string{"slurm.conf": "  Include a.conf\n", "a.conf": ""},
			want:  []string{"@/slurm.conf:1: Include must start at the beginning of the line"},
		},
		{
			name:  "Include= is not an Include",
			files: map[string]string{"slurm.conf": "Include=a.conf\n", "a.conf": ""},
			want:  []string{"@/slurm.conf:1: Include takes a file name after whitespace"},
		},
		{
			name:  "a directory is not a regular file",
			files: map[string]string{"slurm.conf": "Include sub\n", "sub/x.conf": ""},
			want:  []string{"@/slurm.conf:1: Include sub:", "not a regular file"},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := writeTree(t, tc.files)
			_, err := ParseFile(filepath.Join(dir, "slurm.conf"))
			require.Error(t, err)
			for _, w := range tc.want {
				require.Contains(t, err.Error(), strings.ReplaceAll(w, "@/", dir+"/"))
			}
		})
	}
}

func TestParseFileMissing(t *testing.T) {
	_, err := ParseFile(filepath.Join(t.TempDir(), "slurm.conf"))
	require.ErrorIs(t, err, os.ErrNotExist)
}

func TestParseFileRelativePath(t *testing.T) {
	// A relative slurm.conf path: its includes are relative to its
	// directory, which is relative to the working directory.
	dir := writeTree(t, map[string]string{"etc/slurm.conf": "Include nodes.conf\n", "etc/nodes.conf": "NodeName=n1\n"})
	t.Chdir(dir)
	c, err := ParseFile("etc/slurm.conf")
	require.NoError(t, err)
	require.Equal(t, []string{"n1"}, nodeNames(c))
	t.Chdir(filepath.Join(dir, "etc"))
	c, err = ParseFile("slurm.conf")
	require.NoError(t, err)
	require.Equal(t, []string{"n1"}, nodeNames(c))
}

func TestParseFileFIFOInclude(t *testing.T) {
	dir := writeTree(t, map[string]string{"slurm.conf": "Include fifo\n"})
	if err := mkfifo(filepath.Join(dir, "fifo")); err != nil {
		t.Skip("no mkfifo:", err)
	}
	// Opening a FIFO for reading would block until a writer came: the
	// parse must refuse it without opening it.
	errc := make(chan error, 1)
	go func() {
		_, err := ParseFile(filepath.Join(dir, "slurm.conf"))
		errc <- err
	}()
	select {
	case err := <-errc:
		require.ErrorContains(t, err, "not a regular file")
	case <-time.After(10 * time.Second):
		// Let the blocked open finish so the test binary can exit.
		if w, err := os.OpenFile(filepath.Join(dir, "fifo"), os.O_WRONLY, 0); err == nil {
			w.Close()
		}
		t.Fatal("ParseFile blocked opening a FIFO")
	}
}

func TestParseRefusesInclude(t *testing.T) {
	for _, line := range []string{"Include nodes.conf", "include /etc/slurm/nodes.conf"} {
		_, err := Parse(strings.NewReader("ClusterName=c\n" + line + "\n"))
		require.ErrorContains(t, err, "line 2: Include ", line)
		require.ErrorContains(t, err, "conf.ParseFile", line)
	}
}
