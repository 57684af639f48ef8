package edge

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"sync"
	"time"

	"github.com/lablup/slurm-frontend/codec"
)

// The slurmdbd stand-in's listener (AccountingStoragePort): sacct's
// persistent connections. Few and long-lived next to the controller's
// storms, so a goroutine each; the credential of the opening message is
// the identity for the whole connection, as in slurmdbd.

// AccountingHandler answers a connection's requests (uid: its identity).
type AccountingHandler interface {
	AccountingJobs(uid uint32, cond *codec.JobCond, v uint16) codec.GotJobs
	AccountingAssocs(uid uint32, cond *codec.AssocCond, v uint16) codec.GotAssocs
	AccountingUsers(uid uint32, cond *codec.UserCond, v uint16) codec.GotUsers
	AccountingAccounts(uid uint32, cond *codec.AccountCond, v uint16) codec.GotAccounts
	AccountingClusters(uid uint32, cond *codec.ClusterCond, v uint16) codec.GotClusters
	AccountingQOS(uid uint32, cond *codec.QOSCond, v uint16) codec.GotQOS
	AccountingWCKeys(uid uint32, cond *codec.WCKeyCond, v uint16) codec.GotWCKeys
	// AccountingWrite answers an add, modify or remove: its return code
	// and the text the client prints.
	AccountingWrite(uid uint32, typ uint16, v uint16) (uint32, string)
}

// encoder is a reply body of the accounting GETs.
type encoder interface {
	Encode(w *codec.Writer, v uint16)
}

// get decodes a GET's condition into cond and answers with the handler's
// reply (nil: undecodable, answered with an RC).
func dbdGet[C any, PC interface {
	*C
	Decode(r *codec.Reader, v uint16) error
}](r *codec.Reader, v uint16, answer func(*C) encoder) encoder {
	var cond C
	if PC(&cond).Decode(r, v) != nil || r.Remaining() != 0 {
		return nil
	}
	return answer(&cond)
}

// DBDServer is the accounting listener.
type DBDServer struct {
	h    AccountingHandler
	auth Authenticator
	log  Logger
	l    net.Listener
	wg   sync.WaitGroup
	mu   sync.Mutex
	open map[net.Conn]bool
}

// dbdIdle: how long a connection may wait between requests (slurmdbd
// keeps them as long as the client does; this bounds idle ones).
const dbdIdle = 15 * time.Minute

// NewDBDServer listens on addr.
func NewDBDServer(addr string, h AccountingHandler, auth Authenticator, log Logger) (*DBDServer, error) {
	s := &DBDServer{h: h, auth: auth, log: log, open: map[net.Conn]bool{}}
	l, err := listenWait(addr, portWait, s.logf)
	if err != nil {
		return nil, err
	}
	s.l = l
	s.wg.Add(1)
	go s.accept()
	return s, nil
}

// Addr is where it listens.
func (s *DBDServer) Addr() net.Addr { return s.l.Addr() }

// Close stops listening, ends the connections and waits for them.
func (s *DBDServer) Close() {
	s.l.Close()
	s.mu.Lock()
	for c := range s.open {
		c.Close()
	}
	s.mu.Unlock()
	s.wg.Wait()
}

func (s *DBDServer) logf(format string, args ...any) {
	if s.log != nil {
		s.log.Printf(format, args...)
	}
}

func (s *DBDServer) accept() {
	defer s.wg.Done()
	for {
		c, err := s.l.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			time.Sleep(10 * time.Millisecond)
			continue
		}
		s.mu.Lock()
		s.open[c] = true
		s.mu.Unlock()
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			s.serve(c)
			s.mu.Lock()
			delete(s.open, c)
			s.mu.Unlock()
		}()
	}
}

func (s *DBDServer) rc(c net.Conn, code uint32, comment string, retInfo uint16) {
	var w codec.Writer
	(&codec.PersistRC{Comment: comment, RC: code, RetInfo: retInfo}).Encode(&w)
	_, _ = c.Write(codec.AppendDBDFrame(nil, codec.PERSIST_RC, w.B))
}

