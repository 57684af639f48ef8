//go:build linux

package bpf

import (
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
	"github.com/cilium/ebpf/link"
	"github.com/cilium/ebpf/rlimit"
	"golang.org/x/sys/unix"
)

const (
	ethPIPv6     = 0x86dd
	tcxNext      = -1 // TCX_NEXT: let the next program (or the default) decide
	ipprotoTCP   = 6
	flowEntries  = 65536
	flowKeySize  = 40 // local[16] remote[16] lport[2] rport[2] pad[4]
	flowValSize  = 56 // out/in bytes, out/in packets, out/in end seq, out/in seen, out/in first seq
	keyOff       = -40
	ipBufOff     = -80 // 40 bytes: an IPv6 header, or the first 20 of an IPv4 one
	tcpBufOff    = -96 // 16 bytes of the TCP header (ports .. data offset)
	keyLocalOff  = keyOff
	keyRemoteOff = keyOff + 16
	keyLPortOff  = keyOff + 32
	keyRPortOff  = keyOff + 34
)

// flowValue is the map's value layout. Each way, the payload's sequence
// space covered so far is [First, Next) (valid once Seen): a segment
// retransmitted, or seen twice, adds nothing.
type flowValue struct {
	OutBytes, InBytes, OutPkts, InPkts uint64
	OutNext, InNext, OutSeen, InSeen   uint32
	OutFirst, InFirst                  uint32
}

