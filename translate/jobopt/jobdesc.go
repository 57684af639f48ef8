package jobopt

import (
	"strings"

	"github.com/lablup/slurm-frontend/codec"
)

// newDesc is slurm_init_job_desc_msg for the release.
func (p *parser) newDesc() codec.JobDesc {
	d := codec.NewJobDesc()
	if p.rel == r22 {
		d.UserID, d.GroupID = codec.NoVal, codec.NoVal
		// The select plugin id the 22.05 client packs: its SelectType
		// (select/cons_tres here).
		d.SelectPluginID = codec.SELECT_PLUGIN_CONS_TRES
	}
	if p.in.Version < codec.V25_11 {
		// Before 25.11 only the job id is on the wire.
		d.StepID = codec.JobStepID{JobID: codec.NoVal}
	}
	return d
}

func (j *cstr) into(dst *string, d *codec.JobDesc, f codec.JDStr) {
	if !j.ok {
		return
	}
	*dst = j.s
	if j.s == "" {
		d.SetEmptyStr(f)
	}
}

// createJobDesc is slurm_opt_create_job_desc.
func (p *parser) createJobDesc(setDefaults bool) codec.JobDesc {
	o := &p.o
	d := p.newDesc()
	o.account.into(&d.Account, &d, codec.JDAccount)
	o.acctgFreq.into(&d.AcctgFreq, &d, codec.JDAcctgFreq)
	d.BeginTime = o.begin
	d.Bitflags |= o.jobFlags
	o.bb.into(&d.BurstBuffer, &d, codec.JDBurstBuffer)
	o.clusters.into(&d.Clusters, &d, codec.JDClusters)
	o.cConstraint.into(&d.ClusterFeatures, &d, codec.JDClusterFeatures)
	o.comment.into(&d.Comment, &d, codec.JDComment)
	o.context.into(&d.ReqContext, &d, codec.JDReqContext)
	if setDefaults || p.isset("contiguous") {
		d.Contiguous = uint16(b2i(o.contiguous))
	}
	if p.rel >= r24 {
		o.container.into(&d.Container, &d, codec.JDContainer)
		o.containerID.into(&d.ContainerID, &d, codec.JDContainerID)
	}
	if p.rel >= r26 {
		o.containerType.into(&d.ContainerType, &d, codec.JDContainerType)
	}
	if o.coreSpec != int(codec.NoVal16) {
		d.CoreSpec = uint16(o.coreSpec)
	}
	d.CPUFreqMin, d.CPUFreqMax, d.CPUFreqGov = o.cpuFreqMin, o.cpuFreqMax, o.cpuFreqGov
	gresPre := "gres/gpu"
	if p.rel == r22 {
		gresPre = "gres:gpu"
	}
	if o.cpusPerGPU != 0 {
		d.CPUsPerTRES = gresPre + ":" + itoa(o.cpusPerGPU)
	}
	d.Deadline = o.deadline
	if o.delayBoot != codec.NoVal {
		d.DelayBoot = o.delayBoot
	}
	o.dependency.into(&d.Dependency, &d, codec.JDDependency)
	o.extra.into(&d.Extra, &d, codec.JDExtra)
	o.exclude.into(&d.ExcNodes, &d, codec.JDExcNodes)
	o.constraint.into(&d.Features, &d, codec.JDFeatures)
	o.prefer.into(&d.Prefer, &d, codec.JDPrefer)
	d.GroupID = o.gid
	if o.immediate == 1 {
		d.Immediate = 1
	}
	if o.noKill {
		d.KillOnNodeFail = 0
	}
	o.licenses.into(&d.Licenses, &d, codec.JDLicenses)
	if p.rel >= r26 && o.resources.ok {
		if d.Licenses != "" || d.StrGiven(codec.JDLicenses, d.Licenses) {
			d.Licenses += "," + o.resources.s
		} else {
			d.Licenses = o.resources.s
		}
	}
	if setDefaults || p.isset("mail_type") {
		d.MailType = o.mailType
	}
	o.mailUser.into(&d.MailUser, &d, codec.JDMailUser)
	o.mcsLabel.into(&d.MCSLabel, &d, codec.JDMCSLabel)
	o.memBind.into(&d.MemBind, &d, codec.JDMemBind)
	d.MemBindType = o.memBindType
	if o.memPerGPU != codec.NoVal64 {
		d.MemPerTRES = gresPre + ":" + formatUint(o.memPerGPU)
	}
	if setDefaults {
		o.jobName.into(&d.Name, &d, codec.JDName)
	}
	o.network.into(&d.Network, &d, codec.JDNetwork)
	if o.nice != noValInt {
		d.Nice = uint32(niceOffset + int64(o.nice))
	}
	if o.ntasksSet {
		d.Bitflags |= jobNtasksSet
		d.NumTasks = uint32(int32(o.ntasks))
	}
	if o.openMode != 0 {
		d.OpenMode = o.openMode
	}
	estimated := o.ntasks
	if p.rel >= r24 && o.ntasksPerNode > 0 && !o.ntasksSet && (o.minNodes == o.maxNodes || o.maxNodes == 0) {
		estimated = o.minNodes * o.ntasksPerNode
	}
	switch {
	case o.overcommit:
		if setDefaults || o.minNodes > 0 {
			d.MinCPUs = uint32(int32(max(o.minNodes, 1)))
		}
		d.Overcommit = 1
	case o.cpusSet:
		d.MinCPUs = uint32(int32(estimated * o.cpusPerTask))
	case o.nodesSet && o.minNodes == 0:
		d.MinCPUs = 0
	case setDefaults:
		d.MinCPUs = uint32(int32(estimated))
	}
	o.partition.into(&d.Partition, &d, codec.JDPartition)
	if o.planeSize != codec.NoVal {
		d.PlaneSize = uint16(o.planeSize)
	}
	if p.isset("hold") {
		if o.hold {
			d.Priority = 0
		} else {
			d.Priority = codec.Infinite
		}
	} else if o.priority != 0 {
		d.Priority = o.priority
	}
	d.Profile = o.profile
	if p.rel == r22 {
		d.PowerFlags = o.power
	}
	o.qos.into(&d.QOS, &d, codec.JDQOS)
	if o.reboot {
		d.Reboot = 1
	}
	if o.nodelist.ok {
		hl, ok := hostlistCreate(o.nodelist.s)
		if !ok {
			p.errorf("Invalid node list specified")
			p.exit(p.errExit)
		}
		o.nodelist = some(hostlistRanged(hl))
		if p.rel == r22 || o.distribution&distBase != distArbitrary {
			hl = uniq(hl)
		}
		d.ReqNodes = hostlistRanged(hl)
		if d.ReqNodes == "" {
			d.SetEmptyStr(codec.JDReqNodes)
		}
	}
	if o.distribution&distBase == distArbitrary && !d.StrGiven(codec.JDReqNodes, d.ReqNodes) {
		p.errorf("With Arbitrary distribution you need to specify a nodelist or hostfile with the -w option")
		p.exit(p.errExit)
	}
	o.reservation.into(&d.Reservation, &d, codec.JDReservation)
	if p.rel >= r24 {
		d.ResvPortCnt = codec.NoVal16
		if o.resvPortCnt != noValInt {
			d.ResvPortCnt = uint16(o.resvPortCnt)
		}
		d.SegmentSize = o.segmentSize
		d.OOMKillStep = o.oomKillStep
	}
	if o.shared != codec.NoVal16 {
		d.Shared = o.shared
	}
	if o.submitLine != "" {
		d.SubmitLine = o.submitLine
	}
	d.TaskDist = o.distribution
	if o.timeLimit != noValInt {
		d.TimeLimit = uint32(int32(o.timeLimit))
	}
	if o.timeMin != noValInt {
		d.TimeMin = uint32(int32(o.timeMin))
	}
	o.tresBind.into(&d.TRESBind, &d, codec.JDTRESBind)
	o.tresFreq.into(&d.TRESFreq, &d, codec.JDTRESFreq)
	tpj := xfmtTRES(null, gresPre, o.gpus)
	tpn := xfmtTRES(null, gresPre, o.gpusPerNode)
	if o.gres.ok && !strings.EqualFold(o.gres.s, "NONE") {
		if tpn.ok {
			tpn = some(tpn.s + "," + o.gres.s)
		} else {
			tpn = o.gres
		}
	}
	tps := xfmtTRES(null, gresPre, o.gpusPerSocket)
	var tpt cstr
	if p.rel == r22 {
		tpt = xfmtTRES(null, gresPre, o.gpusPerTask)
	} else {
		tpt = o.tresPerTask
	}
	tpj.into(&d.TRESPerJob, &d, codec.JDTRESPerJob)
	tpn.into(&d.TRESPerNode, &d, codec.JDTRESPerNode)
	tps.into(&d.TRESPerSocket, &d, codec.JDTRESPerSocket)
	tpt.into(&d.TRESPerTask, &d, codec.JDTRESPerTask)
	d.UserID = o.uid
	d.WarnFlags, d.WarnSignal, d.WarnTime = o.warnFlags, o.warnSignal, o.warnTime
	if setDefaults || p.isset("chdir") {
		o.chdir.into(&d.WorkDir, &d, codec.JDWorkDir)
	}
	if o.cpusSet {
		d.Bitflags |= jobCPUsSet
		d.CPUsPerTask = uint16(o.cpusPerTask)
	}
	switch {
	case o.nodesSet:
		d.MinNodes = uint32(int32(o.minNodes))
		if o.maxNodes != 0 {
			d.MaxNodes = uint32(int32(o.maxNodes))
			if p.rel >= r24 {
				o.jobSizeStr.into(&d.JobSizeStr, &d, codec.JDJobSizeStr)
			}
		}
	case o.ntasksSet && o.ntasks == 0:
		d.MinNodes = 0
	case p.rel >= r24 && o.ntasksSet && o.ntasksPerNode != noValInt:
		n := int(d.NumTasks)
		d.MinNodes = uint32(n/o.ntasksPerNode + b2i(n%o.ntasksPerNode != 0))
	}
	if o.socketsPerNode != noValInt {
		d.SocketsPerNode = uint16(o.socketsPerNode)
	}
	if o.coresPerSocket != noValInt {
		d.CoresPerSocket = uint16(o.coresPerSocket)
	}
	if o.threadsPerCore != noValInt {
		d.ThreadsPerCore = uint16(o.threadsPerCore)
	}
	if o.ntasksPerNode != noValInt {
		d.NtasksPerNode = uint16(o.ntasksPerNode)
	}
	if o.ntasksPerSocket != noValInt {
		d.NtasksPerSocket = uint16(o.ntasksPerSocket)
	}
	if o.ntasksPerCore != noValInt {
		d.NtasksPerCore = uint16(o.ntasksPerCore)
	}
	if o.ntasksPerTRES != noValInt {
		d.NtasksPerTRES = uint16(o.ntasksPerTRES)
	} else if o.ntasksPerGPU != noValInt {
		d.NtasksPerTRES = uint16(o.ntasksPerGPU)
	}
	if o.pnMinCPUs > -1 {
		d.PnMinCPUs = uint16(o.pnMinCPUs)
	}
	if o.pnMinMemory != codec.NoVal64 {
		d.PnMinMemory = o.pnMinMemory
	} else if o.memPerCPU != codec.NoVal64 {
		d.PnMinMemory = o.memPerCPU | codec.MemPerCPU
	}
	if o.pnMinTmpDisk != codec.NoVal64 {
		d.PnMinTmpDisk = uint32(o.pnMinTmpDisk)
	}
	if o.reqSwitch >= 0 {
		d.ReqSwitch = uint32(o.reqSwitch)
	}
	if o.wait4switch >= 0 {
		d.Wait4Switch = uint32(o.wait4switch)
	}
	o.wckey.into(&d.Wckey, &d, codec.JDWckey)
	d.X11 = o.x11
	if p.rel >= r26 {
		d.MemUpdateMargin, d.MemUpdateDelay = o.memUpdateMargin, o.memUpdateDelay
	}
	if !o.clusters.ok && p.in.GresTypes != nil {
		if rc := p.gresValidate(&d); rc != 0 {
			p.errorf("%s", slurmStrerror(rc))
			p.exit(p.errExit)
		}
	}
	return d
}

