package audit

import "time"

// Verdict is what would happen to a job once the site switches: it runs
// as it did on Slurm, runs with a difference the README documents, or is
// refused at submission with a Slurm error.
type Verdict string

const (
	Unchanged  Verdict = "runs unchanged"
	Difference Verdict = "runs with a documented difference"
	Refused    Verdict = "refused"
)

// Verdicts in the order reports list them.
var Verdicts = []Verdict{Unchanged, Difference, Refused}

// Finding is one reason for a job's verdict: an option the frontend
// refuses or treats differently, or a refusal of the whole request.
type Finding struct {
	Option     string  `json:"option,omitempty"` // canonical long option ("--reservation"); "" for the request as a whole
	Verdict    Verdict `json:"verdict"`
	Reason     string  `json:"reason"`                // why, for the operator
	SlurmError string  `json:"slurm_error,omitempty"` // e.g. "ESLURM_RESERVATION_INVALID"
	Code       uint32  `json:"code,omitempty"`        // its number
	Message    string  `json:"message,omitempty"`     // what the client prints, as the user would see it
}

// OptionUse is one option as the client read it.
type OptionUse struct {
	Name    string `json:"name"`              // canonical long option, "--partition"
	Written string `json:"written,omitempty"` // as written: "-p", "--part"
	Value   string `json:"value,omitempty"`
	Source  string `json:"source"` // "#SBATCH line 3", "command line", "SBATCH_PARTITION"
}

// Job is one job a script or wrapper would submit: a batch script's
// #SBATCH lines, or one sbatch/srun/salloc command found in a wrapper.
type Job struct {
	File       string      `json:"file"`
	Line       int         `json:"line,omitempty"` // the command's line in a wrapper; 0 for a script's own #SBATCH lines
	Kind       string      `json:"kind"`           // "script", "command", "heredoc"
	Client     string      `json:"client"`         // "sbatch", "srun", "salloc"
	Command    string      `json:"command,omitempty"`
	Args       []string    `json:"args,omitempty"` // the client's arguments as checked (values only known at run time left out)
	Options    []OptionUse `json:"options"`
	Verdict    Verdict     `json:"verdict"`
	Findings   []Finding   `json:"findings,omitempty"`
	Unresolved []string    `json:"unresolved,omitempty"` // options whose value is only known at run time (shell expansions, template placeholders)
}

// Skipped is a file the walk looked at and did not classify.
type Skipped struct {
	File   string `json:"file"`
	Reason string `json:"reason"`
}

// OptionCount counts, for one option, the jobs using it by what the
// option causes: refused or a difference when a finding names it (the
// refusal found by asking the checks again without it), else unchanged.
type OptionCount struct {
	Option     string `json:"option"`
	Unchanged  int    `json:"unchanged"`
	Difference int    `json:"difference"`
	Refused    int    `json:"refused"`
}

// Summary counts jobs by verdict, overall and per option.
type Summary struct {
	Jobs       int           `json:"jobs"`
	Unchanged  int           `json:"unchanged"`
	Difference int           `json:"difference"`
	Refused    int           `json:"refused"`
	ByOption   []OptionCount `json:"by_option"`
}

// UserCount is one user's past jobs and how many would have been refused,
// per option that caused a refusal.
type UserCount struct {
	User      string         `json:"user"`
	Jobs      int            `json:"jobs"`
	Refused   int            `json:"refused"`
	ByOption  map[string]int `json:"by_option,omitempty"`
	Different int            `json:"different"`
}

// History is the part of the report read from a site's accounting.
type History struct {
	Source     string        `json:"source"` // the sacct file
	Jobs       int           `json:"jobs"`
	Unchanged  int           `json:"unchanged"`
	Difference int           `json:"difference"`
	Refused    int           `json:"refused"`
	ByUser     []UserCount   `json:"by_user"`
	ByOption   []OptionCount `json:"by_option"`
}

// Report is the whole audit: what was read, each job's verdict, and the
// counts an operator acts on.
type Report struct {
	Generated time.Time `json:"generated"`
	Config    string    `json:"config"`  // the slurm.conf the verdicts were made against
	Backend   string    `json:"backend"` // "embedded" or the Backend.AI endpoint
	Release   string    `json:"release"` // the client release the options were parsed as ("24.11")
	Paths     []string  `json:"paths"`
	Files     int       `json:"files"` // files read
	Jobs      []Job     `json:"jobs"`
	Skipped   []Skipped `json:"skipped,omitempty"`
	Summary   Summary   `json:"summary"`
	History   *History  `json:"history,omitempty"`
}