// flowProgram builds the tcx program of one direction. On egress the
// packet's source is the local end of the key; on ingress its destination.
// l2len is the link header's length on the interface: tc programs see the
// packet from there, on egress and (tcx pushes it back) on ingress.
func flowProgram(m *ebpf.Map, egress bool, l2len int32) asm.Instructions {
	be16 := func(v uint16) int32 {
		var b [2]byte
		binary.BigEndian.PutUint16(b[:], v)
		return int32(binary.NativeEndian.Uint16(b[:]))
	}
	src, dst := int16(keyRemoteOff), int16(keyLocalOff)
	dirBytes, dirPkts, dirNext, dirSeen, dirFirst := int16(8), int16(24), int16(36), int16(44), int16(52)
	if egress {
		src, dst = keyLocalOff, keyRemoteOff
		dirBytes, dirPkts, dirNext, dirSeen, dirFirst = 0, 16, 32, 40, 48
	}
	sPort, dPort := int16(keyRPortOff), int16(keyLPortOff)
	if egress {
		sPort, dPort = keyLPortOff, keyRPortOff
	}
	load := func(off asm.Register, size int32, to int16) asm.Instructions {
		// r0 = bpf_skb_load_bytes(skb, l2len+off, fp+to, size). Not
		// load_bytes_relative: that one reads the linear part only,
		// and a cloned GSO skb's headers need not all be there.
		return asm.Instructions{
			asm.Mov.Reg(asm.R1, asm.R6),
			asm.Mov.Reg(asm.R2, off),
			asm.Add.Imm(asm.R2, l2len),
			asm.Mov.Reg(asm.R3, asm.RFP),
			asm.Add.Imm(asm.R3, int32(to)),
			asm.Mov.Imm(asm.R4, size),
			asm.FnSkbLoadBytes.Call(),
			asm.JNE.Imm(asm.R0, 0, "out"),
		}
	}
	copyWords := func(from, to int16, words int) asm.Instructions {
		var is asm.Instructions
		for i := 0; i < words; i++ {
			is = append(is,
				asm.LoadMem(asm.R0, asm.RFP, from+int16(4*i), asm.Word),
				asm.StoreMem(asm.RFP, to+int16(4*i), asm.R0, asm.Word))
		}
		return is
	}

	is := asm.Instructions{
		asm.Mov.Reg(asm.R6, asm.R1),
		// The key is read whole by the map: every byte must be written.
		asm.Mov.Imm(asm.R0, 0),
		asm.StoreMem(asm.RFP, keyOff, asm.R0, asm.DWord),
		asm.StoreMem(asm.RFP, keyOff+8, asm.R0, asm.DWord),
		asm.StoreMem(asm.RFP, keyOff+16, asm.R0, asm.DWord),
		asm.StoreMem(asm.RFP, keyOff+24, asm.R0, asm.DWord),
		asm.StoreMem(asm.RFP, keyOff+32, asm.R0, asm.DWord),
		asm.LoadMem(asm.R0, asm.R6, skbProtoOff, asm.Word),
		asm.JEq.Imm(asm.R0, be16(ethPIP), "v4"),
		asm.JEq.Imm(asm.R0, be16(ethPIPv6), "v6"),
		asm.Ja.Label("out"),
	}
	// IPv4: the header's first 20 bytes; addresses as v4-mapped IPv6.
	is = append(is, asm.Mov.Imm(asm.R7, 0).WithSymbol("v4"))
	is = append(is, load(asm.R7, 20, ipBufOff)...)
	is = append(is,
		asm.LoadMem(asm.R0, asm.RFP, ipBufOff+9, asm.Byte),
		asm.JNE.Imm(asm.R0, ipprotoTCP, "out"),
		asm.LoadMem(asm.R7, asm.RFP, ipBufOff, asm.Byte),
		asm.And.Imm(asm.R7, 0x0f),
		asm.LSh.Imm(asm.R7, 2), // r7 = IP header length
		asm.StoreImm(asm.RFP, keyLocalOff+10, -1, asm.Half),
		asm.StoreImm(asm.RFP, keyRemoteOff+10, -1, asm.Half),
	)
	is = append(is, copyWords(ipBufOff+12, src+12, 1)...)
	is = append(is, copyWords(ipBufOff+16, dst+12, 1)...)
	is = append(is, asm.Ja.Label("tcp"))
	// IPv6: the fixed header, and a Hop-by-Hop header if one follows: a
	// BIG TCP packet (over 64 KiB, as loopback sends) carries its jumbo
	// length there. Other extension headers are not followed.
	is = append(is, asm.Mov.Imm(asm.R7, 0).WithSymbol("v6"))
	is = append(is, load(asm.R7, 40, ipBufOff)...)
	is = append(is, copyWords(ipBufOff+8, src, 4)...)
	is = append(is, copyWords(ipBufOff+24, dst, 4)...)
	is = append(is,
		asm.Mov.Imm(asm.R7, 40),
		asm.LoadMem(asm.R0, asm.RFP, ipBufOff+6, asm.Byte),
		asm.JEq.Imm(asm.R0, ipprotoTCP, "tcp"),
		asm.JNE.Imm(asm.R0, 0, "out"), // IPPROTO_HOPOPTS
	)
	// The Hop-by-Hop header's first two bytes (next header, length in
	// 8-byte units past the first 8) over the fixed header's start.
	is = append(is, load(asm.R7, 2, ipBufOff)...)
	is = append(is,
		asm.LoadMem(asm.R0, asm.RFP, ipBufOff, asm.Byte),
		asm.JNE.Imm(asm.R0, ipprotoTCP, "out"),
		asm.LoadMem(asm.R0, asm.RFP, ipBufOff+1, asm.Byte),
		asm.Add.Imm(asm.R0, 1),
		asm.LSh.Imm(asm.R0, 3),
		asm.Add.Reg(asm.R7, asm.R0),
	)
	// TCP: ports into the key, payload = what follows the link, IP and
	// TCP headers. Not the IP header's length field: a 64 KiB GSO packet
	// (loopback's gso_max_size is 65536) and BIG TCP's carry 0 there.
	is = append(is, asm.Mov.Reg(asm.R9, asm.R7).WithSymbol("tcp"))
	is = append(is, load(asm.R9, 16, tcpBufOff)...)
	is = append(is,
		asm.LoadMem(asm.R0, asm.RFP, tcpBufOff, asm.Half),
		asm.StoreMem(asm.RFP, sPort, asm.R0, asm.Half),
		asm.LoadMem(asm.R0, asm.RFP, tcpBufOff+2, asm.Half),
		asm.StoreMem(asm.RFP, dPort, asm.R0, asm.Half),
		asm.LoadMem(asm.R0, asm.RFP, tcpBufOff+12, asm.Byte),
		asm.RSh.Imm(asm.R0, 4),
		asm.LSh.Imm(asm.R0, 2),
		asm.LoadMem(asm.R8, asm.R6, skbLenOff, asm.Word),
		asm.Add.Imm(asm.R8, -l2len),
		asm.Sub.Reg(asm.R8, asm.R7),
		asm.Sub.Reg(asm.R8, asm.R0),
		// Shorter than its headers: not ours to count.
		asm.JSLT.Imm(asm.R8, 0, "out"),
		asm.LoadMapPtr(asm.R1, m.FD()),
		asm.Mov.Reg(asm.R2, asm.RFP),
		asm.Add.Imm(asm.R2, keyOff),
		asm.FnMapLookupElem.Call(),
		asm.JEq.Imm(asm.R0, 0, "out"),
		asm.Mov.Imm(asm.R1, 1),
		asm.AddAtomic.Mem(asm.R0, asm.R1, asm.DWord, dirPkts),
	)
	// Bytes are the sequence space the flow's payload has covered: the
	// first payload segment's, widened at its end by a segment past it
	// and at its start by one before it (reordered, as ingress may see
	// them from two CPUs' backlogs). A retransmission covers nothing new
	// and counts nothing; the increments are at most 2^31, so a flow
	// past 4 GiB counts on. r1 = start (seq), r5 = end (seq + payload).
	is = append(is,
		asm.JEq.Imm(asm.R8, 0, "out"), // SYN, FIN, bare ACK: no payload
		asm.LoadMem(asm.R1, asm.RFP, tcpBufOff+4, asm.Word),
		asm.HostTo(asm.BE, asm.R1, asm.Word),
		asm.Mov.Reg32(asm.R5, asm.R1),
		asm.Add.Reg32(asm.R5, asm.R8),
		asm.LoadMem(asm.R2, asm.R0, dirSeen, asm.Word),
		asm.JEq.Imm(asm.R2, 0, "first"),
		asm.LoadMem(asm.R3, asm.R0, dirNext, asm.Word),
		asm.Mov.Reg32(asm.R4, asm.R5),
		asm.Sub.Reg32(asm.R4, asm.R3),
		asm.JSLE.Imm32(asm.R4, 0, "low"),
		asm.StoreMem(asm.R0, dirNext, asm.R5, asm.Word),
		asm.AddAtomic.Mem(asm.R0, asm.R4, asm.DWord, dirBytes),
		asm.LoadMem(asm.R3, asm.R0, dirFirst, asm.Word).WithSymbol("low"),
		asm.Mov.Reg32(asm.R4, asm.R3),
		asm.Sub.Reg32(asm.R4, asm.R1),
		asm.JSLE.Imm32(asm.R4, 0, "out"),
		asm.StoreMem(asm.R0, dirFirst, asm.R1, asm.Word),
		asm.AddAtomic.Mem(asm.R0, asm.R4, asm.DWord, dirBytes),
		asm.Ja.Label("out"),
		asm.StoreMem(asm.R0, dirNext, asm.R5, asm.Word).WithSymbol("first"),
		asm.StoreMem(asm.R0, dirFirst, asm.R1, asm.Word),
		asm.StoreImm(asm.R0, dirSeen, 1, asm.Word),
		asm.AddAtomic.Mem(asm.R0, asm.R8, asm.DWord, dirBytes),
	)
	is = append(is,
		asm.Mov.Imm(asm.R0, tcxNext).WithSymbol("out"),
		asm.Return(),
	)
	return is
}

