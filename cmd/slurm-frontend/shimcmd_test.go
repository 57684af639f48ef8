package main

import (
	"bytes"
	"log"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/lablup/slurm-frontend/translate/local"
)

// The server runs the jobs' shim as root: a separate shim binary is taken
// only when no one but root can have written it or a directory above it,
// and only when it carries this binary's shim.
func TestShimCommandChecksTheBinary(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root (file ownership)")
	}
	dir := filepath.Join(t.TempDir(), "bin")
	require.NoError(t, os.Mkdir(dir, 0o755))
	shim := filepath.Join(dir, "slurm-frontend-shim")
	write := func(identity string) {
		require.NoError(t, os.WriteFile(shim, []byte("#!/bin/sh\necho '"+identity+"'\n"), 0o755))
		require.NoError(t, os.Chmod(shim, 0o755))
		require.NoError(t, os.Chown(shim, 0, 0))
	}
	var logs bytes.Buffer
	logger := log.New(&logs, "", 0)

	write(local.ShimIdentity())
	require.Equal(t, []string{shim, "shim"}, shimCommand(shim, logger), logs.String())

	// Through a symbolic link: the target is what is checked and run (a
	// link could be pointed elsewhere by whoever can write its directory).
	link := filepath.Join(t.TempDir(), "link")
	require.NoError(t, os.Symlink(shim, link))
	require.Equal(t, []string{shim, "shim"}, shimCommand(link, logger), logs.String())

	refused := func(why string) {
		t.Helper()
		logs.Reset()
		require.Nil(t, shimCommand(shim, logger))
		require.Contains(t, logs.String(), why)
	}
	require.NoError(t, os.Chown(shim, 64030, 64030))
	refused("can be written by others than root")
	require.NoError(t, os.Chown(shim, 0, 0))

	require.NoError(t, os.Chmod(shim, 0o757))
	refused("can be written by others than root")
	require.NoError(t, os.Chmod(shim, 0o755))

	require.NoError(t, os.Chmod(dir, 0o775))
	refused("can be written by others than root")
	require.NoError(t, os.Chmod(dir, 0o755))

	write("slurm-frontend-shim protocol 0")
	refused("carries another shim")

	write(local.ShimIdentity())
	require.NoError(t, os.Chmod(shim, 0o644))
	refused("not an executable file")

	// Not named and not next to this executable: this binary's own.
	logs.Reset()
	require.Nil(t, shimCommand("", logger))
	require.False(t, strings.Contains(logs.String(), "not using"), logs.String())
}
