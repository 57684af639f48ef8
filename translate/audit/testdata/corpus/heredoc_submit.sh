#!/bin/bash
NCPU=${NCPU:-4}
sbatch <<EOT
#!/bin/bash
#SBATCH --time=0-01:00:00
#SBATCH --ntasks=1
#SBATCH --cpus-per-task=$NCPU
#SBATCH --mem-per-cpu=2000
srun ./step
EOT
