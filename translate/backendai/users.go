package backendai

import (
	"context"
	"fmt"
	"time"
)

// User is a legacy GraphQL User.
type User struct {
	UUID               string   `json:"uuid"`
	Username           string   `json:"username"`
	Email              string   `json:"email"`
	FullName           string   `json:"full_name"`
	DomainName         string   `json:"domain_name"`
	Role               string   `json:"role"`   // superadmin, admin, user, monitor
	Status             string   `json:"status"` // active, inactive, deleted, before-verification
	IsActive           bool     `json:"is_active"`
	ResourcePolicy     string   `json:"resource_policy"`
	MainAccessKey      string   `json:"main_access_key"`
	SudoSessionEnabled bool     `json:"sudo_session_enabled"`
	ContainerUID       *int     `json:"container_uid"`      // process UID in the user's containers
	ContainerMainGID   *int     `json:"container_main_gid"` // primary GID
	ContainerGIDs      []int    `json:"container_gids"`     // supplementary GIDs
	AllowedClientIP    []string `json:"allowed_client_ip"`
	Groups             []struct {
		ID   string `json:"id"`
		Name string `json:"name"`
	} `json:"groups"` // the projects the user is a member of
}

// MemberOf reports whether the user is a member of the project (by UUID
// or name).
func (u *User) MemberOf(project string) bool {
	id, _ := canonicalUUID(project)
	for _, g := range u.Groups {
		if g.Name == project || (id != "" && g.ID == id) {
			return true
		}
	}
	return false
}

const userFields = `uuid username email full_name domain_name role status is_active resource_policy
  main_access_key sudo_session_enabled container_uid container_main_gid container_gids allowed_client_ip
  groups { id name }`

// UserByUsername finds a user by username (legacy GraphQL user_list with
// filter username == …; superadmin, or admin within its domain). domain,
// when set, narrows the search. No match gives an error for which
// IsNotFound is true; several, one for which IsAmbiguous is true.
func (c *Client) UserByUsername(ctx context.Context, username, domain string) (*User, error) {
	qs, err := quoteFilter(username)
	if err != nil {
		return nil, err
	}
	users, err := c.listUsers(ctx, "username == "+qs, domain, "", 2)
	if err != nil {
		return nil, err
	}
	switch len(users) {
	case 0:
		return nil, fmt.Errorf("backendai: user %q: %w", username, ErrNotFound)
	case 1:
		return &users[0], nil
	}
	return nil, fmt.Errorf("backendai: user %q: %w (in several domains; give the domain)", username, ErrAmbiguous)
}

// UserByEmail finds a user by e-mail (the login name).
func (c *Client) UserByEmail(ctx context.Context, email string) (*User, error) {
	qs, err := quoteFilter(email)
	if err != nil {
		return nil, err
	}
	users, err := c.listUsers(ctx, "email == "+qs, "", "", 2)
	if err != nil {
		return nil, err
	}
	if len(users) == 0 {
		return nil, fmt.Errorf("backendai: user %q: %w", email, ErrNotFound)
	}
	return &users[0], nil
}

// ProjectMembers lists the users of a project (user_list with group_id;
// unlike "users", which stops at 100, it pages).
func (c *Client) ProjectMembers(ctx context.Context, projectID string) ([]User, error) {
	id, err := canonicalUUID(projectID)
	if err != nil {
		return nil, err
	}
	return c.listUsers(ctx, "", "", id, 0)
}

func (c *Client) listUsers(ctx context.Context, filter, domain, groupID string, max int) ([]User, error) {
	q := `query($limit: Int!, $offset: Int!, $filter: String, $domain: String, $group: UUID) {
  user_list(limit: $limit, offset: $offset, filter: $filter, order: "+email", domain_name: $domain, group_id: $group) {
    total_count
    items { ` + userFields + ` }
  }
}`
	vars := map[string]any{}
	if filter != "" {
		vars["filter"] = filter
	}
	if domain != "" {
		vars["domain"] = domain
	}
	if groupID != "" {
		vars["group"] = groupID
	}
	var out []User
	err := pageAll(ctx, 100, max, func(ctx context.Context, offset, limit int) (int, int, error) {
		vars["limit"], vars["offset"] = limit, offset
		var ans struct {
			List *struct {
				TotalCount int     `json:"total_count"`
				Items      []*User `json:"items"`
			} `json:"user_list"`
		}
		if err := c.Query(ctx, q, vars, &ans); err != nil {
			return 0, 0, err
		}
		if ans.List == nil {
			return 0, 0, nil
		}
		out = append(out, derefAll(ans.List.Items)...)
		return len(ans.List.Items), ans.List.TotalCount, nil
	})
	return out, err
}

