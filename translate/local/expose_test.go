package local

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// A spool under a relative state directory (serve --state-dir st) ends
// the walk up to "/" at "." instead of spinning there for ever (a shim
// once did, at 100 % CPU, and its job never started).
func TestExposeForUserRelative(t *testing.T) {
	dir := t.TempDir()
	wd, _ := os.Getwd()
	defer os.Chdir(wd)
	os.Chdir(dir)
	os.MkdirAll(filepath.Join("st", "spool", "job"), 0o755)
	done := make(chan error, 1)
	go func() {
		_, err := exposeForUser(filepath.Join("st", "spool", "job"), cred{uid: 64030, gid: 64030})
		done <- err
	}()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("exposeForUser on a relative path did not return")
	}
}
