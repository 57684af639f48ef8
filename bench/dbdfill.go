package bench

import (
	"context"
	"database/sql"
	"fmt"
	"math"
	"math/rand"
	"os/user"
	"strconv"
	"strings"
	"time"

	"github.com/lablup/slurm-frontend/translate/slurmdbd"
)

// DBDFillOptions say what FillSlurmdbd writes into a slurmdbd database.
type DBDFillOptions struct {
	DSN     string // go-sql-driver form: root@unix(/run/mysqld/mysqld.sock)/slurm_acct_db
	Cluster string // the cluster's tables; "" = the only cluster there
	Jobs    int    // finished jobs to add (default 100,000)
	Users   int    // users they are spread over (default 100)
	// UserNames are real users (in the passwd of the clients that query
	// them: sacct -u resolves a name or uid there) who take the first
	// slots; the others are made up: u001, u002, … with uid FirstUID+slot.
	UserNames []string
	FirstUID  uint32        // default 20000
	Start     time.Time     // the first submission (default: 30 days before now)
	Span      time.Duration // submissions spread over it (default 30 days)
	FirstID   uint32        // the first job id (default: the largest there + 1)
	Seed      int64         // the same seed, the same jobs
	Batch     int           // jobs per INSERT (default 1,000)
	Progress  func(done, total int)
}

// DBDFillResult is what a fill wrote.
type DBDFillResult struct {
	Cluster         string
	Jobs, Steps     int
	FirstID, LastID uint32
	FirstSubmit     time.Time
	LastEnd         time.Time
	States          map[string]int
	Users           []DBDUser
	Seconds         float64
}

// DBDUser is one of the users the jobs belong to.
type DBDUser struct {
	Name    string
	UID     uint32
	GID     uint32
	Account string // its association's account ("" if it has none)
	Assoc   uint32 // its association's id_assoc (0: none)
	Jobs    int
}

