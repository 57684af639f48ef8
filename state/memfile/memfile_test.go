package memfile

import (
	"bytes"
	"io"
	"net"
	"runtime"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

func pattern(n int, seed byte) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = seed + byte(i*7)
	}
	return b
}

// waitReleased collects garbage until no more than want files are alive.
func waitReleased(t *testing.T, want int64) {
	t.Helper()
	for i := 0; i < 200; i++ {
		runtime.GC()
		if files, _ := Stats(); files <= want {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
	files, _ := Stats()
	t.Fatalf("%d memory files alive, want at most %d", files, want)
}

func TestSmallStaysOnHeapLargeGoesToFile(t *testing.T) {
	small := pattern(MinFile-1, 1)
	large := pattern(MinFile+123, 2)
	s, l := New(small), New(large)
	if _, ok := s.File(); ok {
		t.Error("a string below MinFile got a memory file")
	}
	fd, ok := l.File()
	if !ok {
		t.Fatal("a string of MinFile or more stayed on the heap")
	}
	small[0]++
	large[0]++ // New copied: the caller may reuse its buffer
	if !bytes.Equal(s.Bytes(), pattern(MinFile-1, 1)) || !bytes.Equal(l.Bytes(), pattern(MinFile+123, 2)) || l.Len() != MinFile+123 {
		t.Fatal("bytes differ from what was given")
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil || st.Size != int64(MinFile+123) {
		t.Fatalf("file size %d (%v)", st.Size, err)
	}
	runtime.KeepAlive(l)
}

// Nothing can change a file's bytes once made: not a write, not a
// writable mapping, not a resize, not removing the seals.
func TestFileIsSealed(t *testing.T) {
	x := New(pattern(64<<10, 3))
	fd, ok := x.File()
	if !ok {
		t.Fatal("no file")
	}
	if _, err := unix.Pwrite(fd, []byte("x"), 0); err != unix.EPERM {
		t.Errorf("pwrite: %v, want EPERM", err)
	}
	if _, err := unix.Mmap(fd, 0, 4096, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED); err != unix.EPERM {
		t.Errorf("writable mapping: %v, want EPERM", err)
	}
	if err := unix.Ftruncate(fd, 10); err != unix.EPERM {
		t.Errorf("ftruncate: %v, want EPERM", err)
	}
	seals, err := unix.FcntlInt(uintptr(fd), unix.F_GET_SEALS, 0)
	if err != nil || seals&unix.F_SEAL_SEAL == 0 {
		t.Errorf("seals %#x (%v), want F_SEAL_SEAL among them", seals, err)
	}
	if !bytes.Equal(x.Bytes(), pattern(64<<10, 3)) {
		t.Error("bytes changed")
	}
	runtime.KeepAlive(x)
}

// A file is closed and unmapped once its Bytes is garbage; a reply the
// kernel still holds in a socket buffer (sent by sendfile, not yet read
// by a slow client) keeps its contents all the same.
func TestReleasedFileKeepsSentPages(t *testing.T) {
	base, _ := Stats()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	client, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	server, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	want := pattern(200<<10, 4)
	func() {
		x := New(want)
		if _, ok := x.File(); !ok {
			t.Fatal("no file")
		}
		raw, _ := server.(*net.TCPConn).SyscallConn()
		var sent int64
		_ = raw.Write(func(fd uintptr) bool {
			err := x.SendTo(int(fd), &sent)
			if err != nil && err != unix.EAGAIN {
				t.Errorf("sendfile: %v", err)
			}
			return err != unix.EAGAIN
		})
	}()
	server.Close()
	waitReleased(t, base)
	// Whatever reuses the memory now must not show through.
	junk := make([]*Bytes, 0, 8)
	for i := 0; i < 8; i++ {
		junk = append(junk, New(pattern(200<<10, 0xEE)))
	}
	got, err := io.ReadAll(client)
	if err != nil || !bytes.Equal(got, want) {
		t.Fatalf("read %d bytes (%v); equal to what was sent: %v", len(got), err, bytes.Equal(got, want))
	}
	runtime.KeepAlive(junk)
}

// Over the descriptor budget, or switched off, strings stay on the heap.
func TestBudgetAndSwitch(t *testing.T) {
	defer SetBudget(int(budget.Load()))
	files, _ := Stats()
	SetBudget(int(files))
	if _, ok := New(pattern(MinFile, 5)).File(); ok {
		t.Error("a file beyond the budget")
	}
	SetBudget(int(files) + 10)
	SetEnabled(false)
	if _, ok := New(pattern(MinFile, 5)).File(); ok {
		t.Error("a file while switched off")
	}
	SetEnabled(true)
	x := New(pattern(MinFile, 5))
	if _, ok := x.File(); !ok {
		t.Error("no file within the budget")
	}
	if n, total := Stats(); n != files+1 || total < MinFile {
		t.Errorf("Stats = %d files, %d bytes after one more", n, total)
	}
	runtime.KeepAlive(x)
}

// Files dropped without heap garbage beside them (a listing re-encoded
// over and over) are still released: memory files alive stay within
// about twice what is kept, not what was ever made.
func TestDroppedFilesAreCollected(t *testing.T) {
	waitReleased(t, 0)
	keep := New(pattern(8<<20, 6)) // 8 MiB kept throughout
	src := pattern(1<<20, 7)
	var peak int64
	for i := 0; i < 600; i++ { // 600 MiB made, 1 MiB at a time
		x := New(src)
		if _, ok := x.File(); !ok {
			t.Fatal("no file")
		}
		_, total := Stats()
		peak = max(peak, total)
		time.Sleep(50 * time.Microsecond)
	}
	if peak > 300<<20 {
		t.Errorf("memory files peaked at %d MiB for 9 MiB kept", peak>>20)
	}
	runtime.KeepAlive(keep)
}
