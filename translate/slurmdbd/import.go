// Package slurmdbd reads an existing slurmdbd database (MySQL or MariaDB)
// into the accounting history, so a site keeps its years of sacct history
// after the switch.
//
// What is read is slurmdbd's own schema (accounting_storage/mysql): the
// cluster's job table and step table, with the association table for the
// user name and the QOS table for the QOS name. Only finished runs are
// taken (a job still pending or running in the old cluster is not
// history). The import is idempotent: a run already in the history (the
// same job id and start) is skipped, so it can be repeated, or resumed
// after an interruption, and adds only what is missing.
package slurmdbd

import (
	"context"
	"database/sql"
	"fmt"
	"os/user"
	"regexp"
	"strconv"
	"strings"

	"github.com/go-sql-driver/mysql"

	"github.com/lablup/slurm-frontend/state"
)

// Options select what to import.
type Options struct {
	DSN     string // go-sql-driver form: user:pass@tcp(host:3306)/slurm_acct_db or user@unix(/run/mysqld/mysqld.sock)/slurm_acct_db
	Cluster string // the cluster's name in the database; "" = the only one there
	Batch   int    // jobs per transaction (default 2,000)
	// Progress is called after each batch with the jobs read so far and
	// the total to read.
	Progress func(done, total int)
}

// Result is what an import did.
type Result struct {
	Cluster  string
	Read     int    // finished runs read from the database
	Added    int    // new to the history
	Skipped  int    // already there (an earlier import)
	Clashes  int    // runs whose job id had steps of another run already: record kept, steps not
	Unended  int    // pending or running in the database: not history, left out
	MaxJobID uint32 // the largest job id read
}

var tableName = regexp.MustCompile(`^[A-Za-z0-9_.-]+$`)

// OpenDB connects to a slurmdbd database (the DSN in go-sql-driver form;
// no database name: slurmdbd's StorageLoc default, slurm_acct_db).
func OpenDB(ctx context.Context, dsn string, conns int) (*sql.DB, error) {
	cfg, err := mysql.ParseDSN(dsn)
	if err != nil {
		return nil, fmt.Errorf("--dsn: %w", err)
	}
	if cfg.DBName == "" {
		cfg.DBName = "slurm_acct_db"
	}
	db, err := sql.Open("mysql", cfg.FormatDSN())
	if err != nil {
		return nil, err
	}
	db.SetMaxOpenConns(conns)
	if err := db.PingContext(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("database %s: %w", cfg.DBName, err)
	}
	return db, nil
}

// ClusterName is the cluster whose tables to read: name, or the only
// cluster the database holds; either way one that can name a table.
func ClusterName(ctx context.Context, db *sql.DB, name string) (string, error) {
	if name == "" {
		var names []string
		rows, err := db.QueryContext(ctx, "SELECT name FROM cluster_table WHERE deleted=0")
		if err != nil {
			return "", fmt.Errorf("reading the clusters (is this a slurmdbd database?): %w", err)
		}
		for rows.Next() {
			var n string
			if err := rows.Scan(&n); err != nil {
				rows.Close()
				return "", err
			}
			names = append(names, n)
		}
		rows.Close()
		if len(names) != 1 {
			return "", fmt.Errorf("the database holds clusters %v: say which with --cluster", names)
		}
		name = names[0]
	}
	if !tableName.MatchString(name) {
		return "", fmt.Errorf("cluster name %q cannot name a table", name)
	}
	return name, nil
}

