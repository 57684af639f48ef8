package backendai

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/lablup/slurm-frontend/translate"
)

// Fair share (BEP-1026, manager 26.3 and later). The sokovan scheduler's
// FairShareObserver (every 5 minutes) books each kernel's occupied slots ×
// seconds into daily usage buckets per (resource group, user, project),
// then for every user with buckets in the lookback window computes
// (sokovan/scheduler/fair_share/calculator.py at 26.8.1):
//
//	decayed[r]  = Σ_day bucket[r] · 2^(-days_ago / half_life_days)
//	normalized  = Σ_r w[r]·decayed[r]/(capacity[r]·lookback_days·86400) / Σ_r w[r]
//	factor      = 2^(-normalized / weight)   (exponent clamped to [-10, 10])
//
// capacity being the ALIVE schedulable agents' slots of the group. The
// factor is in (0, 1]; higher means less past use, i.e. higher priority
// (the DTO docstrings saying "lower factor = higher priority" are wrong:
// the calculator and the sequencer sort by factor descending). Records
// exist only for users that had usage (or got a weight): a user without
// one has factor 1.
//
// Reads are v1 REST under /fair-share, superadmin only
// (api/rest/fair_share/registry.py): POST /fair-share/users/search and
// GET /fair-share/users/{rg}/{project_id}/{user_uuid}. Decimals arrive as
// JSON strings.

// UserFairShare is one user_fair_shares record (UserFairShareDTO).
type UserFairShare struct {
	ID            string // uuid5 of "rg:user:project" (not a row id)
	ResourceGroup string
	UserUUID      string
	ProjectID     string
	DomainName    string

	// Weight is the effective weight: the record's, else the resource
	// group's default_weight (1). Higher weight = less penalty for usage.
	Weight          float64
	HalfLifeDays    int
	LookbackDays    int
	DecayUnitDays   int
	ResourceWeights map[string]float64

	// Factor is the fair share factor of the last calculation, in (0, 1]
	// (six decimals); higher = higher priority.
	Factor float64
	// TotalDecayedUsage is the decayed usage per slot, in slot units ×
	// seconds (cpu: core-seconds, mem: byte-seconds, cuda.device:
	// device-seconds), rounded to hundredths.
	TotalDecayedUsage map[string]float64
	// NormalizedUsage is the weighted mean of decayed usage over the
	// capacity of the lookback window (0 … 1 when within capacity).
	NormalizedUsage float64
	LookbackStart   time.Time // dates (UTC midnight)
	LookbackEnd     time.Time
	// LastCalculatedAt is when the factor was computed; records of users
	// without recent usage are not recomputed, so it can be old.
	LastCalculatedAt time.Time
	CreatedAt        time.Time
	UpdatedAt        time.Time
}

// UserFairShareFilter narrows UserFairShares; empty fields match all.
// Matches are exact (the manager's StringFilter/UUIDFilter "equals").
type UserFairShareFilter struct {
	ResourceGroup string
	ProjectID     string
	UserUUID      string
	DomainName    string
}

// fairSharePage is the manager's page-size limit (le=1000).
const fairSharePage = 1000

