package edge

import (
	"bufio"
	"net"
	"testing"
	"time"

	"github.com/lablup/slurm-frontend/codec"
)

type fakeAcct struct{ uid chan uint32 }

func (a fakeAcct) AccountingJobs(uid uint32, cond *codec.JobCond, v uint16) codec.GotJobs {
	a.uid <- uid
	return codec.GotJobs{Jobs: []codec.DBDJob{{JobID: 42, JobName: "x", ShowFull: 1, ArrayTaskID: codec.NoVal}}}
}

func (a fakeAcct) AccountingAssocs(uint32, *codec.AssocCond, uint16) codec.GotAssocs {
	return codec.GotAssocs{Assocs: []codec.AssocRec{{Acct: "root", ID: 1}}}
}
func (a fakeAcct) AccountingUsers(uint32, *codec.UserCond, uint16) codec.GotUsers {
	return codec.GotUsers{}
}
func (a fakeAcct) AccountingAccounts(uint32, *codec.AccountCond, uint16) codec.GotAccounts {
	return codec.GotAccounts{}
}
func (a fakeAcct) AccountingClusters(uint32, *codec.ClusterCond, uint16) codec.GotClusters {
	return codec.GotClusters{}
}
func (a fakeAcct) AccountingQOS(uint32, *codec.QOSCond, uint16) codec.GotQOS { return codec.GotQOS{} }
func (a fakeAcct) AccountingWCKeys(uint32, *codec.WCKeyCond, uint16) codec.GotWCKeys {
	return codec.GotWCKeys{}
}
func (a fakeAcct) AccountingWrite(uint32, uint16, uint16) (uint32, string) {
	return codec.ESLURM_NOT_SUPPORTED, "no"
}