// FillSlurmdbd adds finished jobs to a slurmdbd database's job and step
// tables as slurmdbd 24.11 (accounting_storage/mysql) writes them: one
// row per job with the TRES strings, times, state and exit code, a batch
// step each, and an srun step (step 0) for a quarter of the completed
// ones (one job in five). States: about 80 % COMPLETED, 10 % FAILED,
// 6 % CANCELLED (by their user, while running) and 4 % TIMEOUT.
// Submissions are spread evenly over the span (ids in submit order), each
// job on node n1 of partition batch with 1, 2 or 4 CPUs. A user with an
// association in the cluster (sacctmgr add user) gets its id_assoc and
// account; others none (slurmdbd returns their jobs all the same).
// job_db_inx comes from the table's AUTO_INCREMENT, as slurmdbd's own
// inserts.
func FillSlurmdbd(ctx context.Context, o DBDFillOptions) (*DBDFillResult, error) {
	t0 := time.Now()
	db, err := slurmdbd.OpenDB(ctx, o.DSN, 1)
	if err != nil {
		return nil, err
	}
	defer db.Close()
	if o.Jobs <= 0 {
		o.Jobs = 100000
	}
	if o.Users <= 0 {
		o.Users = 100
	}
	if o.FirstUID == 0 {
		o.FirstUID = 20000
	}
	if o.Span <= 0 {
		o.Span = 30 * 24 * time.Hour
	}
	if o.Start.IsZero() {
		o.Start = time.Now().Add(-o.Span)
	}
	if o.Batch <= 0 {
		o.Batch = 1000
	}
	res := &DBDFillResult{States: map[string]int{}}
	if res.Cluster, err = slurmdbd.ClusterName(ctx, db, o.Cluster); err != nil {
		return nil, err
	}
	jobT, stepT, assocT := "`"+res.Cluster+"_job_table`", "`"+res.Cluster+"_step_table`", "`"+res.Cluster+"_assoc_table`"

	// The users and their associations.
	assocs := map[string][2]string{} // user → id_assoc, account (the default one first)
	rows, err := db.QueryContext(ctx, "SELECT id_assoc, user, acct FROM "+assocT+" WHERE deleted=0 AND user<>'' ORDER BY is_def DESC, id_assoc")
	if err != nil {
		return nil, fmt.Errorf("cluster %s: %w", res.Cluster, err)
	}
	for rows.Next() {
		var id, u, a string
		if err := rows.Scan(&id, &u, &a); err != nil {
			rows.Close()
			return nil, err
		}
		if _, ok := assocs[u]; !ok {
			assocs[u] = [2]string{id, a}
		}
	}
	rows.Close()
	for i := 0; i < o.Users; i++ {
		u := DBDUser{Name: fmt.Sprintf("u%03d", i), UID: o.FirstUID + uint32(i), GID: o.FirstUID}
		if i < len(o.UserNames) {
			pw, err := user.Lookup(o.UserNames[i])
			if err != nil {
				return nil, fmt.Errorf("user %s: %w", o.UserNames[i], err)
			}
			uid, _ := strconv.ParseUint(pw.Uid, 10, 32)
			gid, _ := strconv.ParseUint(pw.Gid, 10, 32)
			u = DBDUser{Name: pw.Username, UID: uint32(uid), GID: uint32(gid)}
		}
		if a, ok := assocs[u.Name]; ok {
			id, _ := strconv.ParseUint(a[0], 10, 32)
			u.Assoc, u.Account = uint32(id), a[1]
		}
		res.Users = append(res.Users, u)
	}

	if o.FirstID == 0 {
		var maxID sql.NullInt64
		if err := db.QueryRowContext(ctx, "SELECT MAX(id_job) FROM "+jobT).Scan(&maxID); err != nil {
			return nil, err
		}
		o.FirstID = uint32(maxID.Int64) + 1
	}
	res.FirstID = o.FirstID
	res.FirstSubmit = o.Start

	rng := rand.New(rand.NewSource(o.Seed))
	slot := float64(o.Span) / float64(time.Second) / float64(o.Jobs)
	var jobsSQL, stepsSQL strings.Builder
	batch := make([]dbdJob, 0, o.Batch)
	for done := 0; done < o.Jobs; {
		batch = batch[:0]
		for len(batch) < o.Batch && done+len(batch) < o.Jobs {
			i := done + len(batch)
			at := o.Start.Unix() + int64(float64(i)*slot+rng.Float64()*slot)
			batch = append(batch, makeDBDJob(rng, o.FirstID+uint32(i), at, &res.Users[rng.Intn(len(res.Users))]))
		}
		jobsSQL.Reset()
		jobsSQL.WriteString("INSERT INTO " + jobT + ` (mod_time, deleted, account, array_max_tasks, array_task_pending,
			constraints, cpus_req, derived_ec, exit_code, flags, job_name, id_assoc, id_array_job, id_array_task,
			id_job, id_qos, id_resv, id_wckey, id_user, id_group, het_job_id, het_job_offset, kill_requid,
			state_reason_prev, mcs_label, mem_req, nodelist, nodes_alloc, node_inx, ` + "`partition`" + `, priority,
			restart_cnt, state, timelimit, time_submit, time_eligible, time_start, time_end, time_suspended,
			gres_used, wckey, work_dir, std_err, std_in, std_out, submit_line, tres_alloc, tres_req) VALUES `)
		for k := range batch {
			if k > 0 {
				jobsSQL.WriteByte(',')
			}
			batch[k].values(&jobsSQL)
		}
		tx, err := db.BeginTx(ctx, nil)
		if err != nil {
			return res, err
		}
		if _, err := tx.ExecContext(ctx, jobsSQL.String()); err != nil {
			tx.Rollback()
			return res, fmt.Errorf("inserting jobs: %w", err)
		}
		// The rows' job_db_inx, as the AUTO_INCREMENT gave them.
		inx := make(map[uint32]uint64, len(batch))
		rows, err := tx.QueryContext(ctx, "SELECT id_job, job_db_inx FROM "+jobT+" WHERE id_job BETWEEN ? AND ?",
			batch[0].id, batch[len(batch)-1].id)
		if err != nil {
			tx.Rollback()
			return res, err
		}
		for rows.Next() {
			var id uint32
			var x uint64
			if err := rows.Scan(&id, &x); err != nil {
				rows.Close()
				tx.Rollback()
				return res, err
			}
			inx[id] = x
		}
		rows.Close()
		stepsSQL.Reset()
		stepsSQL.WriteString("INSERT INTO " + stepT + ` (job_db_inx, deleted, exit_code, id_step, step_het_comp,
			kill_requid, nodelist, nodes_alloc, node_inx, state, step_name, task_cnt, task_dist, time_start,
			time_end, time_suspended, user_sec, user_usec, sys_sec, sys_usec, act_cpufreq, consumed_energy,
			req_cpufreq_min, req_cpufreq, req_cpufreq_gov, submit_line, tres_alloc, tres_usage_in_ave,
			tres_usage_in_max, tres_usage_in_max_taskid, tres_usage_in_max_nodeid, tres_usage_in_min,
			tres_usage_in_min_taskid, tres_usage_in_min_nodeid, tres_usage_in_tot, tres_usage_out_ave,
			tres_usage_out_max, tres_usage_out_max_taskid, tres_usage_out_max_nodeid, tres_usage_out_min,
			tres_usage_out_min_taskid, tres_usage_out_min_nodeid, tres_usage_out_tot) VALUES `)
		n := 0
		for k := range batch {
			x, ok := inx[batch[k].id]
			if !ok {
				tx.Rollback()
				return res, fmt.Errorf("job %d: no row after the insert", batch[k].id)
			}
			for s := range batch[k].steps {
				if n > 0 {
					stepsSQL.WriteByte(',')
				}
				batch[k].steps[s].values(&stepsSQL, x)
				n++
			}
		}
		if _, err := tx.ExecContext(ctx, stepsSQL.String()); err != nil {
			tx.Rollback()
			return res, fmt.Errorf("inserting steps: %w", err)
		}
		if err := tx.Commit(); err != nil {
			return res, err
		}
		for k := range batch {
			j := &batch[k]
			res.Jobs++
			res.Steps += len(j.steps)
			res.States[dbdStateName[j.state]]++
			res.LastID = j.id
			if e := time.Unix(j.end, 0); e.After(res.LastEnd) {
				res.LastEnd = e
			}
			j.user.Jobs++
		}
		done += len(batch)
		if o.Progress != nil {
			o.Progress(done, o.Jobs)
		}
	}
	res.Seconds = time.Since(t0).Seconds()
	return res, nil
}