// Import reads the database into st.
func Import(ctx context.Context, st *state.Store, o Options) (*Result, error) {
	db, err := OpenDB(ctx, o.DSN, 2)
	if err != nil {
		return nil, err
	}
	defer db.Close()
	res := &Result{}
	if res.Cluster, err = ClusterName(ctx, db, o.Cluster); err != nil {
		return nil, err
	}
	batch := o.Batch
	if batch <= 0 {
		batch = 2000
	}
	jobT, stepT, assocT := "`"+res.Cluster+"_job_table`", "`"+res.Cluster+"_step_table`", "`"+res.Cluster+"_assoc_table`"
	total := 0
	if err := db.QueryRowContext(ctx, "SELECT COUNT(*) FROM "+jobT+" WHERE deleted=0").Scan(&total); err != nil {
		return nil, fmt.Errorf("cluster %s: %w", res.Cluster, err)
	}
	// The history's longest run, kept from the first run on (a new
	// store's is 0), so sacct's window scans stay bounded.
	if err := st.BackfillSpan(); err != nil {
		return nil, err
	}
	names := map[uint32]string{} // uid → user name, for rows without an association
	var last uint64              // job_db_inx starts at 1
	seen := 0
	for {
		runs, maxInx, n, err := readJobs(ctx, db, jobT, assocT, last, batch, res, names)
		if err != nil {
			return res, err
		}
		if n == 0 {
			break
		}
		if err := readSteps(ctx, db, stepT, last, maxInx, runs); err != nil {
			return res, err
		}
		list := make([]state.HistJob, 0, len(runs))
		for _, r := range runs {
			list = append(list, r.h)
		}
		added, clashes, err := st.ImportHistory(list)
		if err != nil {
			return res, fmt.Errorf("writing the history: %w", err)
		}
		res.Added += added
		res.Skipped += len(list) - added
		res.Clashes += clashes
		seen += n
		last = maxInx
		if o.Progress != nil {
			o.Progress(seen, total)
		}
	}
	if err := importDirectory(ctx, db, st, res.Cluster, names); err != nil {
		return res, err
	}
	// New jobs continue the old cluster's ids (as its FirstJobId would):
	// sacct -j of an old id keeps meaning the old job.
	if res.MaxJobID > 0 {
		if err := st.RaiseNextID(res.MaxJobID + 1); err != nil {
			return res, err
		}
	}
	return res, nil
}

// importDirectory keeps the cluster's accounts (descriptions, the tree),
// users (administrators, default accounts) and associations' shares.
func importDirectory(ctx context.Context, db *sql.DB, st *state.Store, cluster string, names map[uint32]string) error {
	d := &state.ImportedDirectory{}
	parents := map[string]string{}
	rows, err := db.QueryContext(ctx, "SELECT `user`, acct, parent_acct, shares, is_def FROM `"+cluster+"_assoc_table` WHERE deleted=0 AND `partition`='' ORDER BY id_assoc")
	if err != nil {
		return fmt.Errorf("reading the associations: %w", err)
	}
	defaults := map[string]string{}
	for rows.Next() {
		var a state.ImportedAssoc
		var parent string
		var shares int64
		var isDef int
		if err := rows.Scan(&a.User, &a.Account, &parent, &shares, &isDef); err != nil {
			rows.Close()
			return err
		}
		if shares >= 0 && shares < 1<<31 {
			a.Shares = uint32(shares)
		} else {
			a.Shares = 1
		}
		if a.User == "" && parent != "" {
			parents[a.Account] = parent
		}
		if a.User != "" && isDef != 0 {
			defaults[a.User] = a.Account
		}
		d.Assocs = append(d.Assocs, a)
	}
	rows.Close()
	rows, err = db.QueryContext(ctx, "SELECT name, description, organization FROM acct_table WHERE deleted=0 ORDER BY name")
	if err != nil {
		return fmt.Errorf("reading the accounts: %w", err)
	}
	for rows.Next() {
		var a state.ImportedAccount
		if err := rows.Scan(&a.Name, &a.Description, &a.Organization); err != nil {
			rows.Close()
			return err
		}
		a.Parent = parents[a.Name]
		d.Accounts = append(d.Accounts, a)
	}
	rows.Close()
	rows, err = db.QueryContext(ctx, "SELECT name, admin_level FROM user_table WHERE deleted=0 ORDER BY name")
	if err != nil {
		return fmt.Errorf("reading the users: %w", err)
	}
	for rows.Next() {
		var u state.ImportedUser
		if err := rows.Scan(&u.Name, &u.AdminLevel); err != nil {
			rows.Close()
			return err
		}
		u.Default = defaults[u.Name]
		if pw, err := user.Lookup(u.Name); err == nil {
			if n, err := strconv.ParseUint(pw.Uid, 10, 32); err == nil {
				u.UID, u.UIDKnown = uint32(n), true
			}
		}
		d.Users = append(d.Users, u)
	}
	rows.Close()
	return st.PutImportedDirectory(d)
}

