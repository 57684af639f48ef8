//go:build linux

package bpf

import (
	"encoding/binary"
	"errors"
	"fmt"
	"net/netip"
	"sync"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
	"github.com/cilium/ebpf/rlimit"
	"golang.org/x/sys/unix"
)

const (
	skfNetOff   = -0x100000 // SKF_NET_OFF
	skbLenOff   = 0         // offsetof(struct __sk_buff, len)
	skbProtoOff = 16        // offsetof(struct __sk_buff, protocol)
	ethPIP      = 0x0800
)

// value layout in the map: {packets u64, bytes u64, conns u64}.
type mapValue struct{ Packets, Bytes, Conns uint64 }

const (
	tcpFlagSYN = 0x02
	tcpFlagACK = 0x10
	ipProtoTCP = 6
)

// program builds the socket filter. R6 holds the skb (required by LD_ABS).
func program(m *ebpf.Map) asm.Instructions {
	// skb->protocol is __be16; the ctx load yields its in-memory bytes.
	var b [2]byte
	binary.BigEndian.PutUint16(b[:], ethPIP)
	protoIP := int32(binary.NativeEndian.Uint16(b[:]))

	return asm.Instructions{
		asm.Mov.Reg(asm.R6, asm.R1),
		asm.LoadMem(asm.R0, asm.R6, skbProtoOff, asm.Word),
		asm.JNE.Imm(asm.R0, protoIP, "out"),

		// r0 = ntohl(saddr). Cannot fail: an IPv4 header is >= 20 bytes.
		asm.LoadAbs(skfNetOff+12, asm.Word),
		asm.StoreMem(asm.RFP, -4, asm.R0, asm.Word), // key

		asm.LoadMapPtr(asm.R1, m.FD()),
		asm.Mov.Reg(asm.R2, asm.RFP),
		asm.Add.Imm(asm.R2, -4),
		asm.FnMapLookupElem.Call(),
		asm.JNE.Imm(asm.R0, 0, "add"),

		// first packet from this host: insert zeroes (NOEXIST: a racing
		// CPU may have inserted already; either way look it up again).
		asm.StoreImm(asm.RFP, -32, 0, asm.Word),
		asm.StoreImm(asm.RFP, -28, 0, asm.Word),
		asm.StoreImm(asm.RFP, -24, 0, asm.Word),
		asm.StoreImm(asm.RFP, -20, 0, asm.Word),
		asm.StoreImm(asm.RFP, -16, 0, asm.Word),
		asm.StoreImm(asm.RFP, -12, 0, asm.Word),
		asm.LoadMapPtr(asm.R1, m.FD()),
		asm.Mov.Reg(asm.R2, asm.RFP),
		asm.Add.Imm(asm.R2, -4),
		asm.Mov.Reg(asm.R3, asm.RFP),
		asm.Add.Imm(asm.R3, -32),
		asm.Mov.Imm(asm.R4, int32(ebpf.UpdateNoExist)),
		asm.FnMapUpdateElem.Call(),
		asm.LoadMapPtr(asm.R1, m.FD()),
		asm.Mov.Reg(asm.R2, asm.RFP),
		asm.Add.Imm(asm.R2, -4),
		asm.FnMapLookupElem.Call(),
		asm.JEq.Imm(asm.R0, 0, "out"),

		asm.Mov.Imm(asm.R1, 1).WithSymbol("add"),
		asm.AddAtomic.Mem(asm.R0, asm.R1, asm.DWord, 0),
		asm.LoadMem(asm.R1, asm.R6, skbLenOff, asm.Word),
		asm.AddAtomic.Mem(asm.R0, asm.R1, asm.DWord, 8),

		// A TCP SYN without ACK is a connection attempt: conns += 1.
		// The value pointer is kept in R7 across the loads (LD_ABS and
		// LD_IND clobber R0-R5).
		asm.Mov.Reg(asm.R7, asm.R0),
		asm.LoadAbs(skfNetOff+9, asm.Byte), // IPv4 protocol
		asm.JNE.Imm(asm.R0, ipProtoTCP, "out"),
		asm.LoadAbs(skfNetOff, asm.Byte), // version and IHL
		asm.And.Imm(asm.R0, 0x0f),
		asm.LSh.Imm(asm.R0, 2),
		asm.Mov.Reg(asm.R8, asm.R0),
		asm.LoadInd(asm.R0, asm.R8, skfNetOff+13, asm.Byte), // TCP flags
		asm.And.Imm(asm.R0, tcpFlagSYN|tcpFlagACK),
		asm.JNE.Imm(asm.R0, tcpFlagSYN, "out"),
		asm.Mov.Imm(asm.R1, 1),
		asm.AddAtomic.Mem(asm.R7, asm.R1, asm.DWord, 16),

		// accept the whole packet: never drop, never truncate.
		asm.LoadMem(asm.R0, asm.R6, skbLenOff, asm.Word).WithSymbol("out"),
		asm.Return(),
	}
}

