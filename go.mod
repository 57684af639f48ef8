module github.com/lablup/slurm-frontend

go 1.26
