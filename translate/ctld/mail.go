package ctld

import (
	"os"
	"os/exec"
	"strings"

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
	p := c.opt.Conf.Get("MailProg", "/bin/mail") // slurmctld's default
	if p == "" {
		return ""
	}
	if st, err := os.Stat(p); err != nil || st.IsDir() || st.Mode()&0o111 == 0 {
		return ""
	}
	return p
}

// notify runs MailProg as slurmctld does ("MailProg -s SUBJECT USER")
// when the job asked for mail about one of the events.
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
	var what string
	switch {
	case events&mailBegin != 0:
		what = "Began"
	case j.State&codec.JOB_STATE_BASE == codec.JOB_COMPLETE:
		what = "Ended, Run time " + runTime(j) + ", COMPLETED, ExitCode 0"
	default:
		what = "Failed, Run time " + runTime(j) + ", " + codec.JobStateString(j.State)
	}
	subject := "Slurm Job_id=" + jobLabel(j) + " Name=" + j.Name + " " + what
	go func() {
		cmd := exec.Command(prog, "-s", subject, to)
		cmd.Stdin = strings.NewReader("")
		if err := cmd.Run(); err != nil {
			c.logf("MailProg %s for job %d: %v", prog, j.ID, err)
		}
	}()
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