func (s *DBDServer) serve(c net.Conn) {
	defer c.Close()
	br := bufio.NewReader(c)
	_ = c.SetDeadline(time.Now().Add(60 * time.Second))
	raw, err := ReadFrame(br)
	if err != nil {
		return
	}
	var f codec.Frame
	var init codec.PersistInit
	if err := codec.DecodePersistInit(raw, &f, &init); err != nil {
		s.logf("accounting: undecodable opening message from %v: %v", c.RemoteAddr(), err)
		// As slurmdbd answers an init it cannot read: the version it
		// speaks, so the client says so.
		s.rc(c, codec.CodeOf(err), err.Error(), codec.MaxVersion)
		return
	}
	if f.Flags&codec.FlagNoAuthCred != 0 || f.AuthPlugin != codec.AuthPluginMunge {
		s.rc(c, codec.ESLURM_AUTH_CRED_INVALID, "Authentication failure", init.Version)
		return
	}
	uid, _, _, err := s.auth.Verify(f.Cred, f.MsgType, f.Body)
	if err != nil {
		s.logf("accounting: connection from %v: authentication: %v", c.RemoteAddr(), err)
		s.rc(c, codec.ESLURM_AUTH_CRED_INVALID, "Authentication failure", init.Version)
		return
	}
	v := init.Version
	if !codec.DBDVersion(v) {
		s.logf("accounting: uid %d from %v speaks protocol %#x: not served", uid, c.RemoteAddr(), v)
		s.rc(c, codec.SLURM_PROTOCOL_VERSION_ERROR, fmt.Sprintf("slurm-frontend's accounting serves the 22.05, 24.11 and 26.05 clients, not protocol %#x", v), v)
		return
	}
	s.rc(c, codec.SLURM_SUCCESS, "", v)
	for {
		_ = c.SetDeadline(time.Now().Add(dbdIdle))
		raw, err := ReadFrame(br)
		if err != nil {
			return
		}
		typ, body, err := codec.DecodeDBDFrame(raw)
		if err != nil {
			return
		}
		r := codec.NewReader(body)
		switch typ {
		case codec.DBD_FINI:
			var m codec.DBDFini
			if m.Decode(&r) != nil || m.CloseConn != 0 {
				return // a closing FINI has no answer
			}
			s.rc(c, codec.SLURM_SUCCESS, "", typ) // commit/rollback: nothing pending here
		case codec.DBD_GET_JOBS_COND:
			var cond codec.JobCond
			if err := cond.Decode(&r, v); err != nil {
				s.rc(c, codec.CodeOf(err), "undecodable job condition", typ)
				continue
			}
			got := s.h.AccountingJobs(uid, &cond, v)
			body := got.Body
			if body == nil {
				var w codec.Writer
				got.Encode(&w, v)
				body = [][]byte{w.B}
			}
			// A month of history is tens of megabytes: the frame's
			// header and the body's pieces go out as they are (writev).
			n := 0
			for _, b := range body {
				n += len(b)
			}
			bufs := append(net.Buffers{codec.AppendDBDFrame(nil, codec.DBD_GOT_JOBS, nil)}, body...)
			binary.BigEndian.PutUint32(bufs[0], uint32(n+2))
			if _, err := bufs.WriteTo(c); err != nil {
				return
			}
		case codec.DBD_GET_TRES:
			var w codec.Writer
			codec.EncodeGotTRES(&w, v, codec.DefaultTRES)
			if _, err := c.Write(codec.AppendDBDFrame(nil, codec.DBD_GOT_TRES, w.B)); err != nil {
				return
			}
		case codec.DBD_GET_ASSOCS, codec.DBD_GET_USERS, codec.DBD_GET_ACCOUNTS, codec.DBD_GET_CLUSTERS,
			codec.DBD_GET_QOS, codec.DBD_GET_WCKEYS:
			var rep encoder
			switch typ {
			case codec.DBD_GET_ASSOCS:
				rep = dbdGet(&r, v, func(x *codec.AssocCond) encoder { g := s.h.AccountingAssocs(uid, x, v); return &g })
			case codec.DBD_GET_USERS:
				rep = dbdGet(&r, v, func(x *codec.UserCond) encoder { g := s.h.AccountingUsers(uid, x, v); return &g })
			case codec.DBD_GET_ACCOUNTS:
				rep = dbdGet(&r, v, func(x *codec.AccountCond) encoder { g := s.h.AccountingAccounts(uid, x, v); return &g })
			case codec.DBD_GET_CLUSTERS:
				rep = dbdGet(&r, v, func(x *codec.ClusterCond) encoder { g := s.h.AccountingClusters(uid, x, v); return &g })
			case codec.DBD_GET_QOS:
				rep = dbdGet(&r, v, func(x *codec.QOSCond) encoder { g := s.h.AccountingQOS(uid, x, v); return &g })
			case codec.DBD_GET_WCKEYS:
				rep = dbdGet(&r, v, func(x *codec.WCKeyCond) encoder { g := s.h.AccountingWCKeys(uid, x, v); return &g })
			}
			if rep == nil {
				s.rc(c, codec.SLURM_ERROR, "undecodable "+codec.DBDMsgName(typ), typ)
				continue
			}
			got, _ := codec.DBDGotType(typ, v)
			var w codec.Writer
			rep.Encode(&w, v)
			if _, err := c.Write(codec.AppendDBDFrame(nil, got, w.B)); err != nil {
				return
			}
		default:
			if codec.DBDIsWrite(typ) {
				rc, text := s.h.AccountingWrite(uid, typ, v)
				s.rc(c, rc, text, typ)
				continue
			}
			s.rc(c, codec.ESLURM_NOT_SUPPORTED, fmt.Sprintf("slurm-frontend's accounting does not answer %s yet", codec.DBDMsgName(typ)), typ)
		}
	}
}
