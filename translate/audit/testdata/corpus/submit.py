import subprocess
subprocess.run(["sbatch", "--parsable", "-p", "cpu", "job.sh"], check=True)
