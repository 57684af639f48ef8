package main

import (
	"context"
	"fmt"
	"io"
	"log"
	"log/slog"
	"strconv"
	"strings"
	"sync/atomic"
)

// Logs are structured (log/slog): logfmt by default, JSON with
// FrontendLogFormat=json, on standard error (the journal, under
// systemd). The level is SlurmctldDebug's, as slurmctld reads it (quiet,
// fatal, error, info, verbose, debug, debug2 ... debug5, or 0-9), and
// `scontrol setdebug` and `scontrol reconfigure` change it while the
// server runs. At debug and below every RPC gets a line of its own
// (type, protocol version, uid, peer, how the reply was made, time).
//
// Nothing secret is logged: the munge key and credentials, the
// Backend.AI secret key, job scripts and job environments never reach a
// log line (TestLogsHoldNoSecrets).

// Slurm's log levels (log.h, LOG_LEVEL_*).
const (
	slurmLogQuiet = iota
	slurmLogFatal
	slurmLogError
	slurmLogInfo
	slurmLogVerbose
	slurmLogDebug
	slurmLogDebug5 = slurmLogDebug + 4
)

var slurmLevelNames = []string{"quiet", "fatal", "error", "info", "verbose", "debug", "debug2", "debug3", "debug4", "debug5"}

// parseSlurmLevel reads a SlurmctldDebug value.
func parseSlurmLevel(s string) (int, error) {
	if s == "" {
		return slurmLogInfo, nil
	}
	if n, err := strconv.Atoi(s); err == nil {
		return min(max(n, slurmLogQuiet), slurmLogDebug5), nil
	}
	for i, name := range slurmLevelNames {
		if strings.EqualFold(s, name) {
			return i, nil
		}
	}
	return 0, fmt.Errorf("SlurmctldDebug=%s: one of %s, or 0-9", s, strings.Join(slurmLevelNames, ", "))
}

// slogLevel maps a Slurm level to slog's: error, info as they are,
// verbose between info and debug, debug2-5 below debug.
func slogLevel(n int) slog.Level {
	switch {
	case n <= slurmLogFatal:
		return slog.LevelError + 4 // nothing this server logs is fatal-only
	case n == slurmLogError:
		return slog.LevelError
	case n == slurmLogInfo:
		return slog.LevelInfo
	case n == slurmLogVerbose:
		return slog.LevelInfo - 2
	}
	return slog.LevelDebug - slog.Level(n-slurmLogDebug)
}

// logging is the server's logger and its level.
type logging struct {
	level *slog.LevelVar
	slurm atomic.Int32 // the Slurm level set last
	log   *slog.Logger
	// std is the same handler behind a *log.Logger, for the packages
	// that log with Printf: each line becomes a record of the level its
	// words say (warning:, error:, debug:, Security violation) or info.
	std *log.Logger
}

func newLogging(w io.Writer, format string, slurmLevel int) (*logging, error) {
	l := &logging{level: new(slog.LevelVar)}
	opts := &slog.HandlerOptions{Level: l.level}
	var h slog.Handler
	switch strings.ToLower(format) {
	case "", "text", "logfmt":
		h = slog.NewTextHandler(w, opts)
	case "json":
		h = slog.NewJSONHandler(w, opts)
	default:
		return nil, fmt.Errorf("FrontendLogFormat=%s: text or json", format)
	}
	l.log = slog.New(h)
	l.std = log.New(printfWriter{l.log}, "", 0)
	l.setLevel(slurmLevel)
	return l, nil
}

func (l *logging) setLevel(n int) {
	l.slurm.Store(int32(n))
	l.level.Set(slogLevel(n))
}

type printfWriter struct{ l *slog.Logger }

func (p printfWriter) Write(b []byte) (int, error) {
	msg := strings.TrimRight(string(b), "\n")
	lvl := slog.LevelInfo
	switch {
	case strings.HasPrefix(msg, "warning: "):
		lvl, msg = slog.LevelWarn, msg[len("warning: "):]
	case strings.HasPrefix(msg, "error: "):
		lvl, msg = slog.LevelError, msg[len("error: "):]
	case strings.HasPrefix(msg, "debug: "):
		lvl, msg = slog.LevelDebug, msg[len("debug: "):]
	case strings.Contains(msg, "Security violation"):
		lvl = slog.LevelError
	}
	p.l.Log(context.Background(), lvl, msg)
	return len(b), nil
}
