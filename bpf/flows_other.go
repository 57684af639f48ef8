//go:build !linux

package bpf

import "errors"

func newTCXMeter() (FlowMeter, error) { return nil, errors.New("bpf: tcx programs need Linux") }
