package ctld

import (
	"context"
	"os"
	"os/exec"
	"os/user"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/lablup/slurm-frontend/codec"
	"github.com/lablup/slurm-frontend/state"
)

// MAIL_JOB_* (slurm.h): which events --mail-type asks to be told about.
const (
	mailBegin = 0x0001
	mailEnd   = 0x0002
	mailFail  = 0x0004
)

// mailProg is the configured MailProg if it can run, else "".
func (c *Controller) mailProg() string {
	p := c.config().Get("MailProg", "/bin/mail") // slurmctld's default
	if p == "" {
		return ""
	}
	if st, err := os.Stat(p); err != nil || st.IsDir() || st.Mode()&0o111 == 0 {
		return ""
	}
	return p
}

// notify runs MailProg as slurmctld does ("MailProg -s SUBJECT USER")
// when the job asked for mail about one of the events. slurmctld runs it
// as SlurmUser; this server runs as root, so MailProg runs as the job's
// owner instead, with a clean environment: the recipient (--mail-user)
// and the subject (the job name) are the user's words, and mail programs
// take options from their arguments (mailutils' --exec, s-nail's -S), so
// as root a recipient of "--exec=..." would run a command as root. As the
// user it can do nothing the user could not.
func (c *Controller) notify(j *state.Job, events uint16) {
	if j.MailType&events == 0 {
		return
	}
	prog := c.mailProg()
	if prog == "" {
		return
	}
	to := j.MailUser
	if to == "" {
		to = j.UserName
	}
	var what, mailType string
	switch {
	case events&mailBegin != 0:
		what, mailType = "Began", "Began"
	case j.State&codec.JOB_STATE_BASE == codec.JOB_COMPLETE:
		what, mailType = "Ended, Run time "+runTime(j)+", COMPLETED, ExitCode 0", "Ended"
	default:
		what, mailType = "Failed, Run time "+runTime(j)+", "+codec.JobStateString(j.State), "Failed"
	}
	subject := "Slurm Job_id=" + jobLabel(j) + " Name=" + j.Name + " " + what
	cr, home, err := userCredential(j.UserID, j.GroupID)
	if err != nil {
		c.logf("MailProg for job %d: not run: %v", j.ID, err)
		return
	}
	env := []string{
		"PATH=/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin", "HOME=" + home,
		"USER=" + j.UserName, "LOGNAME=" + j.UserName,
		"SLURM_JOB_ID=" + itoa(uint64(j.ID)), "SLURM_JOB_USER=" + j.UserName, "SLURM_JOB_UID=" + itoa(uint64(j.UserID)),
		"SLURM_JOB_NAME=" + j.Name, "SLURM_JOB_STATE=" + codec.JobStateString(j.State&^codec.JOB_COMPLETING),
		"SLURM_JOB_MAIL_TYPE=" + mailType,
	}
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), mailTimeout)
		defer cancel()
		cmd := exec.CommandContext(ctx, prog, "-s", subject, to)
		cmd.Stdin = strings.NewReader("")
		cmd.Env, cmd.Dir = env, "/"
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cr, Setsid: true}
		if err := cmd.Run(); err != nil {
			c.logf("MailProg %s for job %d: %v", prog, j.ID, err)
		}
	}()
}

// mailTimeout is slurmctld's MAIL_PROG_TIMEOUT.
const mailTimeout = 120 * time.Second

// userCredential is the identity programs run for uid's job run with:
// uid, the job's gid and the user's groups, and the user's home.
func userCredential(uid, gid uint32) (*syscall.Credential, string, error) {
	u, err := user.LookupId(strconv.FormatUint(uint64(uid), 10))
	if err != nil {
		return nil, "", err
	}
	cr := &syscall.Credential{Uid: uid, Gid: gid}
	if ids, err := u.GroupIds(); err == nil {
		for _, id := range ids {
			if g, err := strconv.ParseUint(id, 10, 32); err == nil {
				cr.Groups = append(cr.Groups, uint32(g))
			}
		}
	}
	return cr, u.HomeDir, nil
}

func runTime(j *state.Job) string {
	d := max(j.EndTime-j.StartTime, 0)
	h, m, s := d/3600, d/60%60, d%60
	return pad2(h) + ":" + pad2(m) + ":" + pad2(s)
}

func pad2(v int64) string {
	if v < 10 {
		return "0" + itoa(uint64(v))
	}
	return itoa(uint64(v))
}