type tcxMeter struct {
	m        *ebpf.Map
	mu       sync.Mutex
	progs    map[int32][2]*ebpf.Program // link header length → ingress, egress
	links    map[int][]link.Link        // ifindex → its two links
	closed   bool
	ifaceFor func(local, remote netip.Addr) (int, error)
}

func newTCXMeter() (*tcxMeter, error) {
	if err := rlimit.RemoveMemlock(); err != nil {
		return nil, fmt.Errorf("remove memlock rlimit: %w", err)
	}
	m, err := ebpf.NewMap(&ebpf.MapSpec{
		Name: "step_io", Type: ebpf.Hash,
		KeySize: flowKeySize, ValueSize: flowValSize, MaxEntries: flowEntries,
	})
	if err != nil {
		return nil, fmt.Errorf("create map: %w", err)
	}
	t := &tcxMeter{m: m, progs: map[int32][2]*ebpf.Program{}, links: map[int][]link.Link{}, ifaceFor: ifaceFor}
	// Loading and attaching are what an old kernel (no tcx) refuses:
	// find out now, on loopback, which every tracked local flow crosses.
	lo, err := net.InterfaceByName("lo")
	if err == nil {
		err = t.attach(lo.Index)
	}
	if err != nil {
		t.Close()
		return nil, err
	}
	return t, nil
}

