package local

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"

	"github.com/lablup/slurm-frontend/translate"
)

// sbatch --container=PATH on the embedded engine runs the batch script in
// the OCI bundle at PATH (a directory with config.json and its root
// file system), as slurmstepd does with oci.conf: the bundle's
// config.json is kept but for the process (the script, as the job's
// user, with the job's environment and working directory) and two bind
// mounts (the working directory and the script's directory). The OCI
// runtime is crun, with cgroups left alone so that the job's own cgroup
// limits apply; without crun, --container is refused at submission.
// (On Backend.AI the same option names the session's image.)

// CheckImage accepts an OCI bundle directory when crun is installed.
func (e *Engine) CheckImage(image string) error {
	if _, err := exec.LookPath("crun"); err != nil {
		return errors.New("the embedded engine runs OCI bundles with crun, which is not installed")
	}
	if !filepath.IsAbs(image) {
		return fmt.Errorf("%s: not an absolute path to an OCI bundle", image)
	}
	if _, err := os.Stat(filepath.Join(image, "config.json")); err != nil {
		return fmt.Errorf("%s is not an OCI bundle (no config.json)", image)
	}
	return nil
}

// containerConfig writes, into dir, the bundle config that runs script
// in spec's bundle, and returns the crun command line for it. cover is
// the directory above the script that the user may not search (on the
// host it is covered by a tmpfs, exposeForUser): in the container too.
func containerConfig(spec *translate.SessionSpec, c cred, dir, script, cover, wd string, env []string) ([]string, error) {
	b, err := os.ReadFile(filepath.Join(spec.Image, "config.json"))
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
	gids := make([]any, 0, len(c.groups))
	for _, g := range c.groups {
		gids = append(gids, g)
	}
	proc["terminal"] = false
	proc["user"] = map[string]any{"uid": c.uid, "gid": c.gid, "additionalGids": gids}
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
	bundle := filepath.Join(dir, "bundle")
	if err := os.MkdirAll(bundle, 0o700); err != nil {
		return nil, err
	}
	out, err := json.MarshalIndent(cfg, "", "  ")
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(bundle, "config.json"), out, 0o600); err != nil {
		return nil, err
	}
	crun, err := exec.LookPath("crun")
	if err != nil {
		return nil, err
	}
	return []string{crun, "--cgroup-manager=disabled", "--root", filepath.Join(dir, "crun"), "run", "--bundle", bundle,
		fmt.Sprintf("slurm-%d-%s", spec.JobID, filepath.Base(dir))}, nil
}