func formatUint(v uint64) string {
	var b []byte
	if v == 0 {
		return "0"
	}
	for v > 0 {
		b = append([]byte{byte('0' + v%10)}, b...)
		v /= 10
	}
	return string(b)
}

func slurmStrerror(rc int) string {
	switch rc {
	case codec.ESLURM_INVALID_GRES:
		return "Invalid generic resource (gres) specification"
	case 2115: // ESLURM_INVALID_TRES
		return "Invalid TRES specification"
	case 2122: // ESLURM_INVALID_GRES_TYPE
		return "Invalid GRES specification (with and without type identification)"
	}
	return "Unspecified error"
}

// packFlags sets the bits _pack_job_desc_msg adds for a NULL account,
// partition, QOS or WCKey, so Jobs read as the server receives them.
func packFlags(d *codec.JobDesc) {
	if !d.StrGiven(codec.JDAccount, d.Account) {
		d.Bitflags |= codec.UseDefaultAcct
	}
	if !d.StrGiven(codec.JDPartition, d.Partition) {
		d.Bitflags |= codec.UseDefaultPart
	}
	if !d.StrGiven(codec.JDQOS, d.QOS) {
		d.Bitflags |= codec.UseDefaultQOS
	}
	if !d.StrGiven(codec.JDWckey, d.Wckey) {
		d.Bitflags |= codec.UseDefaultWckey
	}
}

