//go:build !unix

package conf

import "errors"

func mkfifo(string) error { return errors.New("not supported") }