type eBPF struct {
	mu    sync.Mutex
	m     *ebpf.Map
	prog  *ebpf.Program
	fds   []int
	close bool
}

func newEBPF() (*eBPF, error) {
	if err := rlimit.RemoveMemlock(); err != nil {
		return nil, fmt.Errorf("remove memlock rlimit: %w", err)
	}
	m, err := ebpf.NewMap(&ebpf.MapSpec{
		Name:       "conn_acct",
		Type:       ebpf.LRUHash,
		KeySize:    4,
		ValueSize:  24,
		MaxEntries: MaxEntries,
	})
	if err != nil {
		return nil, fmt.Errorf("create map: %w", err)
	}
	prog, err := ebpf.NewProgram(&ebpf.ProgramSpec{
		Name:         "conn_acct",
		Type:         ebpf.SocketFilter,
		License:      "Apache-2.0",
		Instructions: program(m),
	})
	if err != nil {
		m.Close()
		return nil, fmt.Errorf("load socket filter: %w", err)
	}
	return &eBPF{m: m, prog: prog}, nil
}

// probeTCP checks that the kernel lets the program be attached to a plain
// TCP socket (loading can succeed while attaching is refused, e.g. by an
// LSM), so New falls back early instead of failing at Attach.
func (e *eBPF) probeTCP() error {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("probe socket: %w", err)
	}
	defer unix.Close(fd)
	if err := unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_ATTACH_BPF, e.prog.FD()); err != nil {
		return fmt.Errorf("kernel refuses SO_ATTACH_BPF on a TCP socket: %w", err)
	}
	return nil
}

func newTCPAccounting() (*eBPF, error) {
	e, err := newEBPF()
	if err != nil {
		return nil, err
	}
	if err := e.probeTCP(); err != nil {
		e.Close()
		return nil, err
	}
	return e, nil
}

func (e *eBPF) Kind() string { return "ebpf" }

func (e *eBPF) Attach(fd int) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.close {
		return errors.New("bpf: accounting closed")
	}
	if err := unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_ATTACH_BPF, e.prog.FD()); err != nil {
		if p, _ := unix.GetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_PROTOCOL); p == unix.IPPROTO_MPTCP {
			return fmt.Errorf("SO_ATTACH_BPF: %w (MPTCP socket: listen with plain TCP, e.g. net.ListenConfig.SetMultipathTCP(false))", err)
		}
		return fmt.Errorf("SO_ATTACH_BPF: %w", err)
	}
	e.fds = append(e.fds, fd)
	return nil
}

func (e *eBPF) Snapshot() (map[netip.Addr]Counters, error) {
	out := make(map[netip.Addr]Counters)
	var k uint32
	var v mapValue
	it := e.m.Iterate()
	for it.Next(&k, &v) {
		var a [4]byte
		binary.BigEndian.PutUint32(a[:], k) // key is host-order (LD_ABS)
		out[netip.AddrFrom4(a)] = Counters{Packets: v.Packets, Bytes: v.Bytes, Conns: v.Conns}
	}
	return out, it.Err()
}

// Close detaches the filter from the listeners passed to Attach (best
// effort: they may be closed already) and releases the program and map.
// Connections accepted earlier keep their own reference to the program and
// keep running it until they close; their counts are no longer readable.
func (e *eBPF) Close() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.close {
		return nil
	}
	e.close = true
	for _, fd := range e.fds {
		_ = unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_DETACH_BPF, 0)
	}
	e.fds = nil
	return errors.Join(e.prog.Close(), e.m.Close())
}