// setEnvFromOpts is set_env_from_opts: into the first component's
// environment (comp -1 when not a het job).
func (p *parser) setEnvFromOpts(env *envList, comp int) {
	o := &p.o
	if o.cpusPerGPU != 0 {
		env.setHet("SLURM_CPUS_PER_GPU", comp, itoa(o.cpusPerGPU))
	}
	if o.gpus.ok {
		env.setHet("SLURM_GPUS", comp, o.gpus.s)
	}
	if p.rel == r22 && o.gpuBind.ok {
		env.setHet("SLURM_GPU_BIND", comp, o.gpuBind.s)
	}
	if o.gpuFreq.ok {
		env.setHet("SLURM_GPU_FREQ", comp, o.gpuFreq.s)
	}
	if o.gpusPerNode.ok {
		env.setHet("SLURM_GPUS_PER_NODE", comp, o.gpusPerNode.s)
	}
	if o.gpusPerSocket.ok {
		env.setHet("SLURM_GPUS_PER_SOCKET", comp, o.gpusPerSocket.s)
	}
	if p.rel == r22 && o.gpusPerTask.ok {
		env.setHet("SLURM_GPUS_PER_TASK", comp, o.gpusPerTask.s)
	}
	if o.memPerGPU != codec.NoVal64 {
		env.setHet("SLURM_MEM_PER_GPU", comp, formatUint(o.memPerGPU))
	}
	if p.rel >= r24 {
		if o.tresPerTask.ok {
			env.setHet("SLURM_TRES_PER_TASK", comp, o.tresPerTask.s)
		}
		if o.tresBind.ok {
			env.setHet("SLURM_TRES_BIND", comp, o.tresBind.s)
		}
		env.append("OMPI_MCA_plm_slurm_args", "--external-launcher")
		env.append("PRTE_MCA_plm_slurm_args", "--external-launcher")
		for _, h := range [][2]string{{"HYDRA_BOOTSTRAP", "HYDRA_LAUNCHER_EXTRA_ARGS"}, {"I_MPI_HYDRA_BOOTSTRAP", "I_MPI_HYDRA_BOOTSTRAP_EXEC_EXTRA_ARGS"}} {
			b, set := p.env[h[0]]
			if !set || b == "slurm" {
				env.append(h[0], "slurm")
				env.append(h[1], "--external-launcher")
			}
		}
	}
}

