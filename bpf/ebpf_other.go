//go:build !linux

package bpf

import "errors"

type eBPF struct{ Accounting }

func newTCPAccounting() (*eBPF, error) { return nil, errors.New("bpf: socket filters need Linux") }