// Slurm's values, as slurmdbd stores them.
const (
	dbdNoVal     = 0xfffffffe
	dbdInfinite  = 0xffffffff
	dbdNoVal64   = "18446744073709551614"
	dbdBatchStep = -5 // SLURM_BATCH_SCRIPT, signed in the step table
	stCompleted  = 3
	stCancelled  = 4
	stFailed     = 5
	stTimeout    = 6
)

var dbdStateName = map[uint32]string{stCompleted: "COMPLETED", stCancelled: "CANCELLED", stFailed: "FAILED", stTimeout: "TIMEOUT"}

type dbdJob struct {
	id                           uint32
	user                         *DBDUser
	name, workDir, submitLine    string
	cpus                         int
	memReq, mem                  uint64 // mem_req (per node, MB; 0: none asked) and what it got
	state, exitCode, flags, prio uint32
	killUID                      int64 // -1: NULL
	limit                        uint32
	submit, eligible, start, end int64
	steps                        []dbdStep
}

type dbdStep struct {
	id                      int
	name, submitLine        string
	state, exitCode         uint32
	killUID                 int64
	tasks, dist             int
	start, end              int64
	userSec, sysSec         int64
	userUsec, sysUsec       int
	cpus                    int
	mem, rss, vmem          uint64
	freqMin, freqMax, freqG uint32
}

var dbdJobNames = []string{"train", "preprocess", "simulate", "analysis", "render", "align", "assemble", "eval", "sweep", "postproc"}

