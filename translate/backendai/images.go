package backendai

import (
	"context"
	"fmt"
	"strconv"
)

// Image is a legacy GraphQL Image.
type Image struct {
	ID           string   `json:"id"`
	Namespace    string   `json:"namespace"`
	Registry     string   `json:"registry"`
	Tag          string   `json:"tag"`
	Architecture string   `json:"architecture"`
	Aliases      []string `json:"aliases"`
	Status       string   `json:"status"`
	Installed    bool     `json:"installed"`
	Digest       string   `json:"digest"`
	// ResourceLimits are the image's minimum slots (min is a decimal
	// string: cores for cpu, bytes for mem).
	ResourceLimits []ResourceLimit `json:"resource_limits"`
}

// ResourceLimit is one slot's bounds of an image.
type ResourceLimit struct {
	Key string `json:"key"`
	Min string `json:"min"`
	Max string `json:"max"`
}

// MinMemBytes is the image's minimum memory ("mem"), 0 if none.
func (i Image) MinMemBytes() uint64 {
	for _, l := range i.ResourceLimits {
		if l.Key == "mem" {
			if v, err := strconv.ParseFloat(l.Min, 64); err == nil && v > 0 {
				return uint64(v)
			}
		}
	}
	return 0
}

// Canonical is "<registry>/<namespace>:<tag>".
func (i Image) Canonical() string { return i.Registry + "/" + i.Namespace + ":" + i.Tag }

const imageFields = "id namespace registry tag architecture aliases status installed digest resource_limits { key min max }"

// Image looks an image up by canonical reference or alias for an
// architecture ("" = x86_64, the manager's default for sessions), among
// ALIVE images, as session creation resolves it (ImageIdentifier, then
// ImageAlias). An unknown image gives an error for which IsInvalidImage
// (and IsNotFound) is true. As superadmin this does not check the owner
// domain's allowed registries; creation does.
func (c *Client) Image(ctx context.Context, reference, architecture string) (*Image, error) {
	if architecture == "" {
		architecture = "x86_64"
	}
	q := "query($ref: String, $arch: String) { image(reference: $ref, architecture: $arch) { " + imageFields + " } }"
	var ans struct {
		Image *Image `json:"image"`
	}
	err := c.Query(ctx, q, map[string]any{"ref": reference, "arch": architecture}, &ans)
	if err == nil && ans.Image != nil {
		return ans.Image, nil
	}
	if err != nil && !IsNotFound(err) && !IsInvalidImage(err) {
		return nil, err
	}
	// image(reference) does not resolve aliases: look through the aliases.
	var all struct {
		Images []*Image `json:"images"`
	}
	if err2 := c.Query(ctx, "{ images { "+imageFields+" } }", nil, &all); err2 != nil {
		return nil, err2
	}
	for _, im := range all.Images {
		if im == nil || im.Architecture != architecture {
			continue
		}
		for _, a := range im.Aliases {
			if a == reference {
				return im, nil
			}
		}
	}
	if err != nil {
		return nil, err
	}
	return nil, fmt.Errorf("backendai: image %q (%s): %w", reference, architecture, ErrUnknownImage)
}
