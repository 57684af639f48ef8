package main

import "errors"

// benchMain runs the load generator (see package bench).
func benchMain(args []string) error {
	return errors.New("bench: not built yet")
}
