// Package deps pins modules that packages under construction use, so
// go.mod stays stable while they are written. Removed once real importers exist.
package deps

import (
	_ "github.com/VictoriaMetrics/metrics"
	_ "github.com/cloudflare/circl/xof/k12"
	_ "github.com/dgraph-io/badger/v4"
	_ "github.com/panjf2000/gnet/v2"
	_ "github.com/stretchr/testify/require"
)
