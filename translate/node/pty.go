package node

import (
	"context"
	"io"
	"net"
	"net/netip"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/creack/pty"

	"github.com/lablup/slurm-frontend/codec"
)

// srun --pty: task 0 gets a terminal, sized as srun's (SLURM_PTY_WIN_COL
// and _ROW in its environment); its output (stdout and stderr merged)
// goes back as task 0's stdout, srun's keystrokes come in as its stdin
// (Ctrl-C is a byte the terminal turns into SIGINT). srun tells of every
// window change on its SLURM_PTY_PORT, which the task's node connects
// to: the terminal is resized, and the kernel signals the task.

// openPTY opens a terminal sized as the environment says.
func openPTY(env []string) (master, tty *os.File, err error) {
	master, tty, err = pty.Open()
	if err != nil {
		return nil, nil, err
	}
	cols, _ := strconv.ParseUint(envOf(env, "SLURM_PTY_WIN_COL"), 10, 16)
	rows, _ := strconv.ParseUint(envOf(env, "SLURM_PTY_WIN_ROW"), 10, 16)
	if cols > 0 && rows > 0 {
		_ = pty.Setsize(master, &pty.Winsize{Cols: uint16(cols), Rows: uint16(rows)})
	}
	return master, tty, nil
}

// windowSizes relays srun's window sizes to the terminal until srun
// closes the channel.
func (s *Service) windowSizes(srun netip.Addr, env []string, master *os.File) {
	port, err := strconv.ParseUint(envOf(env, "SLURM_PTY_PORT"), 10, 16)
	if err != nil || port == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	c, err := (&net.Dialer{}).DialContext(ctx, "tcp", netip.AddrPortFrom(srun, uint16(port)).String())
	cancel()
	if err != nil {
		s.logf("srun --pty: window size channel %v:%d: %v", srun, port, err)
		return
	}
	defer c.Close()
	var rec [codec.WinsizeLen]byte
	for {
		if _, err := io.ReadFull(c, rec[:]); err != nil {
			return
		}
		cols, rows, err := codec.DecodeWinsize(rec[:])
		if err != nil {
			return
		}
		if err := pty.Setsize(master, &pty.Winsize{Cols: cols, Rows: rows}); err != nil {
			return // the task is gone
		}
	}
}

func envOf(env []string, key string) string {
	for i := len(env) - 1; i >= 0; i-- {
		if v, ok := strings.CutPrefix(env[i], key+"="); ok {
			return v
		}
	}
	return ""
}
