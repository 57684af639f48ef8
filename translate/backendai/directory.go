package backendai

import (
	"context"
	"sort"
	"time"

	"github.com/lablup/slurm-frontend/translate"
)

// The accounting directory: Backend.AI's projects of the domain are the
// accounts, its active users the users, each in the projects it is a
// member of, its default account the engine's default project where it
// is a member (the project its jobs without -A run in), else its first.
// Read at most once a minute (sacctmgr and sshare are rare next to
// squeue, and a manager with thousands of users pages them).

const directoryTTL = time.Minute

// Directory implements translate.Directory.
func (e *Engine) Directory(ctx context.Context) (*translate.DirectoryInfo, error) {
	e.mu.Lock()
	if d := e.dir; d != nil && time.Since(e.dirAt) < directoryTTL {
		e.mu.Unlock()
		return d, nil
	}
	e.mu.Unlock()
	projects, err := e.c.Projects(ctx, e.cfg.Domain, true)
	if err != nil {
		return nil, engineErr(err)
	}
	users, err := e.c.listUsers(ctx, "", e.cfg.Domain, "", 0)
	if err != nil {
		return nil, engineErr(err)
	}
	d := &translate.DirectoryInfo{JobsAccount: e.cfg.Project}
	known := map[string]bool{}
	for _, p := range projects {
		d.Accounts = append(d.Accounts, translate.DirAccount{Name: p.Name, Organization: p.DomainName})
		known[p.Name] = true
	}
	for _, u := range users {
		if !u.IsActive {
			continue
		}
		du := translate.DirUser{Name: u.Username, Admin: u.Role == "superadmin"}
		if u.ContainerUID != nil && *u.ContainerUID >= 0 {
			du.UID, du.UIDKnown = uint32(*u.ContainerUID), true
		}
		for _, g := range u.Groups {
			if known[g.Name] {
				du.Accounts = append(du.Accounts, g.Name)
			}
		}
		sort.Strings(du.Accounts)
		for _, a := range du.Accounts {
			if a == e.cfg.Project {
				du.DefaultAccount = a
			}
		}
		if du.DefaultAccount == "" && len(du.Accounts) > 0 {
			du.DefaultAccount = du.Accounts[0]
		}
		d.Users = append(d.Users, du)
	}
	e.mu.Lock()
	e.dir, e.dirAt = d, time.Now()
	e.mu.Unlock()
	return d, nil
}