func (t *tcxMeter) Kind() string { return "ebpf" }

// l2Len is the link header's length of an interface, from its ARPHRD type;
// an interface of another type is not tracked.
func l2Len(ifindex int) (int32, error) {
	ifc, err := net.InterfaceByIndex(ifindex)
	if err != nil {
		return 0, err
	}
	b, err := os.ReadFile("/sys/class/net/" + ifc.Name + "/type")
	if err != nil {
		return 0, err
	}
	switch typ := strings.TrimSpace(string(b)); typ {
	case "1", "772": // ARPHRD_ETHER, ARPHRD_LOOPBACK (an Ethernet header)
		return 14, nil
	case "65534", "768", "776", "778": // ARPHRD_NONE (tun, wireguard), IPIP, SIT, IPGRE
		return 0, nil
	default:
		return 0, fmt.Errorf("interface %s: link type %s has no known header length", ifc.Name, typ)
	}
}

// attach puts the programs on the interface, once. Called with t.mu held
// or before t is shared.
func (t *tcxMeter) attach(ifindex int) error {
	if _, ok := t.links[ifindex]; ok {
		return nil
	}
	l2, err := l2Len(ifindex)
	if err != nil {
		return err
	}
	ps, ok := t.progs[l2]
	if !ok {
		for i, name := range []string{"step_io_in", "step_io_out"} {
			p, err := ebpf.NewProgram(&ebpf.ProgramSpec{
				Name: name, Type: ebpf.SchedCLS, License: "Apache-2.0",
				Instructions: flowProgram(t.m, i == 1, l2),
			})
			if err != nil {
				if ps[0] != nil {
					ps[0].Close()
				}
				return fmt.Errorf("load %s: %w", name, err)
			}
			ps[i] = p
		}
		t.progs[l2] = ps
	}
	var ls []link.Link
	for i, at := range []ebpf.AttachType{ebpf.AttachTCXIngress, ebpf.AttachTCXEgress} {
		l, err := link.AttachTCX(link.TCXOptions{Interface: ifindex, Program: ps[i], Attach: at})
		if err != nil {
			for _, l := range ls {
				l.Close()
			}
			return fmt.Errorf("attach tcx to interface %d: %w", ifindex, err)
		}
		ls = append(ls, l)
	}
	t.links[ifindex] = ls
	return nil
}