func makeDBDJob(rng *rand.Rand, id uint32, submit int64, u *DBDUser) dbdJob {
	j := dbdJob{id: id, user: u, submit: submit, killUID: -1}
	j.name = dbdJobNames[rng.Intn(len(dbdJobNames))]
	if rng.Intn(3) == 0 {
		j.name += fmt.Sprintf("_%d", rng.Intn(50))
	}
	j.workDir = "/home/" + u.Name + "/proj" + strconv.Itoa(rng.Intn(4))
	j.cpus = []int{1, 1, 1, 2, 2, 4}[rng.Intn(6)]
	j.submitLine = fmt.Sprintf("sbatch -c %d -J %s %s.sh", j.cpus, j.name, j.name)
	switch rng.Intn(3) {
	case 0:
		j.mem = 4000 // no --mem: the whole node's (CR_Core_Memory, no DefMemPerCPU)
	case 1:
		j.memReq, j.mem = 1000, 1000
		j.submitLine = strings.Replace(j.submitLine, "sbatch ", "sbatch --mem=1000 ", 1)
	default:
		j.memReq, j.mem = 2000, 2000
		j.submitLine = strings.Replace(j.submitLine, "sbatch ", "sbatch --mem=2000 ", 1)
	}
	j.limit = []uint32{30, 60, 240, 1440, dbdInfinite}[rng.Intn(5)]
	j.eligible = submit
	if rng.Intn(10) == 0 { // held or waiting for a dependency a while
		j.eligible += 60 + rng.Int63n(3600)
	}
	j.start = j.eligible + int64(rng.ExpFloat64()*120)
	if j.start-j.eligible > 3600 {
		j.start = j.eligible + 3600
	}
	j.flags = 20 // SLURMDB_JOB_FLAG_SCHED | SLURMDB_JOB_FLAG_START_R
	if j.start-j.eligible > 30 && rng.Intn(2) == 0 {
		j.flags = 24 // started by the backfill scheduler
	}
	j.prio = uint32(4294901759 - uint64(id)%60000)
	// Run times: log-uniform from 5 s to 4 h, within the limit.
	maxRun := 4 * 3600.0
	if j.limit != dbdInfinite {
		maxRun = math.Min(maxRun, float64(j.limit)*60)
	}
	run := int64(math.Exp(math.Log(5) + rng.Float64()*(math.Log(maxRun)-math.Log(5))))
	batch := dbdStep{id: dbdBatchStep, name: "batch", tasks: 1, cpus: j.cpus, mem: j.mem, killUID: -1}
	switch p := rng.Intn(100); {
	case p < 80:
		j.state, batch.state = stCompleted, stCompleted
	case p < 90:
		j.state, batch.state = stFailed, stFailed
		code := []uint32{1, 1, 2, 3, 127, 137}[rng.Intn(6)]
		j.exitCode, batch.exitCode = code<<8, code<<8
	case p < 96:
		j.state, batch.state = stCancelled, stCancelled
		j.exitCode, batch.exitCode = 15, 15 // SIGTERM: 0:15
		j.killUID, batch.killUID = int64(u.UID), int64(u.UID)
	default:
		if j.limit == dbdInfinite {
			j.limit = 60
		}
		run = int64(j.limit)*60 + 1 + rng.Int63n(30)
		j.state, batch.state = stTimeout, stCancelled
		batch.exitCode = 15
	}
	j.end = j.start + run
	batch.start, batch.end = j.start, j.end
	if j.state == stCompleted && rng.Intn(4) == 0 { // an srun step
		s := dbdStep{id: 0, name: j.name, tasks: j.cpus, dist: 2, cpus: j.cpus, mem: j.mem, killUID: -1,
			state: stCompleted, submitLine: "srun ./" + j.name, freqMin: dbdNoVal, freqMax: dbdNoVal, freqG: dbdNoVal}
		s.start = j.start + min(run/10, 5)
		s.end = s.start + (j.end-s.start)*9/10
		s.fillUsage(rng)
		j.steps = append(j.steps, s)
	}
	batch.fillUsage(rng)
	j.steps = append([]dbdStep{batch}, j.steps...)
	return j
}

// fillUsage: CPU time and memory, as jobacct_gather/linux reports them.
func (s *dbdStep) fillUsage(rng *rand.Rand) {
	wall := float64(s.end - s.start)
	cpu := wall * float64(s.cpus) * (0.2 + 0.75*rng.Float64())
	if s.id == dbdBatchStep && s.tasks == 1 && rng.Intn(2) == 0 {
		cpu = wall * 0.01 // a batch script that waits on srun
	}
	user := cpu * 0.95
	s.userSec, s.userUsec = int64(user), int(1e6*(user-math.Floor(user)))
	sys := cpu * 0.05
	s.sysSec, s.sysUsec = int64(sys), int(1e6*(sys-math.Floor(sys)))
	s.rss = uint64(float64(s.mem) * (0.05 + 0.9*rng.Float64()) * (1 << 20))
	s.vmem = s.rss + uint64(rng.Int63n(1<<30))
}

// row writes a parenthesized row of SQL values.
type row struct {
	b *strings.Builder
	n int
}

func (r *row) sep() {
	if r.n == 0 {
		r.b.WriteByte('(')
	} else {
		r.b.WriteByte(',')
	}
	r.n++
}

func (r *row) num(v any) {
	r.sep()
	fmt.Fprint(r.b, v)
}

func (r *row) str(v string) {
	r.sep()
	r.b.WriteByte('\'')
	for _, c := range []byte(v) {
		if c == '\'' || c == '\\' {
			r.b.WriteByte('\\')
		}
		r.b.WriteByte(c)
	}
	r.b.WriteByte('\'')
}

// strOrNull: "" is NULL.
func (r *row) strOrNull(v string) {
	if v == "" {
		r.sep()
		r.b.WriteString("NULL")
		return
	}
	r.str(v)
}

// intOrNull: a negative value is NULL.
func (r *row) intOrNull(v int64) {
	if v < 0 {
		r.sep()
		r.b.WriteString("NULL")
		return
	}
	r.num(v)
}

