package ctld

import (
	"context"
	"strings"
	"time"

	"github.com/lablup/slurm-frontend/codec"
	"github.com/lablup/slurm-frontend/state"
	"github.com/lablup/slurm-frontend/translate"
)

// Who may see and do what, as slurmctld decides it (proc_req.c,
// job_mgr.c). The uid is always the credential's; "operator" is root,
// the SlurmUser or a configured operator (validate_operator); there are
// no account coordinators without accounting.

// PRIVATE_DATA_* bits (slurm.h), as PrivateData= sets them.
const (
	privateJobs         = 0x0001
	privateNodes        = 0x0002
	privatePartitions   = 0x0004
	privateUsage        = 0x0008
	privateUsers        = 0x0010
	privateAccounts     = 0x0020
	privateReservations = 0x0040
	privateCloud        = 0x0080 // 22.05 only ("cloud" reveals powered-down cloud nodes)
	privateEvents       = 0x0100
	privateAll          = 0xffff
)

// parsePrivateData reads PrivateData as read_config.c does: each flag is a
// case-insensitive substring match ("job" matches "jobs"), "all" sets
// every bit.
func parsePrivateData(s string) uint16 {
	s = strings.ToLower(s)
	if strings.Contains(s, "all") {
		return privateAll
	}
	var bits uint16
	for _, f := range []struct {
		sub string
		bit uint16
	}{
		{"account", privateAccounts}, {"cloud", privateCloud}, {"event", privateEvents}, {"job", privateJobs},
		{"node", privateNodes}, {"partition", privatePartitions}, {"reservation", privateReservations},
		{"usage", privateUsage}, {"user", privateUsers},
	} {
		if strings.Contains(s, f.sub) {
			bits |= f.bit
		}
	}
	return bits
}

// privateDataFor is the PrivateData scontrol show config gets in version
// v: the cloud flag is a 22.05-era keyword, ignored from 24.11 on.
func (c *Controller) privateDataFor(v uint16) uint16 {
	p := uint16(c.private.Load())
	if v >= codec.V24_11 && p != privateAll {
		p &^= privateCloud
	}
	return p
}

// hides reports whether PrivateData flag bit hides data from uid.
func (c *Controller) hides(bit uint16, uid uint32) bool {
	return uint16(c.private.Load())&bit != 0 && !c.isOperator(uid)
}

// jobVisible reports whether uid may see job e under PrivateData=jobs.
func (c *Controller) jobVisible(uid uint32, e *jobEntry) bool {
	return !c.hides(privateJobs, uid) || e.userID == uid
}

// adminOnly lists the controller RPCs only administrators may send, with
// the error slurmctld gives anyone else (proc_req.c: ESLURM_USER_ID_MISSING
// from validate_super_user / validate_operator checks, EACCES from the
// debug-level handlers). What the RPC would then do for an administrator
// is answered elsewhere.
var adminOnly = map[uint16]uint32{
	codec.REQUEST_RECONFIGURE:             codec.ESLURM_USER_ID_MISSING,
	codec.REQUEST_SHUTDOWN:                codec.ESLURM_USER_ID_MISSING,
	codec.REQUEST_CONTROL:                 codec.ESLURM_USER_ID_MISSING,
	codec.REQUEST_TAKEOVER:                codec.ESLURM_USER_ID_MISSING,
	codec.REQUEST_UPDATE_NODE:             codec.ESLURM_USER_ID_MISSING,
	codec.REQUEST_CREATE_PARTITION:        codec.ESLURM_USER_ID_MISSING,
	codec.REQUEST_DELETE_PARTITION:        codec.ESLURM_USER_ID_MISSING,
	codec.REQUEST_UPDATE_PARTITION:        codec.ESLURM_USER_ID_MISSING,
	codec.REQUEST_CREATE_RESERVATION:      codec.ESLURM_USER_ID_MISSING,
	codec.REQUEST_DELETE_RESERVATION:      codec.ESLURM_USER_ID_MISSING,
	codec.REQUEST_UPDATE_RESERVATION:      codec.ESLURM_USER_ID_MISSING,
	codec.REQUEST_UPDATE_FRONT_END:        codec.ESLURM_USER_ID_MISSING,
	codec.REQUEST_CREATE_NODE:             codec.ESLURM_USER_ID_MISSING,
	codec.REQUEST_DELETE_NODE:             codec.ESLURM_USER_ID_MISSING,
	codec.REQUEST_SET_DEBUG_LEVEL:         codec.EACCES,
	codec.REQUEST_SET_DEBUG_FLAGS:         codec.EACCES,
	codec.REQUEST_SET_SCHEDLOG_LEVEL:      codec.EACCES,
	codec.REQUEST_REBOOT_NODES:            codec.EACCES,
	codec.REQUEST_SET_FS_DAMPENING_FACTOR: codec.EACCES,
	codec.REQUEST_SET_SUSPEND_EXC_NODES:   codec.EACCES,
	codec.REQUEST_SET_SUSPEND_EXC_PARTS:   codec.EACCES,
	codec.REQUEST_SET_SUSPEND_EXC_STATES:  codec.EACCES,
}