func dbdTestServer(t *testing.T) (*DBDServer, fakeAcct) {
	h := fakeAcct{uid: make(chan uint32, 8)}
	s, err := NewDBDServer("127.0.0.1:0", h, fakeAuth{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s, h
}

// dbdExchange sends frames on a new connection and returns what came back
// (each reply frame's type and body) until the server closed or went
// quiet.
func dbdExchange(t *testing.T, s *DBDServer, frames ...[]byte) (types []uint16, bodies [][]byte) {
	t.Helper()
	c, err := net.Dial("tcp", s.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for _, f := range frames {
		if _, err := c.Write(f); err != nil {
			break
		}
	}
	_ = c.SetReadDeadline(time.Now().Add(500 * time.Millisecond))
	br := bufio.NewReader(c)
	for {
		raw, err := ReadFrame(br)
		if err != nil {
			return
		}
		typ, body, err := codec.DecodeDBDFrame(raw)
		if err != nil {
			t.Fatalf("reply frame: %v", err)
		}
		types, bodies = append(types, typ), append(bodies, body)
	}
}

func persistRC(t *testing.T, body []byte) codec.PersistRC {
	var m codec.PersistRC
	r := codec.NewReader(body)
	if err := m.Decode(&r); err != nil {
		t.Fatal(err)
	}
	return m
}

func initFrame(cred string, v uint16) []byte {
	return codec.AppendPersistInit(nil, []byte(cred), &codec.PersistInit{Version: v, ClusterName: "c", PersistType: codec.PersistTypeDBD})
}

// Every kind of bad input gets slurmdbd's kind of answer (a PERSIST_RC
// with an error and a reason) or a closed connection, never a crash; a
// good connection goes on after a bad request.
func TestDBDServerBadInput(t *testing.T) {
	s, h := dbdTestServer(t)
	var cond codec.JobCond
	var w codec.Writer
	cond.Encode(&w, codec.V24_11)
	getJobs := codec.AppendDBDFrame(nil, codec.DBD_GET_JOBS_COND, w.B)
	fini := codec.AppendDBDFrame(nil, codec.DBD_FINI, []byte{0, 1, 0, 0})

	for _, tc := range []struct {
		name   string
		frames [][]byte
		rc     uint32 // the first answer's
	}{
		{"garbage", [][]byte{{0, 0, 0, 8, 1, 2, 3, 4, 5, 6, 7, 8}}, codec.SLURM_UNEXPECTED_MSG_ERROR},
		{"truncated init", [][]byte{initFrame("MUNGE:good:", codec.V24_11)[:40]}, 0xffffffff},
		{"forged credential", [][]byte{initFrame("MUNGE:forged:", codec.V24_11), getJobs}, codec.ESLURM_AUTH_CRED_INVALID},
		{"unserved version", [][]byte{initFrame("MUNGE:good:", codec.V23_02), getJobs}, codec.SLURM_PROTOCOL_VERSION_ERROR},
		{"huge frame", [][]byte{{0x7f, 0xff, 0xff, 0xff, 0x19, 0x64}}, 0xffffffff},
	} {
		t.Run(tc.name, func(t *testing.T) {
			types, bodies := dbdExchange(t, s, tc.frames...)
			if tc.rc == 0xffffffff {
				if len(types) != 0 {
					t.Errorf("answered %v; want the connection closed", types)
				}
				return
			}
			if len(types) != 1 || types[0] != codec.PERSIST_RC {
				t.Fatalf("answers %v; want one PERSIST_RC and the close", types)
			}
			if rc := persistRC(t, bodies[0]); rc.RC != tc.rc || rc.Comment == "" {
				t.Errorf("PERSIST_RC %+v; want rc %d with a reason", rc, tc.rc)
			}
		})
	}
	select {
	case uid := <-h.uid:
		t.Fatalf("a refused connection reached the handler (uid %d)", uid)
	default:
	}

	// A good connection: bad requests are answered and the connection
	// goes on; an unserved one is refused by name, a write by the
	// handler's refusal; FINI closes.
	types, bodies := dbdExchange(t, s,
		initFrame("MUNGE:good:", codec.V24_11),
		codec.AppendDBDFrame(nil, codec.DBD_GET_JOBS_COND, []byte{0, 0}),
		codec.AppendDBDFrame(nil, codec.DBD_GET_EVENTS, nil),
		codec.AppendDBDFrame(nil, codec.DBD_GET_USERS, []byte{0, 1, 2}),
		codec.AppendDBDFrame(nil, codec.DBD_ADD_USERS, []byte{9}),
		getJobs, fini, getJobs)
	if len(types) != 6 || types[5] != codec.DBD_GOT_JOBS {
		t.Fatalf("answers %v", types)
	}
	for i := 0; i < 5; i++ {
		if types[i] != codec.PERSIST_RC {
			t.Fatalf("answers %v", types)
		}
	}
	if rc := persistRC(t, bodies[3]); rc.RC != codec.SLURM_ERROR || rc.RetInfo != codec.DBD_GET_USERS {
		t.Errorf("a truncated user condition answered %+v", rc)
	}
	if rc := persistRC(t, bodies[4]); rc.RC != codec.ESLURM_NOT_SUPPORTED || rc.Comment != "no" {
		t.Errorf("DBD_ADD_USERS answered %+v", rc)
	}
	bodies = append(bodies[:3], bodies[5:]...)
	if rc := persistRC(t, bodies[0]); rc.RC != 0 || rc.RetInfo != codec.V24_11 {
		t.Errorf("init answer %+v", rc)
	}
	if rc := persistRC(t, bodies[1]); rc.RC == 0 {
		t.Errorf("a truncated job condition answered %+v", rc)
	}
	if rc := persistRC(t, bodies[2]); rc.RC != codec.ESLURM_NOT_SUPPORTED || rc.Comment != "slurm-frontend's accounting does not answer DBD_GET_EVENTS yet" {
		t.Errorf("DBD_GET_EVENTS answered %+v", rc)
	}
	var got codec.GotJobs
	r := codec.NewReader(bodies[3])
	if err := got.Decode(&r, codec.V24_11); err != nil || len(got.Jobs) != 1 || got.Jobs[0].JobID != 42 {
		t.Errorf("DBD_GOT_JOBS %+v %v", got, err)
	}
	if uid := <-h.uid; uid != 1000 {
		t.Errorf("the handler got uid %d, want the credential's 1000", uid)
	}
}