func (r *row) end() { r.b.WriteByte(')') }

func (j *dbdJob) values(b *strings.Builder) {
	u := j.user
	r := row{b: b}
	r.num(j.end) // mod_time
	r.num(0)     // deleted
	r.strOrNull(u.Account)
	r.num(0)  // array_max_tasks
	r.num(0)  // array_task_pending
	r.str("") // constraints
	r.num(j.cpus)
	r.num(0) // derived_ec
	r.num(j.exitCode)
	r.num(j.flags)
	r.str(j.name)
	r.num(u.Assoc)
	r.num(0)                // id_array_job
	r.num(uint32(dbdNoVal)) // id_array_task
	r.num(j.id)
	r.num(1) // id_qos: normal
	r.num(0) // id_resv
	r.num(0) // id_wckey
	r.num(u.UID)
	r.num(u.GID)
	r.num(0)                // het_job_id
	r.num(uint32(dbdNoVal)) // het_job_offset
	r.intOrNull(j.killUID)
	r.num(0)  // state_reason_prev
	r.str("") // mcs_label
	r.num(j.memReq)
	r.str("n1")
	r.num(1)   // nodes_alloc
	r.str("0") // node_inx
	r.str("batch")
	r.num(j.prio)
	r.num(0) // restart_cnt
	r.num(j.state)
	r.num(j.limit)
	r.num(j.submit)
	r.num(j.eligible)
	r.num(j.start)
	r.num(j.end)
	r.num(0)  // time_suspended
	r.str("") // gres_used
	r.str("") // wckey
	r.str(j.workDir)
	out := j.workDir + "/slurm-" + strconv.FormatUint(uint64(j.id), 10) + ".out"
	r.str(out) // std_err: as std_out without -e
	r.str("/dev/null")
	r.str(out)
	r.str(j.submitLine)
	r.str(fmt.Sprintf("1=%d,2=%d,3=%s,4=1,5=%d", j.cpus, j.mem, dbdNoVal64, j.cpus))
	r.str(fmt.Sprintf("1=%d,2=%d,4=1,5=%d", j.cpus, j.mem, j.cpus))
	r.end()
}

func (st *dbdStep) values(b *strings.Builder, inx uint64) {
	r := row{b: b}
	r.num(inx)
	r.num(0) // deleted
	r.num(st.exitCode)
	r.num(st.id)
	r.num(uint32(dbdNoVal)) // step_het_comp
	r.intOrNull(st.killUID)
	r.str("n1")
	r.num(1)   // nodes_alloc
	r.str("0") // node_inx
	r.num(st.state)
	r.str(st.name)
	r.num(st.tasks)
	r.num(st.dist)
	r.num(st.start)
	r.num(st.end)
	r.num(0) // time_suspended
	r.num(st.userSec)
	r.num(st.userUsec)
	r.num(st.sysSec)
	r.num(st.sysUsec)
	r.num(0) // act_cpufreq
	r.num(0) // consumed_energy
	r.num(st.freqMin)
	r.num(st.freqMax)
	r.num(st.freqG)
	r.strOrNull(st.submitLine)
	r.str(fmt.Sprintf("1=%d,2=%d,4=1", st.cpus, st.mem))
	// TRES usage (1 cpu ms, 2 memory bytes, 6 fs/disk bytes, 7 vmem
	// bytes, 8 pages), by task and node as jobacct_gather/linux.
	tasks := int64(max(st.tasks, 1))
	cpuMS := (st.userSec+st.sysSec)*1000 + int64(st.userUsec+st.sysUsec)/1000
	rss, vmem, disk := int64(st.rss), int64(st.vmem), int64(st.rss/3)
	ave := fmt.Sprintf("1=%d,2=%d,6=%d,7=%d,8=0", cpuMS/tasks, rss/tasks, disk/tasks, vmem/tasks)
	peak := fmt.Sprintf("1=%d,2=%d,6=%d,7=%d,8=0", cpuMS/tasks, rss, disk, vmem)
	tot := fmt.Sprintf("1=%d,2=%d,6=%d,7=%d,8=0", cpuMS, rss, disk, vmem)
	ids := "1=0,2=0,6=0,7=0,8=0"
	out := fmt.Sprintf("6=%d", disk/4)
	// in: ave max max_taskid max_nodeid min min_taskid min_nodeid tot; out: the same.
	for _, v := range []string{ave, peak, ids, ids, ave, ids, ids, tot, out, out, "6=0", "6=0", out, "6=0", "6=0", out} {
		r.str(v)
	}
	r.end()
}