// sbatchFill is sbatch's _fill_job_desc_from_opts.
func (p *parser) sbatchFill(d *codec.JobDesc) *envList {
	o := &p.o
	if !o.jobName.ok {
		d.Name = "sbatch"
	}
	o.arrayInx.into(&d.ArrayInx, d, codec.JDArrayInx)
	o.batchFeatures.into(&d.BatchFeatures, d, codec.JDBatchFeatures)
	o.container.into(&d.Container, d, codec.JDContainer)
	if p.rel >= r24 {
		d.ContainerID = ""
		o.containerID.into(&d.ContainerID, d, codec.JDContainerID)
	}
	d.WaitAllNodes = o.waitAllNodes
	if p.rel >= r26 && o.requeue != noValInt {
		d.Requeue = uint16(o.requeue)
	}
	if p.rel >= r26 && o.jobFlags&externalJob != 0 {
		return nil
	}
	env := p.jobEnvironment()
	d.Argv = append([]string(nil), o.argv...)
	o.efname.into(&d.StdErr, d, codec.JDStdErr)
	o.ifname.into(&d.StdIn, d, codec.JDStdIn)
	o.ofname.into(&d.StdOut, d, codec.JDStdOut)
	if p.rel < r26 && o.requeue != noValInt {
		d.Requeue = uint16(o.requeue)
	}
	return env
}