type run struct {
	inx uint64
	h   state.HistJob
}

const noVal = 0xfffffffe

// reqUID: slurmdbd's kill_requid, NULL (24.11) or -1 (22.05) for nobody.
func reqUID(v sql.NullInt64) uint32 {
	if !v.Valid || v.Int64 < 0 || v.Int64 >= 0xfffffffe {
		return noVal
	}
	return uint32(v.Int64)
}

func readJobs(ctx context.Context, db *sql.DB, jobT, assocT string, after uint64, limit int, res *Result, names map[uint32]string) (map[uint64]*run, uint64, int, error) {
	q := `SELECT j.job_db_inx, j.id_job, j.id_array_job, j.id_array_task, IFNULL(j.array_task_str,''), j.array_max_tasks,
		j.job_name, j.id_user, j.id_group, IFNULL(a.user,''), IFNULL(j.account,''), j.` + "`partition`" + `, IFNULL(q.name,''),
		j.work_dir, j.std_in, j.std_out, j.std_err, IFNULL(j.submit_line,''), j.state, j.exit_code, j.derived_ec,
		j.time_submit, j.time_eligible, j.time_start, j.time_end, j.timelimit, IFNULL(j.nodelist,''), j.cpus_req,
		j.mem_req, j.tres_alloc, j.tres_req, j.kill_requid, j.priority, IFNULL(j.constraints,''), IFNULL(j.container,''),
		IFNULL(j.restart_cnt,0), IFNULL(j.admin_comment,''), j.flags
		FROM ` + jobT + ` j LEFT JOIN ` + assocT + ` a ON j.id_assoc=a.id_assoc LEFT JOIN qos_table q ON j.id_qos=q.id
		WHERE j.deleted=0 AND j.job_db_inx > ? ORDER BY j.job_db_inx LIMIT ?`
	rows, err := db.QueryContext(ctx, q, after, limit)
	if err != nil {
		return nil, 0, 0, fmt.Errorf("reading jobs: %w", err)
	}
	defer rows.Close()
	out := map[uint64]*run{}
	var maxInx uint64
	n := 0
	for rows.Next() {
		var r run
		j := &r.h.Job
		var arrTask int64
		var memReq uint64
		var kill sql.NullInt64
		var userName, qos string
		var restarts int64
		if err := rows.Scan(&r.inx, &j.ID, &j.ArrayJobID, &arrTask, &j.ArrayTasks, &j.ArrayMax,
			&j.Name, &j.UserID, &j.GroupID, &userName, &j.Account, &j.Partition, &qos,
			&j.WorkDir, &j.StdIn, &j.StdOut, &j.StdErr, &j.SubmitLine, &j.State, &j.ExitCode, &r.h.DerivedEC,
			&j.SubmitTime, &j.EligibleTime, &j.StartTime, &j.EndTime, &j.TimeLimit, &j.Nodes, &j.MinCPUs,
			&memReq, &r.h.TresAllocIDs, &r.h.TresReqIDs, &kill, &j.Priority, &j.Features, &j.Container,
			&restarts, &j.Comment, &r.h.DBFlags); err != nil {
			return nil, 0, 0, fmt.Errorf("reading jobs: %w", err)
		}
		n++
		maxInx = max(maxInx, r.inx)
		if j.EndTime == 0 {
			res.Unended++
			continue
		}
		j.ArrayTaskID = uint32(arrTask)
		if j.ArrayJobID == 0 {
			j.ArrayTaskID = noVal
		}
		if j.Nodes == "None assigned" {
			j.Nodes = ""
		}
		if memReq&(1<<63) != 0 {
			j.MemPerCPUMB = memReq &^ (1 << 63)
		} else if memReq != noVal && memReq != 0 {
			j.MemPerNodeMB = memReq
		}
		j.QOS = qos
		j.Restarts = uint16(restarts)
		j.Origin = state.OriginSlurmdbd
		j.UserName = userName
		if j.UserName == "" {
			j.UserName = userNameOf(j.UserID, names)
		}
		r.h.ReqUID = reqUID(kill)
		res.Read++
		res.MaxJobID = max(res.MaxJobID, j.ID)
		rr := r
		out[r.inx] = &rr
	}
	return out, maxInx, n, rows.Err()
}

