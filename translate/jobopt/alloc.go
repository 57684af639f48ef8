package jobopt

// salloc and srun: the allocation request (filled in below).

func (p *parser) salloc() *Result {
	p.errorf("salloc parsing is not implemented yet")
	p.exit(1)
	return nil
}

func (p *parser) srun() *Result {
	p.errorf("srun parsing is not implemented yet")
	p.exit(1)
	return nil
}

// setCPUBind is srun's --cpu-bind (slurm_verify_cpu_bind).
func (p *parser) setCPUBind(arg string) error {
	p.o.cpuBind = some(arg)
	return nil
}

// setSrunOnly handles srun options that stay in srun.
func (p *parser) setSrunOnly(d *optDef, arg *string) error {
	v := ""
	if arg != nil {
		v = *arg
	}
	p.o.srunOther[d.val] = v
	return nil
}