// setEnvs is sbatch's set_envs: the per-component variables.
func (p *parser) setEnvs(env *envList, he hetEnv, comp int) {
	if env == nil {
		return
	}
	num := func(name string, v int) {
		if v != noValInt {
			env.setHet(name, comp, itoa(v))
		}
	}
	num("SLURM_CPUS_PER_TASK", he.cpusPerTask)
	if he.dist != "" {
		env.setHet("SLURM_DISTRIBUTION", comp, he.dist)
	}
	if he.memBind != "" {
		env.setHet("SLURM_MEM_BIND", comp, he.memBind)
	}
	if he.memBindSort != "" {
		env.setHet("SLURM_MEM_BIND_SORT", comp, he.memBindSort)
	}
	if he.memBindVerbose != "" {
		env.setHet("SLURM_MEM_BIND_VERBOSE", comp, he.memBindVerbose)
	}
	if he.ntasks != noValInt {
		env.setHet("SLURM_NPROCS", comp, itoa(he.ntasks))
		env.setHet("SLURM_NTASKS", comp, itoa(he.ntasks))
	}
	num("SLURM_NTASKS_PER_CORE", he.ntasksPerCore)
	num("SLURM_NTASKS_PER_GPU", he.ntasksPerGPU)
	num("SLURM_NTASKS_PER_NODE", he.ntasksPerNode)
	num("SLURM_NTASKS_PER_SOCKET", he.ntasksPerSocket)
	num("SLURM_NTASKS_PER_TRES", he.ntasksPerTRES)
	num("SLURM_DIST_PLANESIZE", he.planeSize)
	if he.threadsPer != noValInt && uint16(he.threadsPer) != codec.NoVal16 {
		env.setHet("SLURM_THREADS_PER_CORE", comp, itoa(int(uint16(he.threadsPer))))
	}
}