// adminDenied answers an administrator-only RPC from anyone else, ok=false
// for other RPCs and for administrators. slurmctld checks after unpacking
// the body; this server has no decoder for most of these bodies, so it
// refuses a non-administrator's request whatever the body holds. The
// suspend-exclusion RPCs are 24.11's, front-end updates gone in 26.05:
// outside those releases they are unknown types, for which slurmctld
// closes the connection.
func (c *Controller) adminDenied(s *Snapshot, req *Request) (Reply, bool) {
	code, ok := adminOnly[req.MsgType]
	if !ok || c.isOperator(req.UID) {
		return Reply{}, false
	}
	switch req.MsgType {
	case codec.REQUEST_SET_SUSPEND_EXC_NODES, codec.REQUEST_SET_SUSPEND_EXC_PARTS, codec.REQUEST_SET_SUSPEND_EXC_STATES:
		if req.Version < codec.V24_11 {
			return Reply{Drop: true}, true
		}
	case codec.REQUEST_UPDATE_FRONT_END:
		if req.Version >= codec.V26_05 {
			return Reply{Drop: true}, true
		}
	}
	c.logf("Security violation, %s RPC from uid=%d", codec.MsgTypeName(req.MsgType), req.UID)
	return s.rc(req.Version, code), true
}

// jobNotify handles REQUEST_JOB_NOTIFY (scontrol notify JOB MSG): the
// message goes to a running batch job's error output, as slurmstepd
// writes it ("slurmstepd: error: MSG"). Only the owner, root and the
// SlurmUser may notify (operators may not: _slurm_rpc_job_notify).
func (c *Controller) jobNotify(req *Request) Reply {
	var m codec.JobNotifyRequest
	r := codec.NewReader(req.Body)
	if err := m.Decode(&r, req.Version); err != nil {
		return rcReply(codec.CodeOf(err))
	}
	if len(m.Message) > maxNotify {
		// The message is kept in the engine's spool until delivered.
		return rcReply(codec.ESLURM_PATHNAME_TOO_LONG)
	}
	s := c.snap.Load()
	e := s.lookup(m.StepID.JobID)
	if e == nil {
		return rcReply(codec.ESLURM_INVALID_JOB_ID)
	}
	if e.userID != req.UID && req.UID != 0 && req.UID != c.opt.SlurmUID {
		c.logf("Security violation, REQUEST_JOB_NOTIFY RPC from uid=%d for job %d owner %d", req.UID, e.id, e.userID)
		return rcReply(codec.ESLURM_USER_ID_MISSING)
	}
	j := e.job()
	switch {
	case !codec.JobIsPending(j.State) && !codec.JobIsRunning(j.State):
		return rcReply(codec.ESLURM_ALREADY_DONE) // finished, or suspended
	case codec.JobIsPending(j.State) || j.SessionID == "" || j.SessionID == sessionCreating:
		return rcReply(codec.ESLURM_DISABLED) // a pending batch job cannot be reached
	}
	n, ok := c.opt.Exec.(translate.Notifier)
	if !ok {
		return rcReply(codec.ESLURM_DISABLED)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := n.NotifySession(ctx, translate.SessionID(j.SessionID), m.Message); err != nil {
		// slurmctld queues the message to slurmd and answers success
		// whatever becomes of it; a refusal we know of is said.
		c.logf("job %d: notify: %v", j.ID, err)
		return rcReply(codec.ESLURM_DISABLED)
	}
	return rcReply(codec.SLURM_SUCCESS)
}

// maxNotify bounds a notify message (slurmctld sets none; a request may
// carry 64 MiB, which would sit in the spool): the limit it applies to a
// job's submit line.
const maxNotify = defaultMaxSubmitLine

// batchScript handles REQUEST_BATCH_SCRIPT (scontrol write batch_script):
// the owner and operators get the script (PrivateData plays no part);
// anyone else ESLURM_USER_ID_MISSING (_slurm_rpc_dump_batch_script).
func (c *Controller) batchScript(req *Request) Reply {
	var m codec.BatchScriptRequest
	r := codec.NewReader(req.Body)
	if err := m.Decode(&r, req.Version); err != nil {
		return rcReply(codec.CodeOf(err))
	}
	e := c.snap.Load().lookup(m.JobID)
	if e == nil {
		return rcReply(codec.ESLURM_INVALID_JOB_ID)
	}
	if !c.mayControl(req.UID, &state.Job{UserID: e.userID}) {
		c.logf("Security violation, REQUEST_BATCH_SCRIPT RPC from uid=%d for job %d owner %d", req.UID, e.id, e.userID)
		return rcReply(codec.ESLURM_USER_ID_MISSING)
	}
	sc, err := c.opt.Store.Script(scriptID(e.job()))
	if err != nil || sc.Text == "" {
		return rcReply(codec.ESLURM_JOB_SCRIPT_MISSING)
	}
	w := codec.Writer{}
	(&codec.BatchScriptResponse{Script: sc.Text}).Encode(&w, req.Version)
	return Reply{MsgType: codec.RESPONSE_BATCH_SCRIPT, Body: w.B}
}
