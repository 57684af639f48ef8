// Package deps pins modules that packages under construction use, so
// go.mod stays stable while they are written. Removed once real importers exist.
package deps

import (
	_ "github.com/cloudflare/circl/xof/k12"
	_ "github.com/stretchr/testify/require"
)