// UserFairShares lists the user fair-share records (POST
// /fair-share/users/search, superadmin), every page of them. Several
// filters are merged, later non-empty fields winning. A manager without
// the API (older than 26.3) answers 404 url-not-found; IsNoFairShare
// reports true for that error.
func (c *Client) UserFairShares(ctx context.Context, filter ...UserFairShareFilter) ([]UserFairShare, error) {
	var f UserFairShareFilter
	for _, x := range filter {
		if x.ResourceGroup != "" {
			f.ResourceGroup = x.ResourceGroup
		}
		if x.ProjectID != "" {
			f.ProjectID = x.ProjectID
		}
		if x.UserUUID != "" {
			f.UserUUID = x.UserUUID
		}
		if x.DomainName != "" {
			f.DomainName = x.DomainName
		}
	}
	cond := map[string]any{}
	if f.ResourceGroup != "" {
		cond["resource_group"] = map[string]string{"equals": f.ResourceGroup}
	}
	if f.DomainName != "" {
		cond["domain_name"] = map[string]string{"equals": f.DomainName}
	}
	for k, v := range map[string]string{"project_id": f.ProjectID, "user_uuid": f.UserUUID} {
		if v == "" {
			continue
		}
		id, err := canonicalUUID(v)
		if err != nil {
			return nil, err
		}
		cond[k] = map[string]string{"equals": id}
	}
	body := map[string]any{
		// created_at is the only stable key the API sorts by; records
		// made in one observer pass share it, hence the de-duplication.
		"order": []map[string]string{{"field": "created_at", "direction": "asc"}},
	}
	if len(cond) > 0 {
		body["filter"] = cond
	}
	var out []UserFairShare
	seen := map[string]bool{}
	err := pageAll(ctx, fairSharePage, 0, func(ctx context.Context, offset, limit int) (int, int, error) {
		body["limit"], body["offset"] = limit, offset
		var ans struct {
			Items      []*userFairShareDTO `json:"items"`
			Pagination struct {
				Total int `json:"total"`
			} `json:"pagination"`
		}
		if err := c.Do(ctx, Request{Method: http.MethodPost, Path: "/fair-share/users/search", Body: body, Idempotent: true}, &ans); err != nil {
			return 0, 0, err
		}
		for _, it := range ans.Items {
			if it == nil {
				continue
			}
			fs := it.toUserFairShare()
			k := fs.ResourceGroup + "\x00" + fs.ProjectID + "\x00" + fs.UserUUID
			if !seen[k] {
				seen[k] = true
				out = append(out, fs)
			}
		}
		return len(ans.Items), ans.Pagination.Total, nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// UserFairShare reads one user's fair share in a project and resource
// group (GET /fair-share/users/{rg}/{project_id}/{user_uuid},
// superadmin). A member without a record gets the defaults (factor 1,
// zero usage). An unknown resource group, or a user not in the project,
// gives an error for which IsNotFound is true.
func (c *Client) UserFairShare(ctx context.Context, resourceGroup, projectID, userUUID string) (*UserFairShare, error) {
	pid, err := canonicalUUID(projectID)
	if err != nil {
		return nil, err
	}
	uid, err := canonicalUUID(userUUID)
	if err != nil {
		return nil, err
	}
	if resourceGroup == "" {
		return nil, fmt.Errorf("%w: a resource group is required", ErrInvalidRequest)
	}
	var ans struct {
		Item *userFairShareDTO `json:"item"`
	}
	path := "/fair-share/users/" + url.PathEscape(resourceGroup) + "/" + pid + "/" + uid
	if err := c.Do(ctx, Request{Method: http.MethodGet, Path: path}, &ans); err != nil {
		return nil, err
	}
	if ans.Item == nil {
		return nil, fmt.Errorf("backendai: fair share of %s in %s/%s: %w", uid, resourceGroup, pid, ErrNotFound)
	}
	fs := ans.Item.toUserFairShare()
	return &fs, nil
}

// IsNoFairShare reports whether err says the manager has no fair-share
// API (a manager older than 26.3 answers 404 url-not-found).
func IsNoFairShare(err error) bool {
	e, ok := asAPIError(err)
	return ok && e.Status == http.StatusNotFound && e.Type == ProbURLNotFound
}

// ---- wire shapes (common/dto/manager/fair_share/response.py)

type userFairShareDTO struct {
	ID            string `json:"id"`
	ResourceGroup string `json:"resource_group"`
	UserUUID      string `json:"user_uuid"`
	ProjectID     string `json:"project_id"`
	DomainName    string `json:"domain_name"`
	Spec          struct {
		Weight          *decimalJSON `json:"weight"`
		HalfLifeDays    int          `json:"half_life_days"`
		LookbackDays    int          `json:"lookback_days"`
		DecayUnitDays   int          `json:"decay_unit_days"`
		ResourceWeights slotEntries  `json:"resource_weights"`
	} `json:"spec"`
	Snapshot struct {
		Factor            decimalJSON `json:"fair_share_factor"`
		TotalDecayedUsage slotEntries `json:"total_decayed_usage"`
		NormalizedUsage   decimalJSON `json:"normalized_usage"`
		LookbackStart     string      `json:"lookback_start"`
		LookbackEnd       string      `json:"lookback_end"`
		LastCalculatedAt  string      `json:"last_calculated_at"`
	} `json:"calculation_snapshot"`
	CreatedAt string `json:"created_at"`
	UpdatedAt string `json:"updated_at"`
}

// slotEntries is ResourceSlotDTO: {"entries": [{"resource_type", "quantity"}]}.
type slotEntries struct {
	Entries []struct {
		ResourceType string      `json:"resource_type"`
		Quantity     decimalJSON `json:"quantity"`
	} `json:"entries"`
}

func (s slotEntries) toMap() map[string]float64 {
	m := make(map[string]float64, len(s.Entries))
	for _, e := range s.Entries {
		m[e.ResourceType] = float64(e.Quantity)
	}
	return m
}

// decimalJSON is a pydantic Decimal: a JSON string ("0.982145",
// "1.2E+3", "Infinity"), or a number from other encoders.
type decimalJSON float64

func (d *decimalJSON) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if bytes.Equal(b, []byte("null")) {
		return nil
	}
	s := string(b)
	if len(b) > 0 && b[0] == '"' {
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
	}
	f, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	if err != nil {
		return fmt.Errorf("backendai: decimal %s: %w", b, err)
	}
	*d = decimalJSON(f)
	return nil
}

func (x *userFairShareDTO) toUserFairShare() UserFairShare {
	fs := UserFairShare{
		ID: x.ID, ResourceGroup: x.ResourceGroup, UserUUID: x.UserUUID, ProjectID: x.ProjectID, DomainName: x.DomainName,
		Weight:       1,
		HalfLifeDays: x.Spec.HalfLifeDays, LookbackDays: x.Spec.LookbackDays, DecayUnitDays: x.Spec.DecayUnitDays,
		ResourceWeights:   x.Spec.ResourceWeights.toMap(),
		Factor:            float64(x.Snapshot.Factor),
		TotalDecayedUsage: x.Snapshot.TotalDecayedUsage.toMap(),
		NormalizedUsage:   float64(x.Snapshot.NormalizedUsage),
		LookbackStart:     parseDate(x.Snapshot.LookbackStart),
		LookbackEnd:       parseDate(x.Snapshot.LookbackEnd),
		LastCalculatedAt:  parseDateTime(x.Snapshot.LastCalculatedAt),
		CreatedAt:         parseDateTime(x.CreatedAt),
		UpdatedAt:         parseDateTime(x.UpdatedAt),
	}
	if x.Spec.Weight != nil {
		fs.Weight = float64(*x.Spec.Weight)
	}
	return fs
}

func parseDate(s string) time.Time {
	t, _ := time.Parse("2006-01-02", s)
	return t
}

// parseDateTime reads pydantic's ISO 8601 ("…Z" or "…+00:00").
func parseDateTime(s string) time.Time {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		t, _ = time.Parse("2006-01-02T15:04:05.999999", s) // naive: UTC
	}
	return t
}

// ---- the engine side

// fairShareCache is FairShares' answer, read at most once a minute (the
// manager recomputes every 5 minutes).
type fairShareCache struct {
	list []translate.FairShare
	at   time.Time
}

// FairShares implements translate.FairShareSource: the fair-share records
// of the engine's domain, with project names and usernames. On a manager
// without the fair-share API (before 26.3) the error wraps
// translate.ErrNotSupported.
func (e *Engine) FairShares(ctx context.Context) ([]translate.FairShare, error) {
	e.mu.Lock()
	if c := e.fs; c.list != nil && time.Since(c.at) < directoryTTL {
		e.mu.Unlock()
		return append([]translate.FairShare(nil), c.list...), nil
	}
	e.mu.Unlock()
	recs, err := e.c.UserFairShares(ctx, UserFairShareFilter{DomainName: e.cfg.Domain})
	if err != nil {
		if IsNoFairShare(err) {
			return nil, fmt.Errorf("%w: the Backend.AI manager has no fair-share API (26.3 or later needed): %v", translate.ErrNotSupported, err)
		}
		return nil, engineErr(err)
	}
	projects := map[string]string{}
	users := map[string]string{}
	if len(recs) > 0 {
		ps, err := e.c.Projects(ctx, e.cfg.Domain, false)
		if err != nil {
			return nil, engineErr(err)
		}
		for _, p := range ps {
			projects[p.ID] = p.Name
		}
		us, err := e.c.listUsers(ctx, "", e.cfg.Domain, "", 0)
		if err != nil {
			return nil, engineErr(err)
		}
		for _, u := range us {
			users[u.UUID] = u.Username
		}
	}
	list := make([]translate.FairShare, 0, len(recs))
	for _, r := range recs {
		fs := translate.FairShare{ResourceGroup: r.ResourceGroup, Project: projects[r.ProjectID], User: users[r.UserUUID],
			Weight: r.Weight, Factor: r.Factor, DecayedUsage: r.TotalDecayedUsage["cpu"], NormalizedUsage: r.NormalizedUsage}
		if fs.Project == "" {
			fs.Project = r.ProjectID // a project gone from the directory
		}
		if fs.User == "" {
			fs.User = r.UserUUID
		}
		list = append(list, fs)
	}
	sort.Slice(list, func(i, j int) bool {
		a, b := list[i], list[j]
		if a.ResourceGroup != b.ResourceGroup {
			return a.ResourceGroup < b.ResourceGroup
		}
		if a.Project != b.Project {
			return a.Project < b.Project
		}
		return a.User < b.User
	})
	e.mu.Lock()
	e.fs = fairShareCache{list: list, at: time.Now()}
	e.mu.Unlock()
	return append([]translate.FairShare(nil), list...), nil
}

var _ translate.FairShareSource = (*Engine)(nil)
