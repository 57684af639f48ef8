package munge

import (
	"fmt"
	"io"
	"os"
)

// LoadKey reads a munge.key file (normally /etc/munge/munge.key, mode 0400
// owned by the munge user) and derives its subkeys. This is the package's
// only I/O.
func LoadKey(path string) (*Key, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("munge: cannot open key file %q: %w (the server needs read access to the same key as munged: run it as root or as the munge user, or copy the key with mode 0400)", path, err)
	}
	defer f.Close()
	raw, err := io.ReadAll(io.LimitReader(f, maxKeyFile+1))
	if err != nil {
		return nil, fmt.Errorf("munge: cannot read key file %q: %w", path, err)
	}
	if len(raw) > maxKeyFile {
		return nil, fmt.Errorf("munge: key file %q is larger than %d bytes; not a MUNGE key", path, maxKeyFile)
	}
	k, err := NewKey(raw)
	clear(raw)
	if err != nil {
		return nil, fmt.Errorf("munge: key file %q: %w", path, err)
	}
	return k, nil
}
