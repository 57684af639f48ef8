package conf

import (
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestParseReferenceClusterConf(t *testing.T) {
	f, err := os.Open("../../codec/testdata/slurm-24.11/slurm.conf")
	require.NoError(t, err)
	defer f.Close()
	c, err := Parse(f)
	require.NoError(t, err)
	require.Equal(t, "refcluster", c.Get("ClusterName", ""))
	require.Equal(t, "16817", c.Get("slurmctldport", ""))
	require.Len(t, c.Nodes, 16)
	n1, n13 := c.Node("n1"), c.Node("n13")
	require.Equal(t, uint16(32), n1.CPUs)
	require.Equal(t, "127.0.0.1", n1.Addr)
	require.Equal(t, uint64(128000), n1.RealMemory)
	require.Equal(t, uint16(2), n13.Sockets)
	require.Equal(t, "gpu:4", n13.Gres)
	require.Len(t, c.Partitions, 3)
	require.True(t, c.Partitions[0].Default)
	require.Equal(t, uint32(Infinite), c.Partitions[0].MaxTime)
	require.Equal(t, uint32(60), c.Partitions[2].MaxTime)
	require.Equal(t, []string{"n1"}, c.Partitions[2].Nodes)
}

func TestParseErrors(t *testing.T) {
	for _, bad := range []string{
		"PartitionName=p Nodes=nope\n",
		"NodeName=a CPUs=x\n",
		"NodeName=a\nNodeName=a\n",
		"garbage\n",
		"PartitionName=p MaxTime=1:2:3:4\n",
	} {
		_, err := Parse(strings.NewReader(bad))
		require.Error(t, err, bad)
	}
}

func TestParseTime(t *testing.T) {
	for in, want := range map[string]uint32{"60": 60, "1:30": 2, "2:00:00": 120, "1-0": 1440, "1-2:3": 1563, "1-2:3:4": 1564, "INFINITE": Infinite} {
		got, err := ParseTime(in)
		require.NoError(t, err, in)
		require.Equal(t, want, got, in)
	}
}

// Nodes=ALL is every node the file defines (slurm.conf(5)); scontrol
// shows it as written.
func TestParsePartitionNodesAll(t *testing.T) {
	c, err := Parse(strings.NewReader("NodeName=a[1-3] CPUs=4\nNodeName=b1 CPUs=8\nPartitionName=all Nodes=ALL Default=YES\nPartitionName=some Nodes=a[1-2]\n"))
	require.NoError(t, err)
	require.Equal(t, []string{"a1", "a2", "a3", "b1"}, c.Partitions[0].Nodes)
	require.Equal(t, "ALL", c.Partitions[0].NodesExpr)
	require.Equal(t, []string{"a1", "a2"}, c.Partitions[1].Nodes)
	// No nodes in the file: it stays open for the engine's nodes.
	c, err = Parse(strings.NewReader("PartitionName=all Nodes=ALL\n"))
	require.NoError(t, err)
	require.Empty(t, c.Partitions[0].Nodes)
	require.Equal(t, "ALL", c.Partitions[0].NodesExpr)
}
