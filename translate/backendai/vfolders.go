package backendai

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
)

// VFolder is one entry of GET /folders (VFolderItemField).
type VFolder struct {
	ID            string // canonical UUID (the manager sends plain hex)
	Name          string
	Host          string
	QuotaScopeID  string
	UsageMode     string // general, model, data
	Permission    string // ro, rw, wd
	Creator       string
	OwnershipType string // user, group
	User          string // owner user UUID (user folders)
	Group         string // owner project UUID (project folders)
	Cloneable     bool
	Status        string // ready, performing, cloning, mounted, error, delete-*
	IsOwner       bool
	CreatedAt     string
}

// Mountable reports whether the folder's status allows mounting
// (VFolderStatusSet.MOUNTABLE: ready, performing, cloning, mounted).
func (v VFolder) Mountable() bool {
	switch v.Status {
	case "ready", "performing", "cloning", "mounted":
		return true
	}
	return false
}

// VFolderQuery selects GET /folders.
type VFolderQuery struct {
	// OwnerEmail lists that user's folders (superadmin only); "" = the
	// admin keypair's own.
	OwnerEmail string
	// ProjectID lists that project's folders instead of a user's.
	ProjectID string
}

// VFolders is GET /folders: the folders the user can access (owned,
// shared with them, and their projects'), or a project's.
func (c *Client) VFolders(ctx context.Context, q VFolderQuery) ([]VFolder, error) {
	v := url.Values{}
	if q.OwnerEmail != "" {
		v.Set("owner_user_email", q.OwnerEmail)
	}
	if q.ProjectID != "" {
		id, err := canonicalUUID(q.ProjectID)
		if err != nil {
			return nil, err
		}
		v.Set("group_id", id)
	}
	var raw []struct {
		ID            string          `json:"id"`
		Name          string          `json:"name"`
		Host          string          `json:"host"`
		QuotaScopeID  string          `json:"quota_scope_id"`
		UsageMode     string          `json:"usage_mode"`
		Permission    string          `json:"permission"`
		Creator       string          `json:"creator"`
		OwnershipType string          `json:"ownership_type"`
		User          *string         `json:"user"`
		Group         *string         `json:"group"`
		Cloneable     bool            `json:"cloneable"`
		Status        string          `json:"status"`
		IsOwner       bool            `json:"is_owner"`
		CreatedAt     json.RawMessage `json:"created_at"`
	}
	if err := c.Do(ctx, Request{Method: http.MethodGet, Path: "/folders", Query: v}, &raw); err != nil {
		return nil, err
	}
	out := make([]VFolder, 0, len(raw))
	for _, r := range raw {
		id, err := canonicalUUID(r.ID)
		if err != nil {
			id = r.ID
		}
		out = append(out, VFolder{
			ID: id, Name: r.Name, Host: r.Host, QuotaScopeID: r.QuotaScopeID, UsageMode: r.UsageMode,
			Permission: r.Permission, Creator: r.Creator, OwnershipType: r.OwnershipType,
			User: canonOrRaw(deref(r.User)), Group: canonOrRaw(deref(r.Group)), Cloneable: r.Cloneable,
			Status: r.Status, IsOwner: r.IsOwner, CreatedAt: rawToString(r.CreatedAt),
		})
	}
	return out, nil
}

func canonOrRaw(s string) string {
	if s == "" {
		return ""
	}
	if id, err := canonicalUUID(s); err == nil {
		return id
	}
	return s
}

// ResolveMounts turns name-only mounts into ID mounts, looking the names
// up among the folders the owner can access (GET /folders as superadmin
// with owner_user_email) — which the 26.8.1 manager does not do itself: it
// resolves legacy names with an unscoped query over every vfolder row of
// that name. A name may carry a "/subpath". Among several folders of one
// name, the owner's own is taken, then the session project's; otherwise
// the name is ambiguous. Mounts that already have an ID are kept.
func (c *Client) ResolveMounts(ctx context.Context, ownerEmail, projectID string, mounts []Mount) ([]Mount, error) {
	need := false
	for _, m := range mounts {
		if m.ID == "" {
			need = true
		}
	}
	if !need {
		return mounts, nil
	}
	if ownerEmail == "" {
		return nil, fmt.Errorf("%w: resolving vfolder names needs the owner's e-mail", ErrInvalidRequest)
	}
	folders, err := c.VFolders(ctx, VFolderQuery{OwnerEmail: ownerEmail})
	if err != nil {
		return nil, err
	}
	proj, _ := canonicalUUID(projectID)
	out := make([]Mount, 0, len(mounts))
	for _, m := range mounts {
		if m.ID != "" {
			out = append(out, m)
			continue
		}
		name, sub, _ := strings.Cut(m.Name, "/")
		if sub != "" && m.Subpath == "" {
			m.Subpath = sub
		}
		f, err := pickFolder(folders, name, proj)
		if err != nil {
			return nil, err
		}
		m.ID, m.Name = f.ID, name
		out = append(out, m)
	}
	return out, nil
}

func pickFolder(folders []VFolder, name, project string) (*VFolder, error) {
	var cands []*VFolder
	for i := range folders {
		if folders[i].Name == name && folders[i].Mountable() {
			cands = append(cands, &folders[i])
		}
	}
	if len(cands) == 0 {
		return nil, fmt.Errorf("backendai: vfolder %q: %w (or not mountable)", name, ErrNotFound)
	}
	if len(cands) == 1 {
		return cands[0], nil
	}
	pick := func(ok func(*VFolder) bool) *VFolder {
		var hit *VFolder
		for _, f := range cands {
			if ok(f) {
				if hit != nil {
					return nil
				}
				hit = f
			}
		}
		return hit
	}
	if f := pick(func(f *VFolder) bool { return f.OwnershipType == "user" && f.IsOwner }); f != nil {
		return f, nil
	}
	if project != "" {
		if f := pick(func(f *VFolder) bool { return f.OwnershipType == "group" && f.Group == project }); f != nil {
			return f, nil
		}
	}
	return nil, fmt.Errorf("backendai: vfolder %q: %w (%d accessible folders have that name)", name, ErrAmbiguous, len(cands))
}
