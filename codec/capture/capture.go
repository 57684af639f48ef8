// Package capture splits pcap files of Slurm traffic into the messages
// each TCP connection carried, for golden tests and fuzz seeds. It parses
// bytes handed to it and does no I/O.
package capture

import (
	"encoding/binary"
	"errors"
	"sort"
)

// Conn is one TCP connection: the frames the client sent and the frames
// the server answered, each a whole frame with its 4-byte length prefix.
type Conn struct {
	ClientPort, ServerPort uint16
	Requests, Replies      [][]byte
	// ClientData and ServerData are the whole byte streams each side
	// sent, for connections that are not Slurm-framed (task I/O, the
	// --pty window-size channel).
	ClientData, ServerData []byte
}

type seg struct {
	seq  uint32
	data []byte
}

type half struct {
	isn  uint32
	have bool
	segs []seg
}

type key struct{ a, b uint16 }

// Parse reads a pcap (microsecond or nanosecond, Ethernet, Linux cooked
// v1/v2 or BSD loopback link types) and returns its TCP connections in the
// order they opened. The server side is the one that received the SYN.
func Parse(pcap []byte) ([]Conn, error) {
	if len(pcap) < 24 {
		return nil, errors.New("capture: short pcap header")
	}
	var bo binary.ByteOrder
	switch binary.LittleEndian.Uint32(pcap) {
	case 0xa1b2c3d4, 0xa1b23c4d:
		bo = binary.LittleEndian
	case 0xd4c3b2a1, 0x4d3cb2a1:
		bo = binary.BigEndian
	default:
		return nil, errors.New("capture: not a pcap file")
	}
	link := bo.Uint32(pcap[20:])
	type conn struct {
		client, server uint16
		c2s, s2c       half
	}
	conns := map[key]*conn{}
	var order []*conn
	off := 24
	for off+16 <= len(pcap) {
		incl := int(bo.Uint32(pcap[off+8:]))
		off += 16
		if off+incl > len(pcap) {
			break
		}
		pkt := pcap[off : off+incl]
		off += incl
		var ipb []byte
		switch link {
		case 1: // Ethernet
			if len(pkt) < 14 {
				continue
			}
			ipb = pkt[14:]
		case 113: // Linux cooked v1
			if len(pkt) < 16 {
				continue
			}
			ipb = pkt[16:]
		case 276: // Linux cooked v2
			if len(pkt) < 20 {
				continue
			}
			ipb = pkt[20:]
		case 0, 108: // BSD loopback
			if len(pkt) < 4 {
				continue
			}
			ipb = pkt[4:]
		default:
			return nil, errors.New("capture: unsupported link type")
		}
		var tcp []byte
		if len(ipb) < 1 {
			continue
		}
		switch ipb[0] >> 4 {
		case 4:
			if len(ipb) < 20 || ipb[9] != 6 {
				continue
			}
			ihl := int(ipb[0]&0xf) * 4
			tot := int(binary.BigEndian.Uint16(ipb[2:]))
			if tot > len(ipb) || ihl > tot {
				continue
			}
			tcp = ipb[ihl:tot]
		case 6:
			if len(ipb) < 40 || ipb[6] != 6 {
				continue
			}
			pl := int(binary.BigEndian.Uint16(ipb[4:]))
			if 40+pl > len(ipb) {
				continue
			}
			tcp = ipb[40 : 40+pl]
		default:
			continue
		}
		if len(tcp) < 20 {
			continue
		}
		sp, dp := binary.BigEndian.Uint16(tcp), binary.BigEndian.Uint16(tcp[2:])
		seq := binary.BigEndian.Uint32(tcp[4:])
		doff := int(tcp[12]>>4) * 4
		flags := tcp[13]
		if doff > len(tcp) {
			continue
		}
		payload := tcp[doff:]
		syn, ack := flags&0x02 != 0, flags&0x10 != 0
		k := key{sp, dp}
		if sp > dp {
			k = key{dp, sp}
		}
		c := conns[k]
		if syn && !ack {
			c = &conn{client: sp, server: dp}
			c.c2s = half{isn: seq + 1, have: true}
			conns[k] = c
			order = append(order, c)
			continue
		}
		if c == nil {
			continue
		}
		h := &c.c2s
		if sp == c.server {
			h = &c.s2c
		}
		if syn && ack {
			h.isn, h.have = seq+1, true
			continue
		}
		if len(payload) > 0 && h.have {
			h.segs = append(h.segs, seg{seq - h.isn, append([]byte(nil), payload...)})
		}
	}
	out := make([]Conn, 0, len(order))
	for _, c := range order {
		c2s, s2c := assemble(c.c2s), assemble(c.s2c)
		out = append(out, Conn{
			ClientPort: c.client, ServerPort: c.server,
			Requests: frames(c2s), Replies: frames(s2c),
			ClientData: c2s, ServerData: s2c,
		})
	}
	return out, nil
}

// assemble orders segments by relative sequence number and drops
// retransmitted bytes.
func assemble(h half) []byte {
	sort.SliceStable(h.segs, func(i, j int) bool { return h.segs[i].seq < h.segs[j].seq })
	var buf []byte
	for _, s := range h.segs {
		end := int(s.seq) + len(s.data)
		if end <= len(buf) {
			continue
		}
		if int(s.seq) > len(buf) {
			break // gap: stop at what we have
		}
		buf = append(buf, s.data[len(buf)-int(s.seq):]...)
	}
	return buf
}

// frames splits a stream at its 4-byte big-endian length prefixes.
func frames(b []byte) [][]byte {
	var out [][]byte
	for len(b) >= 4 {
		n := int(binary.BigEndian.Uint32(b)) + 4
		if n > len(b) {
			break
		}
		out = append(out, b[:n])
		b = b[n:]
	}
	return out
}