func userNameOf(uid uint32, cache map[uint32]string) string {
	if n, ok := cache[uid]; ok {
		return n
	}
	n := strconv.FormatUint(uint64(uid), 10)
	if u, err := user.LookupId(n); err == nil {
		n = u.Username
	}
	cache[uid] = n
	return n
}

// stat reads one TRES's figure from a TRES string ("1=5,2=1024"): id 2,
// memory, for MaxRSS and where it was.
func stat(s string, id int) uint64 {
	for _, kv := range strings.Split(s, ",") {
		k, v, ok := strings.Cut(kv, "=")
		if ok && k == strconv.Itoa(id) {
			n, _ := strconv.ParseUint(v, 10, 64)
			return n
		}
	}
	return 0
}

func readSteps(ctx context.Context, db *sql.DB, stepT string, after, upTo uint64, runs map[uint64]*run) error {
	if len(runs) == 0 {
		return nil
	}
	q := `SELECT job_db_inx, id_step, exit_code, kill_requid, nodelist, nodes_alloc, state, step_name, task_cnt, task_dist,
		time_start, time_end, user_sec, user_usec, sys_sec, sys_usec, IFNULL(submit_line,''), tres_alloc,
		tres_usage_in_max, tres_usage_in_max_taskid, tres_usage_in_max_nodeid, req_cpufreq_min, req_cpufreq, req_cpufreq_gov
		FROM ` + stepT + ` WHERE deleted=0 AND job_db_inx > ? AND job_db_inx <= ? ORDER BY job_db_inx, time_start, id_step`
	rows, err := db.QueryContext(ctx, q, after, upTo)
	if err != nil {
		return fmt.Errorf("reading steps: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var inx uint64
		var id, exit int64
		var kill sql.NullInt64
		var s state.HistStep
		var userSec, userUsec, sysSec, sysUsec uint64
		var maxIn, maxTask, maxNode string
		if err := rows.Scan(&inx, &id, &exit, &kill, &s.Nodes, &s.NNodes, &s.State, &s.Name, &s.NTasks, &s.TaskDist,
			&s.Start, &s.End, &userSec, &userUsec, &sysSec, &sysUsec, &s.SubmitLine, &s.TresAlloc,
			&maxIn, &maxTask, &maxNode, &s.ReqCPUFreq[0], &s.ReqCPUFreq[1], &s.ReqCPUFreq[2]); err != nil {
			return fmt.Errorf("reading steps: %w", err)
		}
		r := runs[inx]
		if r == nil {
			continue // a job not imported (not finished)
		}
		// Stored as signed ints: the batch, extern and interactive
		// steps' ids are negative there.
		s.ID, s.ExitCode = uint32(id), uint32(exit)
		s.ReqUID = reqUID(kill)
		s.ReqCPUFreqSet = true
		s.CPUs = uint32(stat(s.TresAlloc, 1))
		s.UserCPUus, s.SysCPUus = userSec*1e6+userUsec, sysSec*1e6+sysUsec
		s.MaxRSS, s.MaxRSSTask, s.MaxRSSNode = stat(maxIn, 2), uint32(stat(maxTask, 2)), uint32(stat(maxNode, 2))
		r.h.Steps = append(r.h.Steps, s)
	}
	return rows.Err()
}