// Keypair is a legacy GraphQL KeyPair. The secret key is never asked for.
type Keypair struct {
	AccessKey       string     `json:"access_key"`
	IsActive        bool       `json:"is_active"`
	IsAdmin         bool       `json:"is_admin"`
	ResourcePolicy  string     `json:"resource_policy"`
	RateLimit       *int       `json:"rate_limit"`
	UserEmail       string     `json:"user_id"` // KeyPair.user_id is the e-mail
	UserUUID        string     `json:"user"`
	ConcurrencyUsed *int       `json:"concurrency_used"`
	LastUsed        *time.Time `json:"-"`
	CreatedAt       *time.Time `json:"-"`
	Projects        []string   `json:"projects"`
}

// Keypairs lists a user's keypairs by e-mail (legacy GraphQL
// keypairs(email)); activeOnly keeps the active ones.
func (c *Client) Keypairs(ctx context.Context, email string, activeOnly bool) ([]Keypair, error) {
	q := `query($email: String, $active: Boolean) {
  keypairs(email: $email, is_active: $active) {
    access_key is_active is_admin resource_policy rate_limit user_id user concurrency_used
    last_used created_at projects
  }
}`
	vars := map[string]any{"email": email}
	if activeOnly {
		vars["active"] = true
	}
	var ans struct {
		Keypairs []*struct {
			Keypair
			LastUsed  gqlTime `json:"last_used"`
			CreatedAt gqlTime `json:"created_at"`
		} `json:"keypairs"`
	}
	if email == "" {
		return nil, fmt.Errorf("%w: e-mail is required (without it the manager lists 100 keypairs of anyone)", ErrInvalidRequest)
	}
	if err := c.Query(ctx, q, vars, &ans); err != nil {
		return nil, err
	}
	out := make([]Keypair, 0, len(ans.Keypairs))
	for _, k := range ans.Keypairs {
		if k == nil {
			continue
		}
		kp := k.Keypair
		kp.LastUsed, kp.CreatedAt = k.LastUsed.t, k.CreatedAt.t
		out = append(out, kp)
	}
	return out, nil
}

// Project is a legacy GraphQL Group.
type Project struct {
	ID                   string     `json:"id"`
	Name                 string     `json:"name"`
	DomainName           string     `json:"domain_name"`
	IsActive             bool       `json:"is_active"`
	Type                 string     `json:"type"` // GENERAL, MODEL_STORE
	ResourcePolicy       string     `json:"resource_policy"`
	TotalResourceSlots   SlotMap    `json:"total_resource_slots"`
	AllowedVFolderHosts  JSONString `json:"allowed_vfolder_hosts"`
	ResourceGroups       []string   `json:"scaling_groups"`
	IntegrationID        *string    `json:"integration_id"`
	ContainerRegistryRaw JSONString `json:"container_registry"`
}

const projectFields = `id name domain_name is_active type resource_policy total_resource_slots
  allowed_vfolder_hosts scaling_groups integration_id container_registry`

// Projects lists the GENERAL projects of a domain (legacy GraphQL groups;
// domain "" = every domain, superadmin only).
func (c *Client) Projects(ctx context.Context, domain string, activeOnly bool) ([]Project, error) {
	q := "query($domain: String, $active: Boolean) { groups(domain_name: $domain, is_active: $active) { " + projectFields + " } }"
	vars := map[string]any{}
	if domain != "" {
		vars["domain"] = domain
	}
	if activeOnly {
		vars["active"] = true
	}
	var ans struct {
		Groups []*Project `json:"groups"`
	}
	if err := c.Query(ctx, q, vars, &ans); err != nil {
		return nil, err
	}
	return derefAll(ans.Groups), nil
}

// ProjectByName finds a project of a domain by name (groups_by_name).
func (c *Client) ProjectByName(ctx context.Context, name, domain string) (*Project, error) {
	q := "query($name: String!, $domain: String) { groups_by_name(name: $name, domain_name: $domain) { " + projectFields + " } }"
	vars := map[string]any{"name": name}
	if domain != "" {
		vars["domain"] = domain
	}
	var ans struct {
		Groups []*Project `json:"groups_by_name"`
	}
	if err := c.Query(ctx, q, vars, &ans); err != nil {
		return nil, err
	}
	ps := derefAll(ans.Groups)
	switch len(ps) {
	case 0:
		return nil, fmt.Errorf("backendai: project %q: %w", name, ErrNotFound)
	case 1:
		return &ps[0], nil
	}
	return nil, fmt.Errorf("backendai: project %q: %w (in several domains; give the domain)", name, ErrAmbiguous)
}