// ifaceFor is the interface a connection's packets cross here: loopback
// when both ends are this host's, else the one holding the local address.
func ifaceFor(local, remote netip.Addr) (int, error) {
	ifs, err := net.Interfaces()
	if err != nil {
		return 0, err
	}
	lo, owner := -1, -1
	remoteLocal := remote.IsLoopback()
	for _, ifc := range ifs {
		if ifc.Flags&net.FlagLoopback != 0 && lo < 0 {
			lo = ifc.Index
		}
		addrs, err := ifc.Addrs()
		if err != nil {
			continue
		}
		for _, a := range addrs {
			ipn, ok := a.(*net.IPNet)
			if !ok {
				continue
			}
			ip, ok := netip.AddrFromSlice(ipn.IP)
			if !ok {
				continue
			}
			ip = ip.Unmap()
			if ip == remote {
				remoteLocal = true
			}
			if ip == local && owner < 0 {
				owner = ifc.Index
			}
		}
	}
	switch {
	case remoteLocal && lo >= 0:
		return lo, nil
	case owner >= 0:
		return owner, nil
	}
	return 0, fmt.Errorf("no interface holds %v", local)
}

func flowKey(local, remote netip.AddrPort) [flowKeySize]byte {
	var k [flowKeySize]byte
	// IPv4 as v4-mapped, as the program writes it.
	a, b := local.Addr().Unmap().As16(), remote.Addr().Unmap().As16()
	copy(k[0:16], a[:])
	copy(k[16:32], b[:])
	binary.BigEndian.PutUint16(k[32:], local.Port())
	binary.BigEndian.PutUint16(k[34:], remote.Port())
	return k
}

func (t *tcxMeter) Track(c net.Conn) (Flow, error) {
	tc, ok := c.(*net.TCPConn)
	if !ok {
		return nil, fmt.Errorf("%w: not TCP", ErrNotTracked)
	}
	raw, err := tc.SyscallConn()
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrNotTracked, err)
	}
	local, remote := tc.LocalAddr().(*net.TCPAddr).AddrPort(), tc.RemoteAddr().(*net.TCPAddr).AddrPort()
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		return nil, ErrNotTracked
	}
	ifx, err := t.ifaceFor(local.Addr().Unmap(), remote.Addr().Unmap())
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrNotTracked, err)
	}
	if err := t.attach(ifx); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrNotTracked, err)
	}
	k := flowKey(local, remote)
	if err := t.m.Update(k, flowValue{}, ebpf.UpdateNoExist); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrNotTracked, err)
	}
	return &tcxFlow{t: t, k: k, raw: raw}, nil
}

// drainWait bounds how long Close waits for written bytes to be sent (and
// acknowledged): a peer that stopped reading must not hold it up.
const drainWait = 2 * time.Second

type tcxFlow struct {
	t    *tcxMeter
	k    [flowKeySize]byte
	raw  syscall.RawConn
	mu   sync.Mutex
	last IO
	done bool
}

func (f *tcxFlow) Read() IO {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.done {
		return f.last
	}
	var v flowValue
	if err := f.t.m.Lookup(f.k, &v); err == nil {
		f.last = IO{Out: v.OutBytes, In: v.InBytes}
	}
	return f.last
}

func (f *tcxFlow) Close() IO {
	// SIOCOUTQ: bytes not yet sent or not yet acknowledged. Once a byte
	// is acknowledged it has crossed the egress program.
	for end := time.Now().Add(drainWait); time.Now().Before(end); time.Sleep(time.Millisecond) {
		n, ok := -1, false
		if f.raw.Control(func(fd uintptr) {
			v, err := unix.IoctlGetInt(int(fd), unix.SIOCOUTQ)
			n, ok = v, err == nil
		}) != nil || !ok || n == 0 {
			break
		}
	}
	io := f.Read()
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.done {
		f.done = true
		_ = f.t.m.Delete(f.k)
	}
	return io
}

func (t *tcxMeter) Close() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.closed = true
	var errs []error
	for _, ls := range t.links {
		for _, l := range ls {
			errs = append(errs, l.Close())
		}
	}
	t.links = map[int][]link.Link{}
	for _, ps := range t.progs {
		for _, p := range ps {
			errs = append(errs, p.Close())
		}
	}
	t.progs = nil
	if t.m != nil {
		errs = append(errs, t.m.Close())
	}
	return errors.Join(errs...)
}
