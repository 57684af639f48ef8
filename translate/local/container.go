package local

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"

	"github.com/lablup/slurm-frontend/translate"
)

// sbatch --container=PATH on the embedded engine runs the batch script in
// the OCI bundle at PATH (a directory with config.json and its root
// file system), as slurmstepd does with oci.conf: the bundle's
// config.json is kept but for the process (the script, as the job's
// user, with the job's environment and working directory) and two bind
// mounts (the working directory and the script's directory). The OCI
// runtime is crun, run as the job's user and rootless (in a user
// namespace that maps only the user's own uid and gid), as Slurm requires
// of every OCI runtime ("all commands are called by Slurm as the user with
// no special permissions", containers.shtml): the bundle is the user's,
// and a config.json read and run by root could ask for hooks run on the
// host, capabilities, devices or uid mappings to root. Everything of the
// bundle is read with the user's identity. Cgroups are left alone so
// that the job's own cgroup limits apply; without crun, --container is
// refused at submission. (On Backend.AI the same option names the
// session's image.)

// CheckImage accepts an OCI bundle directory the user can read when crun
// is installed. The bundle is looked at as the user: root would see (and
// tell the user about) bundles in directories the user may not enter.
func (e *Engine) CheckImage(image string, uid, gid uint32) error {
	if _, err := exec.LookPath("crun"); err != nil {
		return errors.New("the embedded engine runs OCI bundles with crun, which is not installed")
	}
	if !filepath.IsAbs(image) {
		return fmt.Errorf("%s: not an absolute path to an OCI bundle", image)
	}
	c := cred{uid: uid, gid: gid}
	c.groups = jobGroups(&translate.SessionSpec{UID: uid, GID: gid})
	return asUser(c, func() error {
		if _, err := os.Stat(filepath.Join(image, "config.json")); err != nil {
			return fmt.Errorf("%s is not an OCI bundle (no config.json)", image)
		}
		return nil
	})
}

// containerConfig writes, into dir (a directory the user owns and may
// reach), the bundle config that runs script in spec's bundle, and
// returns the crun command line for it, to be run as the user. cover is
// the directory above the script that the user may not search (on the
// host it is covered by a tmpfs, exposeForUser): in the container too.
func containerConfig(spec *translate.SessionSpec, c cred, dir, script, cover, wd string, env []string) ([]string, error) {
	var b []byte
	err := asUser(c, func() error {
		var err error
		b, err = readBounded(filepath.Join(spec.Image, "config.json"), maxBundleConfig)
		return err
	})
	if err != nil {
		return nil, err
	}
	var cfg map[string]any
	if err := json.Unmarshal(b, &cfg); err != nil {
		return nil, fmt.Errorf("%s/config.json: %v", spec.Image, err)
	}
	root, _ := cfg["root"].(map[string]any)
	if root == nil {
		return nil, fmt.Errorf("%s/config.json: no root", spec.Image)
	}
	if p, _ := root["path"].(string); !filepath.IsAbs(p) {
		root["path"] = filepath.Join(spec.Image, p)
	}
	proc, _ := cfg["process"].(map[string]any)
	if proc == nil {
		proc = map[string]any{}
	}
	proc["terminal"] = false
	proc["args"] = []any{script}
	proc["env"] = env
	proc["cwd"] = wd
	cfg["process"] = proc
	var mounts []any
	old, _ := cfg["mounts"].([]any)
	for _, m := range old {
		// The job's cgroup is the engine's to manage (crun cannot mount
		// a cgroup file system on every host's layout either).
		if mm, _ := m.(map[string]any); mm != nil && (mm["type"] == "cgroup" || mm["type"] == "cgroup2") {
			continue
		}
		mounts = append(mounts, m)
	}
	bind := func(path string, opts ...any) {
		if path != "/" {
			mounts = append(mounts, map[string]any{"destination": path, "type": "bind", "source": path, "options": append([]any{"rbind"}, opts...)})
		}
	}
	if cover != "" {
		mounts = append(mounts, map[string]any{"destination": cover, "type": "tmpfs", "source": "tmpfs",
			"options": []any{"nosuid", "nodev", "mode=0711", "size=64k"}})
	}
	bind(filepath.Dir(script), "ro")
	bind(wd, "rw")
	cfg["mounts"] = mounts
	if linux, _ := cfg["linux"].(map[string]any); linux != nil {
		delete(linux, "cgroupsPath")
		delete(linux, "resources") // the job's cgroup holds its limits
	}
	// The process's user is the bundle's, as under slurmstepd: in a
	// rootless bundle (crun spec --rootless) uid 0 of its user namespace,
	// which is the job's user on the host. A root job's runtime runs as
	// root, as slurmstepd's does.
	rootless := c.uid != 0
	out, err := json.MarshalIndent(cfg, "", "  ")
	if err != nil {
		return nil, err
	}
	bundle := filepath.Join(dir, "bundle")
	err = asUser(c, func() error {
		if err := os.Mkdir(bundle, 0o700); err != nil {
			return err
		}
		f, err := os.OpenFile(filepath.Join(bundle, "config.json"), os.O_WRONLY|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW, 0o600)
		if err != nil {
			return err
		}
		_, err = f.Write(out)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	crun, err := exec.LookPath("crun")
	if err != nil {
		return nil, err
	}
	args := []string{crun}
	if rootless {
		args = append(args, "--rootless=true")
	}
	return append(args, "--cgroup-manager=disabled", "--root", filepath.Join(dir, "run"), "run", "--bundle", bundle,
		fmt.Sprintf("slurm-%d-%d", spec.JobID, c.uid)), nil
}

// maxBundleConfig bounds the config.json read for a job: OCI configs are
// a few KiB.
const maxBundleConfig = 4 << 20

// readBounded reads at most max bytes of the regular file path (more is
// an error). The open does not block: a FIFO planted there would hold
// the shim, and with it the job's nodes, forever.
func readBounded(path string, max int64) ([]byte, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil {
		return nil, err
	} else if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s: not a regular file", path)
	}
	b, err := io.ReadAll(io.LimitReader(f, max+1))
	if err == nil && int64(len(b)) > max {
		err = fmt.Errorf("%s: larger than %d bytes", path, max)
	}
	return b, err
}

// Differences are what the embedded engine runs otherwise than a Slurm
// node with the same request would (the migration audit's documented
// differences): GPUs are counted and their indices given to the job, but
// no device cgroup confines the job to them.
func (e *Engine) Differences(spec *translate.SessionSpec) []translate.Difference {
	if spec.GPUsPerNode > 0 || spec.GPUShare > 0 {
		return []translate.Difference{{Option: "--gres",
			Text: "GPUs are counted and named in CUDA_VISIBLE_DEVICES; the embedded engine does not confine the job to them (no device cgroup)"}}
	}
	return nil
}
